/* attention_drift.c — how far do attention kernels (standard, FlashAttention-2 tiles, split-KV)
 * drift from the exact attention, per input format and sequence length; is flash attention
 * ~10x less accurate than standard in bf16 (Golden et al. 2024); is the output invariant to
 * padding; do prefill and decode give the same bits?
 *
 * Sweeps: sequence lengths L (--L), input formats, kernels of lib/ops/attention.h: standard
 * (scores materialised in the input format), flash:64,Bc for each Bc of --bc, splitkv:N (--splits,
 * a fixed number of splits) and splitkv:size=S (--split-size). Shape: --heads query heads over
 * --kv-heads KV heads, head dim --dim, causal; q, k, v ~ N(0,1) (Philox). Recipes: operands
 * rounded (RNE) to the format, dot products seq with fp32 fma accumulation, softmax in fp32 with
 * correctly rounded expf, P rounded to the format before P.V, output kept in fp32 (the
 * accumulator before the final store, so that the kernels' own differences are not hidden under
 * the output rounding common to all of them).
 * The MPFR reference (drift_attention_reference) costs L * heads * dim high-precision products
 * per query row, so errors are measured on --check-rows query rows of every head (evenly spaced,
 * the last row included): each kernel computes those rows against the whole causal cache.
 * Errors are held against the exact attention of the rounded inputs (the arithmetic's error)
 * and of the unrounded inputs (law 1).
 * Control: standard with its scores stored in fp32 (qk.out = fp32, all else as standard), on
 * the same rows. Standard and flash differ in more than the score rounding (flash rounds
 * unnormalised p_j to the format and divides at the end, rescales by alpha per tile); the
 * control removes only the score rounding, so flash / control near 1 says that rounding is
 * what separates them, and the control near standard says it is not. Its errors only: the
 * padding and decode tests would keep its bits for standard's reasons (masked keys add exact
 * zeros; one seq order whatever the cache), so they are not run on it.
 * Padding: the same sequence alone and left- or right-padded with --pad masked keys of other
 * values, bit for bit. Prefill vs decode: all L queries in one call against the L-token cache
 * vs one query per step against a growing cache, bit for bit, at --decode-len tokens.
 *
 * Run: ./lab run attention_drift [--profile quick|default|full]
 * Look for: the flash/standard ratio per format (the .md table) and flash/control (the next);
 * splitkv:N changes bits between prefill and decode and with padding, splitkv:size=S only with
 * left padding. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "cli.h"
#include "dispatch_attention.h"
#include "drift.h"
#include "format.h"
#include "attention_drift_lab.h"
#include "kv_run.h"
#include "philox.h"

#define MAX_KERNELS 24

static void fill(double *x, size_t n, uint64_t seed, uint32_t point, uint32_t trial)
{
    drift_stream_t st;
    drift_stream_init(&st, seed, drift_fnv1a32("attention_drift"), point, trial);
    for (size_t i = 0; i < n; i++) x[i] = drift_stream_normal(&st);
}

static void die_lib(const char *what, int rc, const char *err)
{
    drift_die("%s: %s", what, err[0] ? err : drift_strerror(rc));
}

/* n outputs that differ bitwise, and the largest |difference|. */
static long diff_count(double *maxd, const double *a, const double *b, size_t n)
{
    long c = 0;
    *maxd = 0;
    for (size_t i = 0; i < n; i++)
        if (memcmp(&a[i], &b[i], sizeof a[i])) c++, *maxd = fmax(*maxd, fabs(a[i] - b[i]));
    return c;
}

int main(int argc, char **argv)
{
    drift_intlist_t Ls = {{0}, 0}, bcs = {{0}, 0};
    long heads = 4, kv_heads = 2, dim = 64, check = 0, splits = 2, ssize = 128, pad = 37, declen = 0;
    const drift_cli_opt_t opts[] = {
        {"L", DRIFT_OPT_INTLIST, &Ls, "N,N,...", "sequence lengths (keys; the checked queries are causal)", 1, 1L << 20,
            {"64,256", "128,512,2048", "128,512,2048,8192,16384"}},
        {"bc", DRIFT_OPT_INTLIST, &bcs, "N,N,...", "flash key-tile widths Bc", 1, DRIFT_ATTN_TILE_MAX,
            {"16,64", "16,32,64,128", "16,32,64,128,256"}},
        {"heads", DRIFT_OPT_INT, &heads, "N", "query heads (a multiple of --kv-heads; default 4)", 1, 1024, {0}},
        {"kv-heads", DRIFT_OPT_INT, &kv_heads, "N", "KV heads (default 2)", 1, 1024, {0}},
        {"dim", DRIFT_OPT_INT, &dim, "N", "head dimension (default 64)", 1, 4096, {0}},
        {"check-rows", DRIFT_OPT_INT, &check, "N", "query rows held against the MPFR reference per L", 1, 4096,
            {"3", "4", "16"}},
        {"splits", DRIFT_OPT_INT, &splits, "N", "splitkv:N's fixed number of splits (default 2)", 1,
            DRIFT_ATTN_SPLIT_MAX, {0}},
        {"split-size", DRIFT_OPT_INT, &ssize, "S",
            "splitkv:size=S's split size in keys, a multiple of 64 (default 128)", 1, DRIFT_ATTN_SIZE_MAX, {0}},
        {"pad", DRIFT_OPT_INT, &pad, "N", "masked padding keys of the padding test (default 37)", 1, 1L << 20, {0}},
        {"decode-len", DRIFT_OPT_INT, &declen, "N", "tokens of the padding and prefill-vs-decode tests", 1, 1L << 16,
            {"96", "192", "1024"}},
    };
    const drift_cli_spec_t spec = {.name = "attention_drift",
        .question =
            "How far do attention kernels (standard, flash with its key tile Bc, split-KV) drift from the exact attention per format and sequence "
            "length, is flash less accurate than standard, and are padding and decode bit-invariant?",
        .default_formats = "fp32,bf16,fp16",
        .default_orders = "seq",
        DRIFT_CLI_OPTS(opts),
        .no_orders =
            "sweeps attention kernels, not reduction orders (every dot product is seq in fp32; the kernels fix the order of the softmax)",
        .cpu_only = NULL, /* attention goes through the dispatcher (--backend cuda, checked against the CPU twin) */
        .summary =
            "every kernel's output error against the exact attention, on the same rounded inputs, per format and length; "
            "the flash/standard ratio per format in the .md table, and flash against standard with fp32 scores (the control) in the next; splitkv:N cuts the keys by the sequence length, so decode "
            "and prefill (and a padded batch) give other bits, while splitkv:size=S and flash (tiles from key 0) keep "
            "prefill and decode identical and only left padding, which shifts the tiles, changes them."};
    drift_cli_t cli;
    drift_cli_parse(&cli, &spec, argc, argv);
    drift_kv_require_heads(heads, kv_heads);
    if (ssize % 64) drift_die("--split-size: %ld is not a multiple of the tile 64 (accepted: 64, 128, ...)", ssize);
    if (bcs.n + 3 > MAX_KERNELS) drift_die("--bc: at most %d values", MAX_KERNELS - 3);
    for (int f = 0; f < cli.nformats; f++)
        if (cli.formats[f] == DRIFT_FP64)
            drift_die("--formats: fp64 inputs are not swept here (accepted: fp32, tf32, bf16, fp16, fp8e4m3, fp8e5m2)");
    size_t Lmax = (size_t)declen;
    for (int t = 0; t < Ls.n; t++) Lmax = (size_t)Ls.v[t] > Lmax ? (size_t)Ls.v[t] : Lmax;
    if ((double)(Lmax + (size_t)pad) * (double)kv_heads * (double)dim > (double)(1L << 27))
        drift_die(
            "--L: (L + pad) * kv-heads * dim must stay below 2^27 values (the cache's memory; accepted: smaller shapes)");
    if ((size_t)check > Lmax) check = (long)Lmax;

    /* the kernels */
    drift_attn_kernel_t kern[MAX_KERNELS];
    char kname[MAX_KERNELS][DRIFT_ATTN_SPEC_MAX], kfam[MAX_KERNELS][16];
    long kbc[MAX_KERNELS];
    int nk = 0, k_std = 0, k_f64 = -1;
    char err[DRIFT_ERRMSG_MAX] = "";
    {
        char s[DRIFT_ATTN_SPEC_MAX];
        const char *specs[MAX_KERNELS];
        static char buf[MAX_KERNELS][DRIFT_ATTN_SPEC_MAX];
        specs[nk++] = "standard";
        for (int b = 0; b < bcs.n; b++)
            snprintf(buf[nk], sizeof buf[nk], "flash:64,%ld", bcs.v[b]), specs[nk] = buf[nk], nk++;
        snprintf(buf[nk], sizeof buf[nk], "splitkv:%ld", splits), specs[nk] = buf[nk], nk++;
        snprintf(buf[nk], sizeof buf[nk], "splitkv:size=%ld", ssize), specs[nk] = buf[nk], nk++;
        for (int k = 0; k < nk; k++) {
            if (drift_attn_kernel_parse(&kern[k], specs[k], err, sizeof err))
                drift_die("%s: %s", k <= bcs.n ? "--bc" : "--splits/--split-size", err);
            drift_attn_kernel_print(kname[k], sizeof kname[k], &kern[k]);
            kbc[k] = kern[k].kind == DRIFT_ATTN_STANDARD ? 0 : kern[k].bc;
            snprintf(kfam[k], sizeof kfam[k], "%s",
                kern[k].kind == DRIFT_ATTN_STANDARD    ? "standard"
                : kern[k].kind == DRIFT_ATTN_FLASH     ? "flash"
                : kern[k].kind == DRIFT_ATTN_SPLITKV_N ? "splitkv-count"
                                                       : "splitkv-size");
            if (kern[k].kind == DRIFT_ATTN_FLASH && kern[k].bc == 64) k_f64 = k;
        }
        (void)s;
    }
    drift_attn_opts_t base = drift_attn_opts((int)heads, (int)kv_heads, (int)dim, DRIFT_FP32);
    if (drift_attn_validate(&base, err, sizeof err)) drift_die("--heads/--kv-heads/--dim: %s", err);
    const int nf = cli.nformats, nL = Ls.n;
    const size_t H = (size_t)heads, G = (size_t)kv_heads, D = (size_t)dim, R = (size_t)check;
    const drift_kv_format_t kv64 = {
        DRIFT_KV_FLOAT, DRIFT_FP64}; /* the cache holds the values; the kernel rounds them */

    /* -- errors: err[((li * nf + f) * nk + k)] over the checked rows -- */
    drift_attn_err_t *E = calloc((size_t)nL * (size_t)nf * (size_t)nk, sizeof *E);
    drift_attn_err_t *Ec = calloc((size_t)nL * (size_t)nf, sizeof *Ec); /* the control, [li * nf + f] */
    const size_t nc = (size_t)nk + 1;                                   /* the kernels, then the control */
    if (!E || !Ec)
        drift_die_oom((double)nL * nf * (nk + 1) * sizeof *E,
            "the errors of %d lengths x %d formats x %d kernels and the control", nL, nf, (int)nk);
    for (int li = 0; li < nL; li++) {
        const size_t L = (size_t)Ls.v[li];
        const size_t nr = R < L ? R : L;
        drift_progress(&cli, (size_t)li, (size_t)nL + 2);
        double *q = malloc(L * H * D * sizeof *q), *k = malloc(L * G * D * sizeof *k),
               *v = malloc(L * G * D * sizeof *v);
        double *kr = malloc(L * G * D * sizeof *kr), *vr = malloc(L * G * D * sizeof *vr);
        double *ref_t = malloc(nr * H * D * sizeof *ref_t), *ref_r = malloc((size_t)nf * nr * H * D * sizeof *ref_r);
        double *o = malloc((size_t)nf * nc * nr * H * D * sizeof *o);
        size_t *rows = malloc(nr * sizeof *rows);
        if (!q || !k || !v || !kr || !vr || !ref_t || !ref_r || !o || !rows)
            drift_die_oom(8.0 * ((double)L * H * D + 4.0 * L * G * D + (double)nr * H * D * (1 + nf + (double)nf * nk)),
                "the attention inputs and outputs at L = %zu (--L, --heads, --dim, --check-rows: smaller)", L);
        fill(q, L * H * D, cli.seed, (uint32_t)L, 0), fill(k, L * G * D, cli.seed, (uint32_t)L, 1),
            fill(v, L * G * D, cli.seed, (uint32_t)L, 2);
        for (size_t r = 0; r < nr; r++) rows[r] = (r + 1) * L / nr - 1; /* evenly spaced, the last row included */
        drift_kv_cache_t kv;
        if (drift_kv_init(&kv, (int)G, (int)D, L, &kv64, err, sizeof err) ||
            drift_kv_append(&kv, k, v, L, err, sizeof err))
            die_lib("kv cache", -1, err);
        int rc = 0;
        /* references: per checked row (unrounded), and per format (rounded inputs) */
        DRIFT_OMP("omp parallel for schedule(dynamic, 1) reduction(|:rc)")
        for (size_t t = 0; t < nr * (size_t)(nf + 1); t++) {
            size_t r = t % nr, f = t / nr;
            size_t i = rows[r];
            double *qi = malloc(H * D * sizeof *qi), *kk = malloc((i + 1) * G * D * sizeof *kk),
                   *vv = malloc((i + 1) * G * D * sizeof *vv);
            if (!qi || !kk || !vv) {
                rc |= 1;
                free(qi), free(kk), free(vv);
                continue;
            }
            drift_format_t fm = f ? cli.formats[f - 1] : DRIFT_FP64;
            for (size_t j = 0; j < H * D; j++) qi[j] = drift_rne(q[i * H * D + j], fm);
            for (size_t j = 0; j < (i + 1) * G * D; j++) kk[j] = drift_rne(k[j], fm), vv[j] = drift_rne(v[j], fm);
            double *dst = f ? &ref_r[((f - 1) * nr + r) * H * D] : &ref_t[r * H * D];
            rc |= drift_attention_reference(dst, qi, kk, vv, 1, i + 1, i, NULL, &base, DRIFT_FP64, NULL, 0) != 0;
            free(qi), free(kk), free(vv);
        }
        if (rc) drift_die("the attention reference failed (out of memory or precision)");
        /* kernels on the checked rows */
        DRIFT_OMP("omp parallel for schedule(dynamic, 1) reduction(|:rc)")
        for (size_t t = 0; t < (size_t)nf * nc * nr; t++) {
            size_t r = t % nr, kk = (t / nr) % nc, f = t / nr / nc;
            drift_attn_opts_t ao = drift_attn_opts((int)heads, (int)kv_heads, (int)dim, cli.formats[f]);
            ao.kernel = kern[kk < (size_t)nk ? kk : (size_t)k_std];
            if (kk == (size_t)nk) ao.qk.out = DRIFT_FP32; /* the control */
            ao.pv.out = DRIFT_FP32;
            rc |= drift_dispatch_attention(&o[((f * nc + kk) * nr + r) * H * D], &q[rows[r] * H * D], 1, rows[r], &kv,
                      NULL, &ao, NULL, 0) != 0;
        }
        if (rc) drift_die("an attention kernel failed");
        for (int f = 0; f < nf; f++)
            for (int kk = 0; kk <= nk; kk++) {
                const double *oo = &o[((size_t)f * nc + (size_t)kk) * nr * H * D], *rr = &ref_r[(size_t)f * nr * H * D];
                double e2r = 0, e2t = 0, n2r = 0, n2t = 0, mx = 0;
                for (size_t j = 0; j < nr * H * D; j++) {
                    e2r += (oo[j] - rr[j]) * (oo[j] - rr[j]), n2r += rr[j] * rr[j];
                    e2t += (oo[j] - ref_t[j]) * (oo[j] - ref_t[j]), n2t += ref_t[j] * ref_t[j];
                    mx = fmax(mx, fabs(oo[j] - rr[j]));
                }
                const drift_attn_err_t e = {sqrt(e2r / n2r), sqrt(e2t / n2t), mx};
                if (kk < nk)
                    E[((size_t)li * (size_t)nf + (size_t)f) * (size_t)nk + (size_t)kk] = e;
                else
                    Ec[(size_t)li * (size_t)nf + (size_t)f] = e;
            }
        drift_kv_free(&kv);
        free(q), free(k), free(v), free(kr), free(vr), free(ref_t), free(ref_r), free(o), free(rows);
    }

    /* -- padding and prefill vs decode, at --decode-len tokens -- */
    const size_t n = (size_t)declen, P = (size_t)pad;
    long *pad_diff = calloc((size_t)nf * (size_t)nk * 2, sizeof *pad_diff),
         *dec_diff = calloc((size_t)nf * (size_t)nk, sizeof *dec_diff);
    double *pad_max = calloc((size_t)nf * (size_t)nk * 2, sizeof *pad_max),
           *dec_max = calloc((size_t)nf * (size_t)nk, sizeof *dec_max);
    double *q = malloc(n * H * D * sizeof *q), *k = malloc((n + P) * G * D * sizeof *k),
           *v = malloc((n + P) * G * D * sizeof *v);
    double *kp = malloc((n + P) * G * D * sizeof *kp), *vp = malloc((n + P) * G * D * sizeof *vp);
    unsigned char *mask = malloc(n + P);
    if (!pad_diff || !dec_diff || !pad_max || !dec_max || !q || !k || !v || !kp || !vp || !mask)
        drift_die_oom(8.0 * ((double)n * H * D + 4.0 * (n + P) * G * D),
            "the decode of %zu tokens with %zu padding (--decode-len, --pad, --heads, --dim: smaller)", n, P);
    fill(q, n * H * D, cli.seed, 0xDEC0u, 0), fill(k, (n + P) * G * D, cli.seed, 0xDEC0u, 1),
        fill(v, (n + P) * G * D, cli.seed, 0xDEC0u, 2);
    drift_progress(&cli, (size_t)nL, (size_t)nL + 2);
    int rc = 0;
    DRIFT_OMP("omp parallel for schedule(dynamic, 1) reduction(|:rc)")
    for (size_t t = 0; t < (size_t)nf * (size_t)nk; t++) {
        size_t kk = t % (size_t)nk, f = t / (size_t)nk;
        drift_attn_opts_t ao = drift_attn_opts((int)heads, (int)kv_heads, (int)dim, cli.formats[f]);
        ao.kernel = kern[kk];
        double *alone = malloc(n * H * D * sizeof *alone), *other = malloc(n * H * D * sizeof *other);
        double *kl = malloc((n + P) * G * D * sizeof *kl), *vl = malloc((n + P) * G * D * sizeof *vl);
        unsigned char *m = malloc(n + P);
        drift_kv_cache_t kv;
        if (!alone || !other || !kl || !vl || !m) {
            rc |= 1;
            free(alone), free(other), free(kl), free(vl), free(m);
            continue;
        }
        /* alone: the sequence's n keys, n queries (prefill in one call) */
        rc |= drift_kv_init(&kv, (int)G, (int)D, n + P, &kv64, NULL, 0) != 0;
        rc |= drift_kv_append(&kv, k, v, n, NULL, 0) != 0;
        rc |= drift_dispatch_attention(alone, q, n, 0, &kv, NULL, &ao, NULL, 0) != 0;
        /* right padding: P keys of other values after the sequence, masked */
        rc |= drift_kv_append(&kv, k + n * G * D, v + n * G * D, P, NULL, 0) != 0;
        for (size_t j = 0; j < n + P; j++) m[j] = j < n;
        rc |= drift_dispatch_attention(other, q, n, 0, &kv, m, &ao, NULL, 0) != 0;
        pad_diff[t * 2 + 1] = diff_count(&pad_max[t * 2 + 1], alone, other, n * H * D);
        drift_kv_free(&kv);
        /* left padding: the P other keys first, masked; the sequence at positions P.. */
        memcpy(kl, k + n * G * D, P * G * D * sizeof *kl), memcpy(kl + P * G * D, k, n * G * D * sizeof *kl);
        memcpy(vl, v + n * G * D, P * G * D * sizeof *vl), memcpy(vl + P * G * D, v, n * G * D * sizeof *vl);
        for (size_t j = 0; j < n + P; j++) m[j] = j >= P;
        rc |= drift_kv_init(&kv, (int)G, (int)D, n + P, &kv64, NULL, 0) != 0;
        rc |= drift_kv_append(&kv, kl, vl, n + P, NULL, 0) != 0;
        rc |= drift_dispatch_attention(other, q, n, P, &kv, m, &ao, NULL, 0) != 0;
        pad_diff[t * 2] = diff_count(&pad_max[t * 2], alone, other, n * H * D);
        drift_kv_free(&kv);
        /* decode: one query per step against the growing cache */
        rc |= drift_kv_init(&kv, (int)G, (int)D, n, &kv64, NULL, 0) != 0;
        for (size_t i = 0; i < n; i++) {
            rc |= drift_kv_append(&kv, k + i * G * D, v + i * G * D, 1, NULL, 0) != 0;
            rc |= drift_dispatch_attention_decode(other + i * H * D, q + i * H * D, &kv, &ao, NULL, 0) != 0;
        }
        drift_kv_free(&kv);
        long rowsd = 0;
        double mx = 0, md;
        for (size_t i = 0; i < n; i++) {
            rowsd += diff_count(&md, alone + i * H * D, other + i * H * D, H * D) > 0;
            mx = fmax(mx, md);
        }
        dec_diff[t] = rowsd, dec_max[t] = mx;
        free(alone), free(other), free(kl), free(vl), free(m);
    }
    if (rc) drift_die("the padding or decode runs failed (out of memory?)");
    drift_progress(&cli, (size_t)nL + 2, (size_t)nL + 2);

    const drift_attention_lab_t lab = {&cli, H, G, D, R, n, P, splits, ssize, nf, nL, nk, Ls.v, kern,
        (const char(*)[DRIFT_ATTN_SPEC_MAX])kname, (const char(*)[16])kfam, kbc, k_std, k_f64, E, Ec, pad_diff, pad_max,
        dec_diff, dec_max};
    drift_attention_write(&lab); /* attention_drift_report.c */
    free(E), free(Ec), free(pad_diff), free(dec_diff), free(pad_max), free(dec_max), free(q), free(k), free(v),
        free(kp), free(vp), free(mask);
    return 0;
}
