/* witness.c: llama.cpp's CPU backend as the lab's external witness for a real model.
 *
 * Question it answers: what tokens and logits does llama.cpp itself produce for a GGUF model
 * under greedy decoding? The lab's own forward pass of the same file is held against this
 * record (tests/data/llamacpp_*.csv), so every setting here is llama.cpp's default except the
 * few a reproducible record must fix, and each one is printed in the record's header.
 *
 * What it does, per prompt of a string file (format in witness_text.h):
 *   - a fresh llama_context (fresh KV cache), n_ctx 512, n_batch 512, n_ubatch 512 (defaults);
 *   - tokenize with add_special=false (the GGUF says add_bos_token=false; no BOS is added)
 *     and parse_special=true (ChatML markers such as <|im_start|> become their ids);
 *   - the whole prompt in ONE llama_decode call, then one call per generated token;
 *   - at each of T steps: the greedy token (argmax over the whole vocabulary, the first index
 *     wins a tie), its logit, the runner-up (the same rule over the other ids) and its logit.
 *   Generation does not stop at an end-of-turn token: every prompt has exactly T steps.
 *
 * Run (built by tools/peers/llamacpp.sh, which also writes witness_build.h):
 *   drift-llama-witness [--model GGUF] [--tokens T] [--threads N] [--out FILE.csv]
 *                       [--dump-logits FILE.bin] [--logits-csv FILE.csv]
 *                       [--dump-tensors DIR] [--verbose] PROMPTS.txt
 *   drift-llama-witness --tokenize STRINGS.txt [--model GGUF] [--out FILE.tsv]
 * What to look for: the header says what flash attention resolved to and which compile flags
 * ggml's CPU backend was built with; two records of the same binary must agree bit for bit.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "ggml.h"
#include "llama.h"

#include "digest.h"
#include "witness_build.h"
#include "witness_dump.h"
#include "witness_text.h"

#define WITNESS_DEFAULT_MODEL "models/SmolLM2-135M-Instruct.Q4_1.gguf"
#define WITNESS_FORMAT_VERSION 1

typedef struct {
    const char *model;
    const char *prompts;
    const char *tokenize;
    const char *out;
    const char *dump_logits;
    const char *logits_csv;
    const char *dump_tensors;
    int tokens;
    int threads;
    int verbose;
    int argc;
    char **argv;
} options;

typedef struct {
    int32_t token, second;
    float logit, second_logit;
} step_rec;

typedef struct {
    llama_token *ids;
    int n_ids;
    step_rec *steps;
    char *text; /* the generated pieces, concatenated */
    size_t text_len;
} prompt_rec;

/* What llama.cpp said while resolving its "auto" settings (read from its log). */
static struct {
    int verbose;
    int fa_enabled; /* 1 enabled, 0 disabled, -1 not reported */
} g_log = {0, -1};

static void die(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("drift-llama-witness: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(code);
}

static void on_log(enum ggml_log_level level, const char *text, void *user)
{
    (void)user;
    if (strstr(text, "Flash Attention enabled")) g_log.fa_enabled = 1;
    if (strstr(text, "Flash Attention not supported")) g_log.fa_enabled = 0;
    if (g_log.verbose || level == GGML_LOG_LEVEL_WARN || level == GGML_LOG_LEVEL_ERROR) fputs(text, stderr);
}

static void usage(FILE *f)
{
    fprintf(f,
        "usage: drift-llama-witness [options] PROMPTS.txt\n"
        "       drift-llama-witness --tokenize STRINGS.txt [--model GGUF] [--out FILE.tsv]\n"
        "  --model GGUF         model file (default " WITNESS_DEFAULT_MODEL ")\n"
        "  --tokens T           greedy steps per prompt, 1..4096 (default 64)\n"
        "  --threads N          llama.cpp threads (n_threads = n_threads_batch), 1..256 (default 1)\n"
        "  --out FILE           CSV record (default: stdout)\n"
        "  --dump-logits FILE   every step's full logits vector, binary (see tools/peers/README.md)\n"
        "  --logits-csv FILE    every step's full logits vector as a tidy CSV (large)\n"
        "  --dump-tensors DIR   every graph node of the first prompt's first two decode calls\n"
        "  --tokenize FILE      tokenizer record (TSV) of the strings in FILE instead of decoding\n"
        "  --verbose            pass llama.cpp's log through to stderr\n"
        "built: variant %s, llama.cpp %s (llama-cpp-python %s)\n",
        WITNESS_VARIANT, WITNESS_LLAMA_COMMIT, WITNESS_LLAMA_CPP_PYTHON);
}

static int parse_int(const char *opt, const char *s, int lo, int hi)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || end == s || v < lo || v > hi)
        die(2, "%s: expected an integer in %d..%d, found '%s'", opt, lo, hi, s);
    return (int)v;
}

static options parse_options(int argc, char **argv)
{
    options o = {WITNESS_DEFAULT_MODEL, NULL, NULL, NULL, NULL, NULL, NULL, 64, 1, 0, argc, argv};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char **dst = NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            exit(0);
        } else if (!strcmp(a, "--verbose")) {
            o.verbose = 1;
            continue;
        } else if (!strcmp(a, "--model"))
            dst = &o.model;
        else if (!strcmp(a, "--out"))
            dst = &o.out;
        else if (!strcmp(a, "--dump-logits"))
            dst = &o.dump_logits;
        else if (!strcmp(a, "--logits-csv"))
            dst = &o.logits_csv;
        else if (!strcmp(a, "--dump-tensors"))
            dst = &o.dump_tensors;
        else if (!strcmp(a, "--tokenize"))
            dst = &o.tokenize;
        else if (!strcmp(a, "--tokens") || !strcmp(a, "--threads")) {
            if (i + 1 >= argc) die(2, "%s: expected a value, found the end of the command line", a);
            if (!strcmp(a, "--tokens"))
                o.tokens = parse_int(a, argv[++i], 1, 4096);
            else
                o.threads = parse_int(a, argv[++i], 1, 256);
            continue;
        } else if (a[0] == '-' && a[1]) {
            die(2,
                "option: expected one of --model --tokens --threads --out --dump-logits --logits-csv "
                "--dump-tensors --tokenize --verbose --help, found '%s'",
                a);
        } else {
            if (o.prompts) die(2, "arguments: expected one prompt file, found a second one '%s'", a);
            o.prompts = a;
            continue;
        }
        if (i + 1 >= argc) die(2, "%s: expected a value, found the end of the command line", a);
        *dst = argv[++i];
    }
    if (!o.tokenize && !o.prompts) die(2, "arguments: expected a prompt file (or --tokenize FILE), found none");
    if (o.tokenize && o.prompts)
        die(2, "arguments: --tokenize takes its strings from its own file, found also '%s'", o.prompts);
    return o;
}

/* Writes to PATH.tmp and renames on success, so a failed run leaves no half record. */
typedef struct {
    FILE *f;
    char tmp[4096];
    const char *path;
} out_file;

static void out_open(out_file *o, const char *path, const char *mode)
{
    o->path = path;
    if (!path || !strcmp(path, "-")) {
        o->f = stdout;
        o->tmp[0] = '\0';
        return;
    }
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        /* a device (/dev/null), FIFO or terminal is written in place: renaming a file onto it
         * would replace the device node with a regular file */
        o->f = fopen(path, mode);
        o->tmp[0] = '\0';
        if (!o->f) die(1, "%s: cannot open for writing: %s", path, strerror(errno));
        return;
    }
    if (strlen(path) + 5 > sizeof o->tmp) die(2, "--out: expected a path under %zu bytes", sizeof o->tmp - 5);
    snprintf(o->tmp, sizeof o->tmp, "%s.tmp", path);
    o->f = fopen(o->tmp, mode);
    if (!o->f) die(1, "%s: cannot open for writing: %s", o->tmp, strerror(errno));
}

static void out_close(out_file *o)
{
    if (o->f == stdout) {
        if (fflush(stdout) != 0) die(1, "stdout: write error");
        return;
    }
    if (ferror(o->f) | (fclose(o->f) != 0)) die(1, "%s: write error", o->tmp[0] ? o->tmp : o->path);
    if (!o->tmp[0]) return;
    if (rename(o->tmp, o->path) != 0) die(1, "%s: cannot rename to %s: %s", o->tmp, o->path, strerror(errno));
}

/* The file's SHA-256 in hex, or "unreadable" (the record still says which file it meant). */
static void file_sha256(char hex[65], const char *path)
{
    long long size;
    if (drift_sha256_file(hex, &size, path) != 0) snprintf(hex, 65, "unreadable");
}

static void iso_date(char *buf, size_t n)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static struct llama_model *load_model(const char *path, int vocab_only)
{
    struct stat st;
    if (stat(path, &st) != 0) die(2, "--model: expected a readable GGUF file, found no file at %s", path);
    struct llama_model_params mp = llama_model_default_params();
    mp.vocab_only = vocab_only != 0;
    struct llama_model *m = llama_model_load_from_file(path, mp);
    if (!m) die(1, "%s: llama.cpp could not load the model (run with --verbose for its log)", path);
    return m;
}

static int tokenize(const struct llama_vocab *vocab, const char *text, size_t len, llama_token **out)
{
    if (len > INT32_MAX / 2) die(2, "string: expected under 1 GiB, found %zu bytes", len);
    int cap = (int)len + 8;
    llama_token *ids = malloc((size_t)cap * sizeof *ids);
    if (!ids) die(1, "out of memory");
    int n = llama_tokenize(vocab, text, (int32_t)len, ids, cap, false, true);
    if (n < 0 && n != INT32_MIN) {
        cap = -n;
        llama_token *nids = realloc(ids, (size_t)cap * sizeof *ids);
        if (!nids) die(1, "out of memory");
        ids = nids;
        n = llama_tokenize(vocab, text, (int32_t)len, ids, cap, false, true);
    }
    if (n < 0) die(1, "llama_tokenize failed (%d)", n);
    *out = ids;
    return n;
}

/* The provenance lines every record starts with. */
static void write_provenance(FILE *f, const options *o, const char *model_sha, const char *input, const char *input_sha)
{
    char date[32];
    iso_date(date, sizeof date);
    fprintf(f, "# witness: drift-llama-witness (tools/peers/witness.c), format %d\n", WITNESS_FORMAT_VERSION);
    fprintf(f, "# llama_cpp_python: %s (PyPI sdist, sha256 %s)\n", WITNESS_LLAMA_CPP_PYTHON, WITNESS_SDIST_SHA256);
    fprintf(f, "# llama_cpp_commit: %s (%s)\n", WITNESS_LLAMA_COMMIT, WITNESS_LLAMA_COMMIT_DATE);
    fprintf(f, "# ggml: %s (commit %s)\n", ggml_version(), ggml_commit());
    fprintf(f, "# variant: %s\n", WITNESS_VARIANT);
    fprintf(f, "# cmake_options: %s\n", WITNESS_CMAKE_OPTIONS);
    fprintf(f, "# compiler: %s\n", WITNESS_COMPILER);
    fprintf(f, "# compile_flags_ggml_cpu_c: %s\n", WITNESS_CFLAGS_C);
    fprintf(f, "# compile_flags_ggml_cpu_cxx: %s\n", WITNESS_CFLAGS_CXX);
    fprintf(f, "# system_info: %s\n", llama_print_system_info());
    fprintf(f, "# model: %s (sha256 %s)\n", o->model, model_sha);
    fprintf(f, "# input: %s (sha256 %s)\n", input, input_sha);
    fprintf(f, "# tokenize: add_special=false parse_special=true\n");
    fprintf(f, "# date: %s\n", date);
    fprintf(f, "# argv:");
    for (int i = 0; i < o->argc; i++) fprintf(f, " %s", o->argv[i]);
    fputc('\n', f);
}

static int run_tokenize(const options *o)
{
    char err[512], model_sha[65], in_sha[65];
    witness_string *s;
    int n;
    if (witness_read_strings(&s, &n, o->tokenize, err, sizeof err) != 0) die(2, "%s", err);
    if (n == 0) die(2, "%s: expected at least one string, found none", o->tokenize);
    file_sha256(model_sha, o->model);
    file_sha256(in_sha, o->tokenize);
    struct llama_model *model = load_model(o->model, 1);
    const struct llama_vocab *vocab = llama_model_get_vocab(model);
    out_file out;
    out_open(&out, o->out, "w");
    FILE *f = out.f;
    fprintf(f, "# tokenizer record: llama.cpp's tokenizer (llama_tokenize) on each string of the input\n");
    write_provenance(f, o, model_sha, o->tokenize, in_sha);
    fprintf(f, "# n_vocab: %d\n", llama_vocab_n_tokens(vocab));
    fprintf(f, "# columns: text = the string, escaped: \\n newline, \\t tab, \\r carriage return, \\\\ backslash,\n");
    fprintf(f, "#   \\xHH any other control byte, invalid UTF-8 byte or a leading '#'; all else literal UTF-8,\n");
    fprintf(f, "#   leading/trailing/repeated spaces included;\n");
    fprintf(f, "#   n_tokens = number of ids; ids = the token ids, space-separated\n");
    fprintf(f, "text\tn_tokens\tids\n");
    for (int i = 0; i < n; i++) {
        llama_token *ids;
        int k = tokenize(vocab, s[i].text, s[i].len, &ids);
        witness_escape_field(f, s[i].text, s[i].len);
        fprintf(f, "\t%d\t", k);
        for (int j = 0; j < k; j++) fprintf(f, j ? " %d" : "%d", ids[j]);
        fputc('\n', f);
        free(ids);
    }
    out_close(&out);
    fprintf(stderr, "drift-llama-witness: %d strings tokenized into %s\n", n, o->out ? o->out : "stdout");
    witness_free_strings(s, n);
    llama_model_free(model);
    return 0;
}

static void top2(const float *v, int n, step_rec *r, int prompt, int step)
{
    int best = 0;
    for (int i = 0; i < n; i++) {
        if (isnan(v[i])) die(1, "prompt %d step %d: logit of token %d is NaN", prompt, step, i);
        if (v[i] > v[best]) best = i;
    }
    int second = best == 0 ? 1 : 0;
    for (int i = 0; i < n; i++)
        if (i != best && v[i] > v[second]) second = i;
    r->token = best;
    r->logit = v[best];
    r->second = second;
    r->second_logit = v[second];
}

static void append_piece(prompt_rec *p, const struct llama_vocab *vocab, llama_token t)
{
    char buf[256];
    int n = llama_token_to_piece(vocab, t, buf, sizeof buf, 0, true);
    if (n < 0) n = 0; /* a piece over 256 bytes does not occur in this vocabulary; the text is for people */
    char *nt = realloc(p->text, p->text_len + (size_t)n + 1);
    if (!nt) die(1, "out of memory");
    p->text = nt;
    memcpy(p->text + p->text_len, buf, (size_t)n);
    p->text_len += (size_t)n;
    p->text[p->text_len] = '\0';
}

static void decode_or_die(struct llama_context *ctx, llama_token *ids, int n, int prompt, int call)
{
    int rc = llama_decode(ctx, llama_batch_get_one(ids, n));
    if (rc != 0) die(1, "prompt %d decode call %d (%d tokens): llama_decode returned %d", prompt, call, n, rc);
}

static void write_hexdec(FILE *f, float v) { fprintf(f, "%a,%.9g", (double)v, (double)v); }

static int run_decode(const options *o)
{
    char err[512], model_sha[65], in_sha[65];
    witness_string *s;
    int n;
    if (witness_read_strings(&s, &n, o->prompts, err, sizeof err) != 0) die(2, "%s", err);
    if (n == 0) die(2, "%s: expected at least one prompt, found none", o->prompts);
    file_sha256(model_sha, o->model);
    file_sha256(in_sha, o->prompts);

    witness_dump dump;
    int dumping = 0;
    if (o->dump_tensors) {
        if (witness_dump_open(&dump, o->dump_tensors, 2, err, sizeof err) != 0) die(2, "%s", err);
        dumping = 1;
    }
    FILE *flog = NULL, *fcsv = NULL;
    if (o->dump_logits) {
        flog = fopen(o->dump_logits, "wb");
        if (!flog) die(2, "--dump-logits: cannot write %s: %s", o->dump_logits, strerror(errno));
    }
    if (o->logits_csv) {
        fcsv = fopen(o->logits_csv, "w");
        if (!fcsv) die(2, "--logits-csv: cannot write %s: %s", o->logits_csv, strerror(errno));
        fprintf(fcsv, "prompt_id,step,token,logit_hex,logit\n");
    }

    struct llama_model *model = load_model(o->model, 0);
    const struct llama_vocab *vocab = llama_model_get_vocab(model);
    const int n_vocab = llama_vocab_n_tokens(vocab);
    if (flog) {
        int32_t hdr[2] = {WITNESS_FORMAT_VERSION, n_vocab};
        fwrite("DRIFTLG1", 1, 8, flog);
        fwrite(hdr, sizeof hdr[0], 2, flog);
    }

    struct llama_context_params cp = llama_context_default_params();
    cp.n_threads = o->threads;
    cp.n_threads_batch = o->threads;
    const struct llama_context_params defaults = cp;

    prompt_rec *rec = calloc((size_t)n, sizeof *rec);
    if (!rec) die(1, "out of memory");
    uint32_t n_ctx = 0, n_batch = 0, n_ubatch = 0;
    for (int p = 0; p < n; p++) {
        prompt_rec *r = &rec[p];
        r->n_ids = tokenize(vocab, s[p].text, s[p].len, &r->ids);
        if (r->n_ids == 0) die(2, "%s:%d: prompt: expected at least one token, found none", o->prompts, s[p].line);
        r->steps = calloc((size_t)o->tokens, sizeof *r->steps);
        if (!r->steps) die(1, "out of memory");

        struct llama_context_params c = defaults;
        int dump_this = dumping && p == 0;
        if (dump_this) {
            c.cb_eval = witness_dump_cb;
            c.cb_eval_user_data = &dump;
        }
        struct llama_context *ctx = llama_init_from_model(model, c);
        if (!ctx) die(1, "prompt %d: llama_init_from_model failed (run with --verbose for its log)", p);
        n_ctx = llama_n_ctx(ctx);
        n_batch = llama_n_batch(ctx);
        n_ubatch = llama_n_ubatch(ctx);
        if ((uint32_t)r->n_ids > n_batch || (uint32_t)(r->n_ids + o->tokens) > n_ctx)
            die(2, "%s:%d: prompt: expected at most %u tokens with %d generated in a context of %u, found %d",
                o->prompts, s[p].line, n_batch, o->tokens, n_ctx, r->n_ids);

        if (dump_this) dump.call = 0, dump.seq = 0;
        decode_or_die(ctx, r->ids, r->n_ids, p, 0);
        for (int t = 0; t < o->tokens; t++) {
            const float *logits = llama_get_logits_ith(ctx, -1);
            if (!logits) die(1, "prompt %d step %d: llama_get_logits_ith returned no logits", p, t);
            top2(logits, n_vocab, &r->steps[t], p, t);
            if (flog) {
                int32_t h[2] = {p, t};
                fwrite(h, sizeof h[0], 2, flog);
                fwrite(logits, sizeof *logits, (size_t)n_vocab, flog);
            }
            if (fcsv)
                for (int i = 0; i < n_vocab; i++) {
                    fprintf(fcsv, "%d,%d,%d,", p, t, i);
                    write_hexdec(fcsv, logits[i]);
                    fputc('\n', fcsv);
                }
            llama_token next = r->steps[t].token;
            append_piece(r, vocab, next);
            if (t + 1 < o->tokens) {
                if (dump_this) dump.call = t + 1, dump.seq = 0;
                decode_or_die(ctx, &next, 1, p, t + 1);
            }
        }
        if (dump_this) dump.call = -1;
        llama_free(ctx);
        fprintf(stderr, "drift-llama-witness: prompt %d/%d: %d prompt tokens, %d generated\n", p + 1, n, r->n_ids,
            o->tokens);
    }
    if (flog && (ferror(flog) | (fclose(flog) != 0))) die(1, "%s: write error", o->dump_logits);
    if (fcsv && (ferror(fcsv) | (fclose(fcsv) != 0))) die(1, "%s: write error", o->logits_csv);
    if (dumping && witness_dump_close(&dump) != 0) die(1, "%s", dump.err);

    out_file out;
    out_open(&out, o->out, "w");
    FILE *f = out.f;
    fprintf(f, "# greedy-decoding record: llama.cpp's own tokens and logits for each prompt\n");
    write_provenance(f, o, model_sha, o->prompts, in_sha);
    char desc[256];
    llama_model_desc(model, desc, sizeof desc);
    fprintf(f, "# model_desc: %s, %llu parameters, n_vocab %d, gguf add_bos_token %s\n", desc,
        (unsigned long long)llama_model_n_params(model), n_vocab, llama_vocab_get_add_bos(vocab) ? "true" : "false");
    fprintf(f, "# threads: n_threads=%d n_threads_batch=%d\n", o->threads, o->threads);
    fprintf(f, "# context: n_ctx=%u n_batch=%u n_ubatch=%u (llama.cpp defaults), fresh context per prompt\n", n_ctx,
        n_batch, n_ubatch);
    fprintf(f, "# flash_attn: requested %s (llama.cpp default), resolved %s%s\n",
        llama_flash_attn_type_name(defaults.flash_attn_type),
        g_log.fa_enabled == 1   ? "enabled"
        : g_log.fa_enabled == 0 ? "disabled"
                                : "unreported",
        dumping
            ? (dump.flash_attn_nodes > 0 ? " (graph has FLASH_ATTN_EXT nodes)" : " (graph has no FLASH_ATTN_EXT node)")
            : "");
    fprintf(f, "# kv_cache: type_k=%s type_v=%s\n", ggml_type_name(defaults.type_k), ggml_type_name(defaults.type_v));
    fprintf(f,
        "# decode: the prompt in one llama_decode call, then one call per generated token; %d steps per "
        "prompt, no stop at end-of-turn\n",
        o->tokens);
    fprintf(f, "# argmax: over all %d logits, first index wins a tie; second = the same rule over the other ids\n",
        n_vocab);
    if (dumping) fprintf(f, "# note: made with --dump-tensors (eval callback on prompt 0)\n");
    for (int p = 0; p < n; p++) {
        fprintf(f, "# prompt %d (%d tokens): %s\n", p, rec[p].n_ids, s[p].raw);
        fprintf(f, "# output %d: ", p);
        witness_escape(f, rec[p].text, rec[p].text_len);
        fputc('\n', f);
    }
    fprintf(f,
        "# columns: kind=prompt rows give the prompt's token ids (step = position); kind=gen rows give\n"
        "#   step t's greedy token and logit and the runner-up, each logit as C99 hex (%%a) and decimal (%%.9g)\n");
    fprintf(f, "prompt_id,kind,step,token,logit_hex,logit,second_token,second_logit_hex,second_logit\n");
    for (int p = 0; p < n; p++) {
        for (int i = 0; i < rec[p].n_ids; i++) fprintf(f, "%d,prompt,%d,%d,,,,,\n", p, i, rec[p].ids[i]);
        for (int t = 0; t < o->tokens; t++) {
            const step_rec *r = &rec[p].steps[t];
            fprintf(f, "%d,gen,%d,%d,", p, t, r->token);
            write_hexdec(f, r->logit);
            fprintf(f, ",%d,", r->second);
            write_hexdec(f, r->second_logit);
            fputc('\n', f);
        }
    }
    out_close(&out);

    /* For people: one line per prompt (on stderr when the record itself went to stdout). */
    FILE *h = out.f == stdout ? stderr : stdout;
    fprintf(h, "prompt  n_prompt  first 8 greedy ids\n");
    for (int p = 0; p < n; p++) {
        fprintf(h, "%6d  %8d ", p, rec[p].n_ids);
        for (int t = 0; t < o->tokens && t < 8; t++) fprintf(h, " %d", rec[p].steps[t].token);
        fputc('\n', h);
    }
    fprintf(h, "flash attention (auto) resolved to %s; %d prompts x %d greedy steps recorded%s%s.\n",
        g_log.fa_enabled == 1   ? "enabled"
        : g_log.fa_enabled == 0 ? "disabled"
                                : "unreported",
        n, o->tokens, o->out ? " in " : "", o->out ? o->out : "");
    if (dumping) fprintf(h, "tensor dump: %ld files in %s (index.tsv lists them)\n", dump.written, o->dump_tensors);

    for (int p = 0; p < n; p++) {
        free(rec[p].ids);
        free(rec[p].steps);
        free(rec[p].text);
    }
    free(rec);
    witness_free_strings(s, n);
    llama_model_free(model);
    return 0;
}

int main(int argc, char **argv)
{
    options o = parse_options(argc, argv);
    g_log.verbose = o.verbose;
    llama_log_set(on_log, NULL);
    llama_backend_init();
    int rc = o.tokenize ? run_tokenize(&o) : run_decode(&o);
    llama_backend_free();
    return rc;
}
