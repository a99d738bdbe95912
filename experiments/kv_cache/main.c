/* kv_cache.c — what does storing the KV cache in a narrow format (bf16, fp16, fp8, int8 with
 * per-token or per-head scales) do to the attention output, to the next token and to a real
 * model's greedy text? (Whether chunked prefill keeps the bits is kv_cache_chunked's question.)
 *
 * Sweeps: cache lengths L (--L), KV storage formats (--kv-formats, lib/ops/attention.h), compute
 * input formats (--formats; the kernel rounds what it loads from the cache to this). Shape:
 * --heads query heads over --kv-heads KV heads, head dim --dim, causal; q, k, v ~ N(0,1)
 * (Philox). The cache is filled by one append of L tokens (the prompt: int8:head calibrates its
 * scales on it); the last --queries query rows attend to it with flash:64,64 (fp32 accumulation
 * and softmax, output kept in fp32). Each output row is held against the MPFR attention of the
 * unrounded values, and goes through a fixed random projection W (--vocab x heads*dim, N(0,1),
 * evaluated in fp64: a measuring device, not a kernel) to a vocabulary: the next token is the
 * argmax, compared with the argmax of the exact output's logits.
 * Real model (kv_cache_real.h; default and full profiles): SmolLM2-135M decodes --real-prompts
 * prompts of the lab's set greedily on an A100 alone (hf-eager) with the cache in each format of
 * --real-kv, against the preset's own bf16 cache: per format, the prompts whose text parts.
 *
 * Run: ./lab run kv_cache [--profile quick|default|full]
 * Look for: the output error grows with the storage format's unit roundoff (fp8e5m2 worst of
 * the floats); int8:token beats int8:head; argmax flips only where the error is large; on the
 * real model, which formats part the greedy text, and at what gap. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "cli.h"
#include "drift.h"
#include "format.h"
#include "kv_cache_real.h"
#include "kv_run.h"
#include "output.h"
#include "storage_sweep.h"

enum { T_MAIN, T_MD, T_REAL, T_REALSUM, T_MDREAL };
static const drift_col_t MAIN[] = {DRIFT_C_TEXT("format"), DRIFT_C_TEXT("kv_format"), DRIFT_C_INT("L"),
    DRIFT_C_INT("queries"), DRIFT_C_NUM("relerr_true", "%.6e"), DRIFT_C_NUM("max_abs_err_true", "%.6e"),
    DRIFT_C_INT("argmax_flips"), DRIFT_C_NUM("min_gap_exact", "%.6g"), DRIFT_C_NUM("max_logit_err", "%.6e")};
static const drift_col_t MD[] = {DRIFT_C_TEXT("KV storage"), DRIFT_C_INT("L"), DRIFT_C_NUM("output rel. error", "%.3e"),
    DRIFT_C_NUM("largest logit error", "%.3e"), DRIFT_C_TEXT("next token changed")};
static const drift_col_t REAL[] = {DRIFT_C_INT("prompt"), DRIFT_C_TEXT("kind"), DRIFT_C_INT("prompt_tokens"),
    DRIFT_C_TEXT("kv_format"), DRIFT_C_INT("parted"), DRIFT_C_INT("step"), DRIFT_C_INT("token_bf16"),
    DRIFT_C_INT("token_kv"), DRIFT_C_NUM("gap_bf16", "%.9g"), DRIFT_C_NUM("gap_kv", "%.9g")};
static const drift_col_t REALSUM[] = {DRIFT_C_TEXT("kv_format"), DRIFT_C_QUOTED("deployment"), DRIFT_C_INT("prompts"),
    DRIFT_C_INT("tokens"), DRIFT_C_INT("parted"), DRIFT_C_NUM("rate", "%.6g"), DRIFT_C_NUM("wilson_lo", "%.6g"),
    DRIFT_C_NUM("wilson_hi", "%.6g"), DRIFT_C_INT("step_min"), DRIFT_C_NUM("step_median", "%.6g"),
    DRIFT_C_INT("step_max"), DRIFT_C_NUM("gap_bf16_median", "%.6g"), DRIFT_C_NUM("gap_bf16_max", "%.6g")};
static const drift_col_t MDREAL[] = {DRIFT_C_TEXT("KV storage"),
    DRIFT_C_TEXT("prompts whose text parts from kv=bf16 (95 % Wilson)"),
    DRIFT_C_TEXT("parting step (min / median / max)"),
    DRIFT_C_TEXT("kv=bf16 run's own top-2 gap there (median / max)")};
static const drift_table_spec_t TABLES[] = {{".csv", NULL, 0, MAIN, 9},
    {NULL, "Attention output and next token against the exact attention (first compute format), per KV storage",
        DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT, MD, 5},
    {"_real.csv", NULL, 0, REAL, 10}, {"_real_summary.csv", NULL, 0, REALSUM, 13},
    {NULL,
        "Real model: greedy text with the KV cache in each format against the preset's own kv=bf16 (" REAL_PRESET ")",
        DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT, MDREAL, 4}};

int main(int argc, char **argv)
{
    drift_intlist_t Ls = {{0}, 0};
    long heads = 4, kv_heads = 2, dim = 64, nq = 0, vocab = 0, rN = 0, rT = 0;
    const char *ckpt = NULL, *set = NULL, *rkv = "fp16,fp8e4m3,fp8e5m2,int8:token,int8:head";
    const char *kvlist = "fp32,bf16,fp16,fp8e4m3,fp8e5m2,int8:token,int8:head";
    const drift_cli_opt_t opts[] = {
        {"L", DRIFT_OPT_INTLIST, &Ls, "N,N,...", "cache lengths (tokens)", 1, 1L << 20,
            {"128", "256,1024", "256,1024,4096"}},
        {"kv-formats", DRIFT_OPT_LIST, &kvlist, "LIST",
            "KV storage formats (fp64, fp32, tf32, fp16, bf16, fp8e4m3, fp8e5m2, int8:token, int8:head; default all but fp64 and tf32)",
            0, 0, {0}},
        {"heads", DRIFT_OPT_INT, &heads, "N", "query heads (a multiple of --kv-heads; default 4)", 1, 1024, {0}},
        {"kv-heads", DRIFT_OPT_INT, &kv_heads, "N", "KV heads (default 2)", 1, 1024, {0}},
        {"dim", DRIFT_OPT_INT, &dim, "N", "head dimension (default 64)", 1, 4096, {0}},
        {"queries", DRIFT_OPT_INT, &nq, "N", "last query rows held against the reference", 1, 4096, {"4", "8", "32"}},
        {"vocab", DRIFT_OPT_INT, &vocab, "N", "rows of the fixed projection to a vocabulary", 2, 1L << 20,
            {"2000", "16000", "32000"}},
        {"real-prompts", DRIFT_OPT_INT, &rN, "N",
            "prompts the real model decodes per KV format (0: no real-model part)", 0, 4096, {"0", "2", "64"}},
        {"real-kv", DRIFT_OPT_LIST, &rkv, "LIST",
            "the real model's KV storage formats, each against its preset's own bf16 (default fp16, fp8e4m3, fp8e5m2, int8:token, int8:head)",
            0, 0, {0}},
        {"real-tokens", DRIFT_OPT_INT, &rT, "T", "greedy tokens per prompt of the real model", 1, 1024,
            {"4", "8", "64"}},
        {"checkpoint", DRIFT_OPT_STRING, &ckpt, "FILE",
            "the real model, a GGUF file with a tokenizer (default SmolLM2-135M-Instruct)", 0, 0, {0}},
        {"prompt-set", DRIFT_OPT_STRING, &set, "FILE", "the real model's prompt set (default prompts/lab-prompts.txt)",
            0, 0, {0}},
    };
    const drift_cli_spec_t spec = {.name = "kv_cache",
        .question =
            "What does storing the KV cache in bf16, fp16, fp8 or int8 do to the attention output, to the next token and to a real model's greedy text?",
        .default_formats = "fp32",
        .default_orders = "seq",
        DRIFT_CLI_OPTS(opts),
        .no_orders =
            "sweeps KV storage formats, not reduction orders (the kernel is flash:64,64 with seq fp32 dot products)",
        .cpu_only = NULL, /* attention goes through the dispatcher (--backend cuda, checked against the CPU twin) */
        .summary =
            "the attention output's error against the exact attention grows with the storage format's precision, from "
            "fp32 to fp8e5m2, with int8 in between (per-token scales better than one per-head scale); the next token, "
            "taken through a fixed projection, changes only where that error reaches the gap between the top two logits; "
            "on SmolLM2-135M, the table counts the prompts whose greedy text a narrower cache parts from the preset's own bf16 cache."};
    drift_cli_t cli;
    drift_cli_parse(&cli, &spec, argc, argv);
    drift_kv_require_heads(heads, kv_heads);
    drift_kv_format_t kvf[DRIFT_KV_MAX];
    char kvn[DRIFT_KV_MAX][32];
    const int nkv = drift_kv_format_list(kvf, kvn, "--kv-formats", kvlist, DRIFT_KV_FORMATS_ACCEPTED);
    for (int f = 0; f < cli.nformats; f++)
        if (cli.formats[f] == DRIFT_FP64)
            drift_die("--formats: fp64 inputs are not swept here (accepted: fp32, tf32, bf16, fp16, fp8e4m3, fp8e5m2)");
    size_t Lmax = 0;
    for (int t = 0; t < Ls.n; t++) Lmax = (size_t)Ls.v[t] > Lmax ? (size_t)Ls.v[t] : Lmax;
    if ((double)Lmax * (double)kv_heads * (double)dim > (double)(1L << 27))
        drift_die("--L: L * kv-heads * dim must stay below 2^27 values (the cache's memory; accepted: smaller shapes)");
    if ((double)vocab * (double)heads * (double)dim > (double)(1L << 27))
        drift_die("--vocab: vocab * heads * dim must stay below 2^27 values (the projection's memory)");
    char err[DRIFT_ERRMSG_MAX] = "";
    drift_attn_opts_t base = drift_attn_opts((int)heads, (int)kv_heads, (int)dim, DRIFT_FP32);
    if (drift_attn_validate(&base, err, sizeof err)) drift_die("--heads/--kv-heads/--dim: %s", err);
    kv_real_t real;
    kv_real_prepare(&real, &cli, rkv, rN, rT, ckpt, set);
    const int nf = cli.nformats, nL = Ls.n;
    const size_t H = (size_t)heads, G = (size_t)kv_heads, D = (size_t)dim, V = (size_t)vocab, HD = H * D;

    const drift_kv_setup_t S = {cli.seed, (int)heads, (int)kv_heads, (int)dim, cli.formats, nf, kvf, nkv};
    drift_attn_kernel_t flash;
    if (drift_attn_kernel_parse(&flash, "flash:64,64", NULL, 0)) drift_die("attention kernel 'flash:64,64' refused");
    double *W = malloc(V * HD * sizeof *W);
    if (!W)
        drift_die_oom((double)V * HD * sizeof *W, "the %zu x %zu output head (--vocab, --heads, --dim: smaller)",
            (size_t)V, (size_t)HD);
    drift_kv_fill(W, V * HD, cli.seed, 0x3EADu, 0);

    /* -- storage formats: per (L, format, kv format), the last nq rows -- */
    drift_kv_err_t *res = calloc((size_t)nL * (size_t)nf * (size_t)nkv, sizeof *res);
    if (!res)
        drift_die_oom(
            (double)nL * nf * nkv * sizeof *res, "the results of %d lengths x %d formats x %d KV formats", nL, nf, nkv);
    for (int li = 0; li < nL; li++) {
        drift_progress(&cli, (size_t)li, (size_t)nL);
        drift_kv_storage_point(
            &res[(size_t)li * (size_t)nf * (size_t)nkv], &S, &flash, (size_t)Ls.v[li], (size_t)nq, W, V);
    }
    drift_progress(&cli, (size_t)nL, (size_t)nL);

    /* -- write -- */
    drift_out_t out;
    kv_real_run(&real, &cli);
    drift_out_open(&out, &cli, TABLES, 5, 1);
    drift_out_meta(&out, T_MAIN, "table",
        "per (compute format, KV storage, L): the last `queries` query rows (causal) against a cache of L tokens filled by one append");
    drift_out_meta(&out, T_MAIN, "shape",
        "heads %zu, kv_heads %zu, head_dim %zu, causal, scale 1/sqrt(dim); q, k, v ~ N(0,1) (Philox, seed %llu); "
        "kernel flash:64,64, operands rounded to the compute format after loading from the cache, "
        "fp32 accumulation and softmax, output kept in fp32",
        H, G, D, (unsigned long long)cli.seed);
    drift_out_meta(&out, T_MAIN, "columns",
        "relerr_true = ||o - o*||_2 / ||o*||_2 and max_abs_err_true over the rows, o* = drift_attention_reference (MPFR, "
        "to fp64) of the unrounded q, k, v; logits = W o with W a fixed %zu x %zu N(0,1) matrix (fp64 arithmetic); "
        "argmax_flips = rows whose argmax differs from the argmax of W o*; min_gap_exact = the smallest top-1/top-2 gap of W o* over the rows; "
        "max_logit_err = max |W o - W o*|",
        V, HD);
    for (int li = 0; li < nL; li++)
        for (int f = 0; f < nf; f++)
            for (int c = 0; c < nkv; c++) {
                const drift_kv_err_t *s = &res[((size_t)li * (size_t)nf + (size_t)f) * (size_t)nkv + (size_t)c];
                drift_row(&out, T_MAIN, DRIFT_TXT(drift_format_name(cli.formats[f])), DRIFT_TXT(kvn[c]),
                    DRIFT_INT(Ls.v[li]), DRIFT_INT((size_t)nq < (size_t)Ls.v[li] ? (size_t)nq : (size_t)Ls.v[li]),
                    DRIFT_NUM(s->rel), DRIFT_NUM(s->maxabs), DRIFT_INT(s->flips), DRIFT_NUM(s->mingap),
                    DRIFT_NUM(s->maxlog));
            }

    drift_md_intro(&out,
        "A cache of L tokens (%zu query heads over %zu KV heads, head dim %zu, q, k, v ~ N(0,1)) stored in each format; "
        "the last %ld query rows through flash:64,64 in %s arithmetic (fp32 accumulation); "
        "the next token through a fixed %zu x %zu random projection.",
        H, G, D, nq, drift_format_name(cli.formats[0]), V, HD);
    for (int li = 0; li < nL; li++)
        for (int c = 0; c < nkv; c++) {
            const drift_kv_err_t *s = &res[((size_t)li * (size_t)nf) * (size_t)nkv + (size_t)c];
            char fl[48];
            snprintf(fl, sizeof fl, "%ld of %zu rows", s->flips,
                (size_t)nq < (size_t)Ls.v[li] ? (size_t)nq : (size_t)Ls.v[li]);
            drift_row(&out, T_MD, DRIFT_TXT(kvn[c]), DRIFT_INT(Ls.v[li]), DRIFT_NUM(s->rel), DRIFT_NUM(s->maxlog),
                DRIFT_TXT(fl));
        }
    drift_md_end(&out, T_MD);
    kv_real_write(&real, &out, T_REAL, T_REALSUM, T_MDREAL);

    /* takeaway from the data: the ranking at the largest L, first compute format */
    drift_md_text(&out, "**Takeaway.**\n\n");
    const int nl = nL - 1;
    const drift_kv_err_t *last = &res[((size_t)nl * (size_t)nf) * (size_t)nkv];
    int order[DRIFT_KV_MAX];
    for (int c = 0; c < nkv; c++) order[c] = c;
    for (int a = 1; a < nkv; a++)
        for (int b = a; b > 0 && last[order[b]].rel < last[order[b - 1]].rel; b--) {
            int t = order[b];
            order[b] = order[b - 1], order[b - 1] = t;
        }
    drift_md_text(&out, "- Output error at L = %ld, smallest to largest: ", Ls.v[nl]);
    for (int a = 0; a < nkv; a++) drift_md_text(&out, "%s%s %.2e", a ? ", " : "", kvn[order[a]], last[order[a]].rel);
    drift_md_text(&out, ".\n");
    long flips = 0, rowsall = 0;
    double gapmin = INFINITY;
    for (int li = 0; li < nL; li++)
        for (int c = 0; c < nkv; c++) {
            const drift_kv_err_t *s = &res[((size_t)li * (size_t)nf) * (size_t)nkv + (size_t)c];
            flips += s->flips, rowsall += (size_t)nq < (size_t)Ls.v[li] ? nq : Ls.v[li];
            gapmin = fmin(gapmin, s->mingap);
        }
    drift_md_text(&out,
        "- The next token changed in %ld of %ld (storage, L, row) cases; the smallest exact top-1/top-2 logit gap among the rows was %.3g.\n",
        flips, rowsall, gapmin);
    kv_real_takeaway(&real, &out);
    drift_out_commit(&out);
    kv_real_free(&real);
    free(res), free(W);
    return 0;
}
