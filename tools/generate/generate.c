/* drift-generate — run a checkpoint (llama2.c .bin or GGUF) under any numerics and see where
 * two runs part.
 *
 *   ./lab generate [--checkpoint FILE] [--tokens N] [numerics] [decoding] [--compare numerics...]
 *
 * CSV on stdout (one row per generated token), a one-paragraph summary on stderr. With
 * --compare, the options after it change a copy of the first configuration, and the two
 * streams are printed side by side with the first divergence marked. Bad options or files:
 * one line on stderr, exit 2. `--help` lists the options. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "beam.h"
#include "cards.h"
#include "cli.h"
#include "checkpoint.h"
#include "deployment.h"
#include "drift.h"
#include "model.h"
#include "output.h"

#ifndef DRIFT_SOURCE_DIR
#define DRIFT_SOURCE_DIR "."
#endif

static const char *USAGE =
    "usage: drift-generate [options] [--compare options...]\n"
    "  --checkpoint FILE     llama2.c .bin or GGUF file (default models/stories260K.bin)\n"
    "  --tokens N            tokens to generate (default 256)\n"
    "  --prompt TEXT         the prompt as text (GGUF: its own tokenizer, special tokens such as\n"
    "                        <|im_start|> as their ids; llama2.c: needs --tokenizer)\n"
    "  --prompt-ids 1,2,3    prompt token ids (default: BOS; a llama2.c model stops at BOS, a GGUF\n"
    "                        model generates --tokens tokens)\n"
    "  --tokenizer FILE      llama2.c tokenizer.bin: text column, and --prompt TEXT\n"
    "  --deployment D        a whole serving configuration (docs/deployments.md): a preset (hf-eager,\n"
    "                        vllm-like, llamacpp-cpu, llamacpp-cpu-avx512, lab-fp32), KEY=VALUE fields\n"
    "                        changing it (vllm-like,card=rtx4090), or @FILE; the batch's other requests\n"
    "                        drawn from --companions SEED. Not combined with the numerics options below\n"
    "  --recipe R            every matmul: IN/ORDER/ACC/OUT, ORDER seq or tc:NAME, NAME a tensor-core\n"
    "                        model or a card (tc:h100, tc:rtx4090; default fp32/seq/fp32/fp32);\n"
    "                        llamacpp-cpu: llama.cpp's CPU backend bit for bit (GGUF; AVX2 build, 1 thread);\n"
    "                        llamacpp-cpu-avx512: the same llama.cpp built with AVX-512\n"
    "  --recipe-qkv R, --recipe-attn R (attention output), --recipe-mlp-up R, --recipe-mlp-down R,\n"
    "  --recipe-lmhead R     per-matmul overrides\n"
    "  --weights F --act F          weight storage (LayerCast: bf16), activations (fp32)\n"
    "  --kv F                       KV cache: fp32 (default), bf16, fp16, fp8e4m3, ..., int8:token, int8:head\n"
    "  --attention K                standard (default), flash:Br,Bc, splitkv:N[,Bc], splitkv:size=S[,Bc],\n"
    "                               splitkv:auto[,Bc] (N per step from the batch, as flash-decoding)\n"
    "  --policy P            vendor-like | batch-invariant (default vendor-like)\n"
    "  --sms N --min-slice N the device the policy fills (132) and its split-K minimum slice (256)\n"
    "  --batch B --companions SEED   decode inside a batch of B with random companions (1, seed 1)\n"
    "  --tp P --allreduce A  tensor-parallel ranks (1) and all-reduce order ring | tree | rank\n"
    "  --temperature T --top-k K --top-p P --seed S   sampling (default greedy)\n"
    "  --beams N             beam search with N beams (one KV slot each, all advanced in one batched\n"
    "                        step; scores: sums of fp64 log-softmax; not with sampling, --batch,\n"
    "                        --exact-gaps, --json); CSV step,token,text,logprob,score of the best beam\n"
    "  --beam-ties T         equal scores ordered stable (beam, token id; default) or unstable (a\n"
    "                        Philox permutation per step, as a GPU top-k)   --beam-seed S  its seed (0)\n"
    "  --exact               run the exact fp64 reference instead\n"
    "  --exact-gaps          add each step's exact logit gap (the reference on the same prefix)\n"
    "  --json                one JSON document instead of CSV\n"
    "  --backend cpu         (auto is cpu: the decoder has no CUDA path yet)\n"
    "  --help, --version     options take --opt VALUE or --opt=VALUE\n";

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), __noreturn__));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("drift-generate: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(2);
}

static long parse_int(const char *opt, const char *v, long lo, long hi)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (!*v || *end || errno || x < lo || x > hi)
        die("%s: expected an integer in %ld .. %ld, found '%s'", opt, lo, hi, v);
    return x;
}

static double parse_dbl(const char *opt, const char *v, double lo, double hi)
{
    char *end;
    double x = strtod(v, &end);
    if (!*v || *end || !(x >= lo && x <= hi)) die("%s: expected a number in %g .. %g, found '%s'", opt, lo, hi, v);
    return x;
}

static drift_format_t parse_fmt(const char *opt, const char *v)
{
    drift_format_t f;
    if (drift_format_parse(&f, v))
        die("%s: expected fp64, fp32, tf32, fp16, bf16, fp8e4m3 or fp8e5m2, found '%s'", opt, v);
    return f;
}

static drift_recipe_t parse_recipe(const char *opt, const char *v)
{
    drift_recipe_t r;
    int rc = drift_model_recipe_parse(&r, v);
    if (rc == DRIFT_EUNSUPPORTED) die("%s: '%s': that tensor-core model takes no such input / accumulator", opt, v);
    if (rc) {
        /* a tc: order naming no model and no card: said as such, with the nearest name */
        const char *s = strchr(v, '/'), *e = s ? strchr(s + 1, '/') : NULL;
        size_t len = s ? (e ? (size_t)(e - s - 1) : strlen(s + 1)) : 0;
        char ord[DRIFT_ORDER_SPEC_MAX];
        drift_order_t o;
        if (s && len < sizeof ord && !strncmp(s + 1, "tc:", 3)) {
            memcpy(ord, s + 1, len), ord[len] = 0;
            if (drift_order_parse_card(&o, ord)) drift_die_tc(opt, ord + 3, v);
        }
        die("%s: expected IN/ORDER/ACC[/OUT] or a format, found '%s' (accepted ORDER: seq, or %s)", opt, v,
            drift_tc_names());
    }
    return r;
}

typedef struct {
    drift_numerics_t nx;
    int has_dep; /* --deployment given: dep holds the configuration */
    drift_deployment_t dep;
    int numerics_opt; /* a numerics or batching option given (not with --deployment) */
    int dep_given;    /* --deployment options seen in this run's options */
    drift_batching_t bt;
    drift_sampler_t smp;
    int beams; /* 0: greedy or sampled (drift_generate) */
    drift_beam_ties_t ties;
    uint64_t beam_seed;
    const char *sampling_opt; /* a sampling option given (refused with --beams) */
    const char *beam_opt;     /* --beam-ties or --beam-seed given */
    char desc[DRIFT_DEPLOY_SPEC_MAX + 128];
} run_cfg_t;

/* Parse options from argv[i] on into c, stopping at --compare (its index) or the end. */
static int parse_cfg(run_cfg_t *c, int argc, char **argv, int i, const char **ckpt, long *tokens, const char **ids,
    const char **tokf, const char **prompt, int *exact_gaps, int *json, int first)
{
    static const char *const VALUED[] = {"checkpoint", "tokens", "prompt-ids", "tokenizer", "prompt", "recipe",
        "recipe-qkv", "recipe-attn", "recipe-mlp-up", "recipe-mlp-down", "recipe-lmhead", "weights", "act", "kv",
        "attention", "policy", "sms", "min-slice", "batch", "companions", "tp", "allreduce", "temperature", "top-k",
        "top-p", "seed", "backend", "beams", "beam-ties", "beam-seed", "deployment"};
    static const char *const FLAGS[] = {"compare", "exact", "exact-gaps", "json", "help", "version"};
    enum { NV = sizeof VALUED / sizeof *VALUED, NF = sizeof FLAGS / sizeof *FLAGS };
    for (; i < argc; i++) {
        char opt[72], name[64];
        const char *v = NULL, *arg = !strcmp(argv[i], "-h") ? "--help" : argv[i];
        if (drift_opt_split(name, sizeof name, &v, arg))
            die("unexpected argument '%s' (options start with --; see --help)", arg);
        snprintf(opt, sizeof opt, "--%s", name);
        const char *o = opt;
        int valued = 0, flag = 0;
        for (int k = 0; k < NV; k++) valued |= !strcmp(name, VALUED[k]);
        for (int k = 0; k < NF; k++) flag |= !strcmp(name, FLAGS[k]);
        if (!valued && !flag) {
            const char *all[NV + NF];
            char hint[96];
            for (int k = 0; k < NV; k++) all[k] = VALUED[k];
            for (int k = 0; k < NF; k++) all[NV + k] = FLAGS[k];
            drift_suggest_text(hint, sizeof hint, name, all, NV + NF, "--");
            die("unknown option '%s' (%ssee --help)", argv[i], hint);
        }
        if (flag && v) die("%s takes no value (found '%s')", o, argv[i]);
        if (!strcmp(o, "--version")) {
            printf("drift-generate (driftlab %s)\n", DRIFT_VERSION);
            exit(0);
        }
        if (!strcmp(o, "--compare")) return first ? i : (die("--compare: give it once"), 0);
        if (!strcmp(o, "--exact")) {
            c->nx.exact = 1;
            continue;
        }
        if (!strcmp(o, "--exact-gaps")) {
            *exact_gaps = 1;
            continue;
        }
        if (!strcmp(o, "--json")) {
            *json = 1;
            continue;
        }
        if (!strcmp(o, "--help")) {
            fputs(USAGE, stdout);
            exit(0);
        }
        if (!v && (i + 1 >= argc || !strncmp(argv[i + 1], "--", 2)))
            die("%s: needs a value (accepted: %s VALUE or %s=VALUE)", o, o, o);
        if (!v) v = argv[++i];
        if (!strcmp(o, "--deployment")) {
            char why[DRIFT_LLM_ERR_MAX];
            if (c->dep_given++) die("--deployment: give it once per run");
            if (drift_deployment_parse(&c->dep, v, why, sizeof why)) die("--deployment: %s", why);
            c->has_dep = 1;
            continue;
        }
        if (strcmp(o, "--checkpoint") && strcmp(o, "--tokens") && strcmp(o, "--prompt-ids") &&
            strcmp(o, "--tokenizer") && strcmp(o, "--prompt") && strcmp(o, "--companions") && strcmp(o, "--backend"))
            c->numerics_opt = 1;
        if (!strcmp(o, "--checkpoint") || !strcmp(o, "--tokens") || !strcmp(o, "--prompt-ids") ||
            !strcmp(o, "--tokenizer") || !strcmp(o, "--prompt")) {
            if (!first) die("%s: applies to both runs; give it before --compare", o);
            if (!strcmp(o, "--checkpoint"))
                *ckpt = v;
            else if (!strcmp(o, "--tokens"))
                *tokens = parse_int(o, v, 1, 1L << 20);
            else if (!strcmp(o, "--prompt-ids"))
                *ids = v;
            else if (!strcmp(o, "--tokenizer"))
                *tokf = v;
            else
                *prompt = v;
        } else if (!strcmp(o, "--recipe")) {
            if (strncmp(v, "llamacpp-cpu", 12)) (void)parse_recipe(o, v); /* its message for a malformed recipe */
            if (drift_numerics_set_recipe(&c->nx, v))
                die("%s: expected llamacpp-cpu, llamacpp-cpu-avx512 or a recipe, found '%s'", o, v);
        } else if (!strcmp(o, "--recipe-qkv"))
            c->nx.mm[DRIFT_OP_QKV] = parse_recipe(o, v);
        else if (!strcmp(o, "--recipe-attn"))
            c->nx.mm[DRIFT_OP_ATTN_OUT] = parse_recipe(o, v);
        else if (!strcmp(o, "--recipe-mlp-up"))
            c->nx.mm[DRIFT_OP_MLP_UP] = parse_recipe(o, v);
        else if (!strcmp(o, "--recipe-mlp-down"))
            c->nx.mm[DRIFT_OP_MLP_DOWN] = parse_recipe(o, v);
        else if (!strcmp(o, "--recipe-lmhead"))
            c->nx.mm[DRIFT_OP_LMHEAD] = parse_recipe(o, v);
        else if (!strcmp(o, "--weights"))
            c->nx.weights = parse_fmt(o, v);
        else if (!strcmp(o, "--act"))
            c->nx.act = parse_fmt(o, v);
        else if (!strcmp(o, "--kv")) {
            char why[DRIFT_LLM_ERR_MAX];
            if (drift_kv_format_parse(&c->nx.kv, v, why, sizeof why)) die("--kv: %s", why);
        } else if (!strcmp(o, "--attention")) {
            char why[DRIFT_LLM_ERR_MAX];
            if (drift_numerics_set_attention(&c->nx, v, why, sizeof why)) die("--attention: %s", why);
        } else if (!strcmp(o, "--policy")) {
            if (drift_policy_parse(&c->nx.policy, v))
                die("--policy: expected vendor-like or batch-invariant, found '%s'", v);
        } else if (!strcmp(o, "--sms"))
            c->nx.sms = (int)parse_int(o, v, 1, 100000);
        else if (!strcmp(o, "--min-slice"))
            c->nx.min_slice = (int)parse_int(o, v, 1, 1 << 30);
        else if (!strcmp(o, "--batch"))
            c->bt.batch = (int)parse_int(o, v, 1, 4096);
        else if (!strcmp(o, "--companions"))
            c->bt.seed = (uint64_t)parse_int(o, v, 0, LONG_MAX);
        else if (!strcmp(o, "--tp"))
            c->nx.tp = (int)parse_int(o, v, 1, DRIFT_TP_MAX);
        else if (!strcmp(o, "--allreduce")) {
            if (drift_allreduce_parse(&c->nx.allreduce, v))
                die("--allreduce: expected ring, tree or rank, found '%s'", v);
        } else if (!strcmp(o, "--temperature"))
            c->smp.temperature = parse_dbl(o, v, 0, 1e6), c->sampling_opt = "--temperature";
        else if (!strcmp(o, "--top-k"))
            c->smp.top_k = (int)parse_int(o, v, 0, INT_MAX), c->sampling_opt = "--top-k";
        else if (!strcmp(o, "--top-p")) {
            c->smp.top_p = parse_dbl(o, v, 0, 1), c->sampling_opt = "--top-p";
            if (c->smp.top_p == 0) c->smp.top_p = 1; /* 0 is off, as 1 */
        } else if (!strcmp(o, "--seed"))
            c->smp.seed = (uint64_t)parse_int(o, v, 0, LONG_MAX), c->sampling_opt = "--seed";
        else if (!strcmp(o, "--beams"))
            c->beams = (int)parse_int(o, v, 1, 1024);
        else if (!strcmp(o, "--beam-ties")) {
            if (drift_beam_ties_parse(&c->ties, v)) die("--beam-ties: expected stable or unstable, found '%s'", v);
            c->beam_opt = "--beam-ties";
        } else if (!strcmp(o, "--beam-seed"))
            c->beam_seed = (uint64_t)parse_int(o, v, 0, LONG_MAX), c->beam_opt = "--beam-seed";
        else if (!strcmp(o, "--backend")) {
            if (strcmp(v, "cpu") && strcmp(v, "auto"))
                die("--backend: expected auto or cpu (no CUDA decoder yet), found '%s'", v);
        }
    }
    return argc;
}

typedef struct {
    drift_gen_t g;     /* beam search: only n and token (the best beam's) */
    double *exact_gap; /* NULL unless --exact-gaps */
    drift_beam_t bm;   /* beam search's beams (nbeams 0 otherwise) */
} run_out_t;

/* Beam search's run: the best beam's tokens in g, every beam in bm. */
static void run_beams(
    run_out_t *r, const run_cfg_t *c, const drift_checkpoint_t *ck, const int *prompt, int np, int ntok)
{
    char err[DRIFT_LLM_ERR_MAX];
    drift_model_t *m;
    if (drift_model_create(&m, ck, &c->nx, c->beams, err, sizeof err)) die("%s", err);
    drift_beam_opts_t o = drift_beam_opts(c->beams, ntok);
    o.ties = c->ties, o.seed = c->beam_seed;
    o.stop_token = ck->gguf ? -1 : 1; /* as greedy: a llama2.c text ends at BOS, a GGUF text has a fixed length */
    if (drift_beam_search(&r->bm, m, prompt, np, &o, err, sizeof err)) die("%s", err);
    drift_model_free(m);
    memset(&r->g, 0, sizeof r->g);
    r->exact_gap = NULL;
    r->g.n = r->bm.len[0];
    if (!(r->g.token = malloc((size_t)(r->g.n ? r->g.n : 1) * sizeof(int))))
        drift_die_oom(
            (double)(r->g.n ? r->g.n : 1) * sizeof(int), "the beam's text of %d tokens (--tokens: fewer)", r->g.n);
    memcpy(r->g.token, r->bm.tokens, (size_t)r->g.n * sizeof(int));
}

static void run(
    run_out_t *r, const run_cfg_t *c, const drift_checkpoint_t *ck, const int *prompt, int np, int ntok, int exact_gaps)
{
    memset(&r->bm, 0, sizeof r->bm);
    if (c->beams) {
        run_beams(r, c, ck, prompt, np, ntok);
        return;
    }
    char err[DRIFT_LLM_ERR_MAX];
    drift_model_t *m;
    int rc =
        drift_model_create(&m, ck, c->has_dep ? &c->dep.nx : &c->nx, c->has_dep ? 1 : c->bt.batch, err, sizeof err);
    if (rc) die("%s", err);
    int stop = !ck->gguf; /* as run.c: generating BOS ends a llama2.c text; GGUF texts have a fixed length */
    if (c->has_dep)       /* the request alone in its slot, its batch's other requests by their shapes */
        rc = drift_deploy_generate(&r->g, m, &c->dep, prompt, np, 0, ntok, c->bt.seed, 0);
    else
        rc = drift_generate(&r->g, m, prompt, np, ntok, stop, &c->smp, &c->bt, 0);
    drift_model_free(m);
    if (rc) die("generation failed: %s", drift_strerror(rc));
    r->exact_gap = NULL;
    if (!exact_gaps || r->g.n == 0) return;
    drift_numerics_t ex = drift_numerics_exact();
    if ((rc = drift_model_create(&m, ck, &ex, 1, err, sizeof err))) die("%s", err);
    int n = np + r->g.n - 1, V = ck->cfg.vocab_size;
    int *seq = malloc((size_t)n * sizeof(int));
    double *L = malloc((size_t)n * (size_t)V * sizeof(double));
    r->exact_gap = malloc((size_t)r->g.n * sizeof(double));
    if (!seq || !L || !r->exact_gap)
        drift_die_oom((double)n * sizeof(int) + (double)n * V * sizeof(double) + (double)r->g.n * sizeof(double),
            "the exact logits of %d positions x %d tokens (--tokens: fewer)", n, V);
    memcpy(seq, prompt, (size_t)np * sizeof(int));
    memcpy(seq + np, r->g.token, (size_t)(r->g.n - 1) * sizeof(int));
    if ((rc = drift_model_score(m, L, seq, n))) die("exact reference failed: %s", drift_strerror(rc));
    for (int i = 0; i < r->g.n; i++) {
        const double *l = L + (size_t)(np - 1 + i) * (size_t)V;
        r->exact_gap[i] = l[r->g.token[i]] - l[r->g.top2[i]];
    }
    free(seq), free(L);
    drift_model_free(m);
}

static void csv_text(const drift_tokenizer_t *t, int prev, int tok)
{
    if (!t) return;
    const char *s = drift_tokenizer_decode(t, prev, tok);
    putchar('"');
    for (; *s; s++) {
        if (*s == '"')
            fputs("\"\"", stdout);
        else if (*s == '\n')
            fputs("\\n", stdout);
        else
            putchar(*s);
    }
    putchar('"');
}

static void json_str(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            printf("\\u%04x", *s);
        else
            putchar(*s);
    }
    putchar('"');
}

static void json_run(const run_out_t *r, const run_cfg_t *c, const drift_tokenizer_t *t, int prev0)
{
    printf("{\"config\": ");
    json_str(c->desc);
    printf(", \"steps\": [");
    for (int i = 0; i < r->g.n; i++) {
        printf("%s{\"step\": %d, \"token\": %d, \"text\": ", i ? ", " : "", i, r->g.token[i]);
        json_str(t ? drift_tokenizer_decode(t, i ? r->g.token[i - 1] : prev0, r->g.token[i]) : "");
        printf(", \"top1_logit\": %.9g, \"top2_token\": %d, \"top2_logit\": %.9g, \"gap\": %.9g", r->g.top1_logit[i],
            r->g.top2[i], r->g.top2_logit[i], r->g.top1_logit[i] - r->g.top2_logit[i]);
        if (r->exact_gap) printf(", \"exact_gap\": %.17g", r->exact_gap[i]);
        printf("}");
    }
    printf("]}");
}

static void describe(run_cfg_t *c)
{
    if (c->has_dep) {
        char d[DRIFT_DEPLOY_SPEC_MAX];
        if (drift_deployment_print(d, sizeof d, &c->dep) < 0) snprintf(d, sizeof d, "?");
        snprintf(c->desc, sizeof c->desc, "deployment %s companions=%llu", d, (unsigned long long)c->bt.seed);
        return;
    }
    char nx[400];
    drift_numerics_print(nx, sizeof nx, &c->nx);
    char dec[96];
    if (!c->beams)
        snprintf(dec, sizeof dec, "%s", c->smp.temperature > 0 ? " sampled" : " greedy");
    else if (c->ties == DRIFT_BEAM_TIES_UNSTABLE)
        snprintf(dec, sizeof dec, " beams=%d ties=unstable beam-seed=%llu", c->beams, (unsigned long long)c->beam_seed);
    else
        snprintf(dec, sizeof dec, " beams=%d ties=stable", c->beams);
    snprintf(
        c->desc, sizeof c->desc, "%s batch=%d companions=%llu%s", nx, c->bt.batch, (unsigned long long)c->bt.seed, dec);
}

/* --beams takes the whole batch and decodes deterministically: refuse what it cannot honour. */
static void check_beams(const run_cfg_t *c, int exact_gaps, int json)
{
    if (!c->beams) {
        if (c->beam_opt) die("%s: needs --beams N", c->beam_opt);
        return;
    }
    if (c->sampling_opt) die("--beams: beam search is deterministic; not with the sampling option %s", c->sampling_opt);
    if (c->bt.batch != 1) die("--beams: the beams are the batch; not with --batch %d", c->bt.batch);
    if (exact_gaps) die("--beams: not with --exact-gaps (a beam's gaps are not greedy's)");
    if (json) die("--beams: not with --json (CSV only)");
}

/* A compare row's two numbers for run r at step i: greedy's gap and exact gap, or (beam
 * search) an empty gap and the token's log-probability. */
static void cells(const run_out_t *r, int i)
{
    if (r->bm.nbeams)
        printf(",%.9g,", r->bm.logprob[i]);
    else {
        printf("%.9g,", r->g.top1_logit[i] - r->g.top2_logit[i]);
        if (r->exact_gap) printf("%.9g", r->exact_gap[i]);
        putchar(',');
    }
}

/* Where two runs part: greedy's top-1/top-2 gap, or the beam's token log-probability. */
static void step_note(const run_out_t *r, int i)
{
    if (r->bm.nbeams)
        fprintf(stderr, "(log-prob %.3g)", r->bm.logprob[i]);
    else
        fprintf(stderr, "(gap %.3g)", r->g.top1_logit[i] - r->g.top2_logit[i]);
}

static void beam_summary(const run_out_t *r)
{
    if (!r->bm.nbeams) return;
    fprintf(stderr,
        "; beam search: the best of %d beams scores %.9g (sum of fp64 log-softmax)%s; exact score ties: %ld at "
        "the cut (which beams survive depends on their order), %ld among the kept beams",
        r->bm.nbeams, r->bm.score[0], r->bm.finished[0] ? ", ended by BOS" : "", r->bm.ties_boundary,
        r->bm.ties_inside);
}

int main(int argc, char **argv)
{
    /* One thread: the decoder's GEMMs are too small for a parallel region each (OpenMP's
     * spin-wait made 48 bf16 tokens 16x slower on a loaded machine). */
    omp_set_num_threads(1);
    drift_set_program("drift-generate");
    drift_env_threads_check(); /* one thread here, but the variable is wrong for every program */
    run_cfg_t a;
    memset(&a, 0, sizeof a);
    a.nx = drift_numerics_fp32();
    a.bt = (drift_batching_t){1, 1, 32, 64};
    a.smp = drift_sampler_default(DRIFT_SAMPLER_SORTED);
    a.smp.temperature = 0; /* greedy until --temperature */
    const char *ckpt = NULL, *ids = NULL, *tokf = NULL, *ptext = NULL;
    long ntok = 256;
    int exact_gaps = 0, json = 0;
    int at = parse_cfg(&a, argc, argv, 1, &ckpt, &ntok, &ids, &tokf, &ptext, &exact_gaps, &json, 1);
    int compare = at < argc;
    run_cfg_t b = a;
    b.numerics_opt = b.dep_given = 0; /* the second run's own options */
    if (compare) parse_cfg(&b, argc, argv, at + 1, &ckpt, &ntok, &ids, &tokf, &ptext, &exact_gaps, &json, 0);
    check_beams(&a, exact_gaps, json);
    if (compare) check_beams(&b, exact_gaps, json);
    if (ids && ptext) die("--prompt-ids and --prompt: give one");
    for (int s = 0; s < (compare ? 2 : 1); s++) {
        const run_cfg_t *c = s ? &b : &a;
        if (c->has_dep && c->numerics_opt)
            die("--deployment: it sets the whole configuration; change its fields in the spec (vllm-like,kv=fp16) instead of "
                "numerics or batch options");
        if (c->has_dep && c->smp.temperature > 0) die("--deployment: decodes greedily (sampler=greedy)");
    }
    if (!ckpt) ckpt = drift_default_checkpoint();
    drift_checkpoint_t ck;
    char err[DRIFT_LLM_ERR_MAX];
    if (drift_checkpoint_read(&ck, ckpt, err, sizeof err)) die("--checkpoint: %s", err);
    if (ptext && !tokf && !ck.gguf) die("--prompt: needs --tokenizer FILE (a llama2.c checkpoint holds no vocabulary)");
    int V = ck.cfg.vocab_size;
    drift_tokenizer_t tok, *tp = NULL;
    if (tokf) {
        if (drift_tokenizer_read(&tok, tokf, V, err, sizeof err)) die("--tokenizer: %s", err);
        tp = &tok;
    } else if (ck.gguf) {
        if (drift_tokenizer_from_gguf(&tok, ck.gguf, err, sizeof err)) die("--checkpoint: %s: %s", ckpt, err);
        if (tok.vocab_size != V)
            die("--checkpoint: %s: the vocabulary has %d tokens, the embedding %d rows", ckpt, tok.vocab_size, V);
        tp = &tok;
    }
    int cap = ck.cfg.seq_len, np = 0;
    int *prompt = malloc((size_t)cap * sizeof(int));
    if (!prompt) drift_die_oom((double)cap * sizeof(int), "a prompt of %d token ids (the context)", cap);
    if (ids) {
        np = drift_parse_ids("--prompt-ids", ids, prompt, cap, V - 1); /* at most the context */
    } else if (ptext) {
        int rc = ck.gguf ? drift_tokenizer_encode_ex(tp, ptext, 1, 1, prompt, cap, &np)
                         : drift_tokenizer_encode(tp, ptext, 1, prompt, cap, &np);
        if (rc == DRIFT_ERANGE) die("--prompt: more tokens than the context of %d", cap);
        if (rc) die("--prompt: cannot encode the text with this tokenizer (%s)", drift_strerror(rc));
        if (np < 1) die("--prompt: the text gives no tokens");
    } else if (ck.gguf) {
        if (tok.bos_id < 0) die("--prompt: this model has no BOS token to start from; give --prompt or --prompt-ids");
        prompt[np++] = tok.bos_id;
    } else {
        prompt[np++] = 1;
    }
    if (np + ntok > cap) die("--tokens: the prompt (%d tokens) and %ld tokens exceed the context of %d", np, ntok, cap);
    describe(&a);
    describe(&b);
    run_out_t ra, rb;
    run(&ra, &a, &ck, prompt, np, (int)ntok, exact_gaps);
    if (compare) run(&rb, &b, &ck, prompt, np, (int)ntok, exact_gaps);
    int first = -1, n = ra.g.n;
    if (compare) {
        int lim = ra.g.n < rb.g.n ? ra.g.n : rb.g.n;
        for (int i = 0; i < lim && first < 0; i++)
            if (ra.g.token[i] != rb.g.token[i]) first = i;
        if (first < 0 && ra.g.n != rb.g.n) first = lim;
        if (rb.g.n > n) n = rb.g.n;
    }
    int prev0 = prompt[np - 1];
    if (json) {
        printf("{\"checkpoint\": ");
        json_str(ckpt);
        printf(", \"prompt\": [");
        for (int i = 0; i < np; i++) printf("%s%d", i ? ", " : "", prompt[i]);
        printf("], \"a\": ");
        json_run(&ra, &a, tp, prev0);
        if (compare) {
            printf(", \"b\": ");
            json_run(&rb, &b, tp, prev0);
            printf(", \"first_divergence\": %d", first);
        }
        printf("}\n");
    } else if (!compare && ra.bm.nbeams) {
        printf("step,token,text,logprob,score\n");
        double sc = 0;
        for (int i = 0; i < ra.g.n; i++) {
            printf("%d,%d,", i, ra.g.token[i]);
            csv_text(tp, i ? ra.g.token[i - 1] : prev0, ra.g.token[i]);
            sc += ra.bm.logprob[i];
            printf(",%.9g,%.9g\n", ra.bm.logprob[i], sc);
        }
    } else if (!compare) {
        printf("step,token,text,top1_logit,top2_token,top2_logit,gap,exact_gap\n");
        for (int i = 0; i < ra.g.n; i++) {
            printf("%d,%d,", i, ra.g.token[i]);
            csv_text(tp, i ? ra.g.token[i - 1] : prev0, ra.g.token[i]);
            printf(",%.9g,%d,%.9g,%.9g,", ra.g.top1_logit[i], ra.g.top2[i], ra.g.top2_logit[i],
                ra.g.top1_logit[i] - ra.g.top2_logit[i]);
            if (ra.exact_gap) printf("%.9g", ra.exact_gap[i]);
            putchar('\n');
        }
    } else {
        if (ra.bm.nbeams || rb.bm.nbeams)
            printf("step,a_token,a_text,a_gap,a_logprob,b_token,b_text,b_gap,b_logprob,mark\n");
        else
            printf("step,a_token,a_text,a_gap,a_exact_gap,b_token,b_text,b_gap,b_exact_gap,mark\n");
        for (int i = 0; i < n; i++) {
            for (int s = 0; s < 2; s++) {
                const run_out_t *r = s ? &rb : &ra;
                if (!s) printf("%d,", i);
                if (i < r->g.n) {
                    printf("%d,", r->g.token[i]);
                    csv_text(tp, i ? r->g.token[i - 1] : prev0, r->g.token[i]);
                    putchar(',');
                    cells(r, i);
                } else {
                    printf(",,,,");
                }
            }
            printf("%s\n", i == first ? "first divergence" : "");
        }
    }
    /* the summary */
    double mingap = INFINITY;
    int minat = -1;
    for (int i = 0; i < ra.g.n && !ra.bm.nbeams; i++)
        if (ra.g.top1_logit[i] - ra.g.top2_logit[i] < mingap)
            mingap = ra.g.top1_logit[i] - ra.g.top2_logit[i], minat = i;
    fprintf(stderr,
        "drift-generate: %s (%d layers, dim %d, vocab %d): %d tokens generated from a %d-token prompt under [%s]", ckpt,
        ck.cfg.n_layers, ck.cfg.dim, V, ra.g.n, np, a.desc);
    if (minat >= 0) fprintf(stderr, "; the smallest top-1/top-2 logit gap was %.3g at step %d", mingap, minat);
    beam_summary(&ra);
    if (compare) {
        fprintf(stderr, ". Against [%s] (%d tokens): ", b.desc, rb.g.n);
        if (first < 0)
            fprintf(stderr, "the two token streams are identical");
        else if (first < ra.g.n && first < rb.g.n) {
            fprintf(stderr, "the streams part at step %d: token %d ", first, ra.g.token[first]);
            step_note(&ra, first);
            fprintf(stderr, " vs %d ", rb.g.token[first]);
            step_note(&rb, first);
            if (!ra.exact_gap && !ra.bm.nbeams && !rb.bm.nbeams)
                fprintf(stderr, "; add --exact-gaps for the exact gaps there");
        } else
            fprintf(
                stderr, "one stream stops (%s) at step %d, the other goes on", ck.gguf ? "its length" : "BOS", first);
        beam_summary(&rb);
    }
    fprintf(stderr, ".\n");
    if (tp && !json) { /* the text itself, as a person reads it */
        for (int s = 0; s < (compare ? 2 : 1); s++) {
            const run_out_t *r = s ? &rb : &ra;
            fprintf(stderr, "%s", compare ? (s ? "b: " : "a: ") : "text: ");
            for (int i = 0; i < np; i++) fputs(drift_tokenizer_decode(tp, i ? prompt[i - 1] : 1, prompt[i]), stderr);
            fputs("\u2192", stderr);
            for (int i = 0; i < r->g.n; i++)
                fputs(drift_tokenizer_decode(tp, i ? r->g.token[i - 1] : prev0, r->g.token[i]), stderr);
            fputc('\n', stderr);
            for (int k = 1; k < r->bm.nbeams; k++) { /* the other final beams */
                fprintf(stderr, "%sbeam %d (score %.6g%s): \u2192", compare ? (s ? "b " : "a ") : "", k, r->bm.score[k],
                    r->bm.finished[k] ? ", ended" : "");
                const int *bt = r->bm.tokens + (size_t)k * (size_t)r->bm.stride;
                for (int i = 0; i < r->bm.len[k]; i++)
                    fputs(drift_tokenizer_decode(tp, i ? bt[i - 1] : prev0, bt[i]), stderr);
                fputc('\n', stderr);
            }
        }
    }
    drift_gen_free(&ra.g);
    free(ra.exact_gap);
    drift_beam_free(&ra.bm);
    if (compare) drift_gen_free(&rb.g), free(rb.exact_gap), drift_beam_free(&rb.bm);
    if (tp) drift_tokenizer_free(tp);
    free(prompt);
    drift_checkpoint_free(&ck);
    return drift_stdout_close_check() ? 2 : 0; /* a full disk or a closed stdout is an error, not a text */
}
