/* batch_invariance.c — does row 0 of a product change when more rows join the batch, and does
 * a batch-invariant policy (one tile, never split K) cure it?
 *
 * The test of Thinking Machines' batch_invariant_ops ("Defeating nondeterminism in LLM
 * inference", 2025): A = linspace(-100, 100) reshaped M_max x K, B = linspace(-100, 100)
 * reshaped K x N, and row 0 of (A[:M] B) compared bit for bit with (A[:1] B) for every
 * M = 1..M_max, under each policy of lib/ops/policy.h (vendor-like: cuBLAS-style heuristics on
 * --device; batch-invariant) and each input format (fp32 accumulation, fma).
 * Every emulated kernel computes each output in an order that depends only on the kernel, so
 * row 0 is computed once per distinct kernel; a full product checks that claim once per format.
 * Run: ./lab run batch_invariance [--device a100 --N 4096 --K 4096]; ./lab plot batch_invariance.
 * Look for: vendor-like changes row 0 once the batch is large enough for another split-K;
 * batch-invariant gives exactly zero difference, at the modelled cost in the .md fragment.
 * Files: .csv (a sample of M below --profile full), _summary.csv, _runs.csv (heatmap), .md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "drift.h"
#include "exact.h"
#include "format.h"
#include "metrics.h"
#include "gemm.h"
#include "policy.h"
#include "output.h"

#ifdef _OPENMP
#define DRIFT_OMP(x) _Pragma(x)
#else
#define DRIFT_OMP(x)
#endif

#define MAX_K 24
#define MAX_KERN 64 /* distinct kernels per (format, K): a handful in practice */

/* linspace(lo, hi, n)[t] as torch computes it for doubles is lo + t * step with
 * step = (hi - lo) / (n - 1); every value here is a double, then rounded to the format. */
static double linspace_at(double lo, double hi, size_t n, size_t t)
{
    return n < 2 ? lo : lo + (double)t * ((hi - lo) / (double)(n - 1));
}

/* The kernel spec with its commas as x, for tools that split on every comma. */
static void kernel_key(char *key, const char *spec)
{
    size_t i = 0;
    for (; spec[i] && i + 1 < DRIFT_GEMM_KERNEL_SPEC_MAX; i++) key[i] = spec[i] == ',' ? 'x' : spec[i];
    key[i] = 0;
}

typedef struct {
    drift_gemm_kernel_t k;
    double *row; /* row 0 of A B under k (N values) */
} kcache_t;

typedef struct {
    int f, p, ki;
    size_t M;
    int kc; /* index into the kernel cache of (f, ki) */
    double max_diff;
    long n_diff;
    double cost;
} row_t;

int main(int argc, char **argv)
{
    long Nopt = 0, Mmax_opt = 0;
    drift_intlist_t Ks = {{0}, 0};
    const char *device_opt = "h100";
    const drift_cli_opt_t opts[] = {
        {"K", DRIFT_OPT_INTLIST, &Ks, "N,N,...", "inner dimensions", 1, 1 << 20,
         {"256,1024,4096", "256,512,1024,2048,4096,8192", "256,512,1024,2048,4096,8192,16384"}},
        {"N", DRIFT_OPT_INT, &Nopt, "N", "columns of B", 1, 1 << 16, {"256", "1024", "4096"}},
        {"M-max", DRIFT_OPT_INT, &Mmax_opt, "N", "largest batch M", 1, 1 << 16, {"256", "2048", "2048"}},
        {"device", DRIFT_OPT_STRING, &device_opt, "NAME", "device of the vendor-like model: v100, a100, h100, b200 (default h100)",
         0, 0, {0}},
    };
    const drift_cli_spec_t spec = {
        "batch_invariance",
        "Does row 0 of a product change when more rows join the batch, and does a batch-invariant policy cure it?",
        "fp32,tf32,bf16,fp16",
        "seq",
        opts,
        (int)(sizeof opts / sizeof opts[0]),
        "sweeps GEMM kernels, not reduction orders (the kernels come from the policies; each kernel's order is in the CSV)",
        "CPU emulation only for now",
    };
    drift_cli_t cli;
    drift_cli_parse(&cli, &spec, argc, argv);
    drift_device_t dev;
    if (drift_device_lookup(&dev, device_opt)) drift_die("--device: unknown device '%s' (accepted: v100, a100, h100, b200)", device_opt);
    for (int f = 0; f < cli.nformats; f++)
        if (cli.formats[f] == DRIFT_FP64) drift_die("--formats: fp64 inputs are not swept here (accepted: fp32, tf32, bf16, fp16, fp8e4m3, fp8e5m2)");

    size_t N = (size_t)Nopt, Mmax = (size_t)Mmax_opt, Kv[MAX_K];
    int nK = 0;
    for (int t = 0; t < Ks.n && nK < MAX_K; t++) Kv[nK++] = (size_t)Ks.v[t];
    const int nf = cli.nformats, np = DRIFT_NPOLICIES;

    /* -- sweep -- */
    size_t nrows_max = (size_t)nf * np * nK * Mmax;
    row_t *rows = calloc(nrows_max, sizeof *rows);
    kcache_t *cache = calloc((size_t)nf * nK * MAX_KERN, sizeof *cache);
    int *ncache = calloc((size_t)nf * nK, sizeof *ncache);
    double *exact = malloc((size_t)nf * nK * N * sizeof *exact); /* exact row 0 per (format, K) */
    if (!rows || !cache || !ncache || !exact) drift_die("out of memory");
    size_t nrows = 0;
    size_t Kmax = 0;
    for (int t = 0; t < nK; t++)
        if (Kv[t] > Kmax) Kmax = Kv[t];
    double *A0 = malloc(Kmax * sizeof *A0), *B = malloc(Kmax * N * sizeof *B), *Br = malloc(Kmax * N * sizeof *Br);
    double *A0r = malloc(Kmax * sizeof *A0r), *col = malloc(Kmax * sizeof *col);
    if (!A0 || !B || !Br || !A0r || !col) drift_die("out of memory");
    int checked = 0;
    for (int ki = 0; ki < nK; ki++) {
        size_t K = Kv[ki];
        drift_progress(&cli, (size_t)ki, (size_t)nK);
        for (size_t k = 0; k < K; k++) A0[k] = linspace_at(-100, 100, Mmax * K, k); /* row 0 of A */
        for (size_t t = 0; t < K * N; t++) B[t] = linspace_at(-100, 100, K * N, t);
        for (int f = 0; f < nf; f++) {
            drift_format_t in = cli.formats[f];
            /* exact row 0 of the rounded inputs */
            for (size_t k = 0; k < K; k++) A0r[k] = drift_rne(A0[k], in);
            for (size_t t = 0; t < K * N; t++) Br[t] = drift_rne(B[t], in);
            double *ex = exact + ((size_t)f * nK + ki) * N;
            int fail = 0;
            DRIFT_OMP("omp parallel for schedule(static) reduction(| : fail)")
            for (size_t j = 0; j < N; j++) {
                double *c = malloc(K * sizeof *c);
                if (!c) {
                    fail = 1;
                    continue;
                }
                for (size_t k = 0; k < K; k++) c[k] = Br[k * N + j];
                fail |= drift_exact_dot(&ex[j], A0r, c, K, DRIFT_FP64, DRIFT_RNE) != 0;
                free(c);
            }
            if (fail) drift_die("exact reference failed");
            kcache_t *kc = cache + ((size_t)f * nK + ki) * MAX_KERN;
            int *nc = &ncache[f * nK + ki];
            drift_gemm_opts_t o = drift_gemm_opts(in, DRIFT_FP32);
            for (int p = 0; p < np; p++) {
                int base = -1; /* the kernel of M = 1 */
                for (size_t M = 1; M <= Mmax; M++) {
                    drift_gemm_kernel_t k;
                    if (drift_policy_choose(&k, (drift_policy_t)p, M, N, K, dev.sms)) drift_die("policy failed");
                    int c = -1;
                    for (int t = 0; t < *nc; t++)
                        if (drift_gemm_kernel_equal(&kc[t].k, &k)) c = t;
                    if (c < 0) {
                        if (*nc == MAX_KERN) drift_die("more than %d kernels for one shape family", MAX_KERN);
                        c = (*nc)++;
                        kc[c].k = k;
                        kc[c].row = malloc(N * sizeof(double));
                        if (!kc[c].row) drift_die("out of memory");
                        int rc = drift_gemm(kc[c].row, A0, B, 1, N, K, &k, &o);
                        if (rc) drift_die("drift_gemm failed: %s", drift_strerror(rc));
                    }
                    if (M == 1) base = c;
                    row_t *r = &rows[nrows++];
                    r->f = f, r->p = p, r->ki = ki, r->M = M, r->kc = c;
                    r->max_diff = 0, r->n_diff = 0;
                    for (size_t j = 0; j < N; j++) {
                        double a = kc[c].row[j], b = kc[base].row[j];
                        if (memcmp(&a, &b, sizeof a) != 0) {
                            r->n_diff++;
                            double d = drift_abs_err(a, b);
                            if (d > r->max_diff || isnan(d)) r->max_diff = d;
                        }
                    }
                    r->cost = drift_policy_cost(&k, M, N, K, dev.sms);
                    /* Self-check of the row-0 shortcut: once per format, the full product
                     * A[:M] B for the first M whose kernel differs from M = 1's (if that M is
                     * small enough to be cheap), row 0 compared bit for bit. */
                    if (!(checked & (1 << f)) && c != base && M <= 512 && (size_t)M * N * K <= ((size_t)1 << 31)) {
                        double *Af = malloc(M * K * sizeof *Af), *Cf = malloc(M * N * sizeof *Cf);
                        if (!Af || !Cf) drift_die("out of memory");
                        for (size_t t = 0; t < M * K; t++) Af[t] = linspace_at(-100, 100, Mmax * K, t);
                        int rc = drift_gemm(Cf, Af, B, M, N, K, &k, &o);
                        if (rc) drift_die("drift_gemm failed: %s", drift_strerror(rc));
                        if (memcmp(Cf, kc[c].row, N * sizeof *Cf) != 0)
                            drift_die("self-check failed: row 0 of the full product differs from the row-0 shortcut");
                        checked |= 1 << f;
                        free(Af), free(Cf);
                    }
                }
            }
        }
    }
    drift_progress(&cli, (size_t)nK, (size_t)nK);

    /* -- per (format, policy, K) summary -- */
    typedef struct {
        int distinct;      /* distinct row-0 vectors over M */
        double max_diff;   /* over M */
        size_t first_M;    /* smallest M whose row 0 differs from M = 1 (0: none) */
        long m_changed;    /* M values whose row 0 differs */
        double nmse_min, nmse_max; /* NMSE of row 0 against exact, over the kernels used */
        double cost1;      /* modelled cost at M = 1 */
    } sum_t;
    sum_t *sum = calloc((size_t)nf * np * nK, sizeof *sum);
    if (!sum) drift_die("out of memory");
    for (int f = 0; f < nf; f++)
        for (int p = 0; p < np; p++)
            for (int ki = 0; ki < nK; ki++) {
                sum_t *s = &sum[(f * np + p) * nK + ki];
                const kcache_t *kc = cache + ((size_t)f * nK + ki) * MAX_KERN;
                const double *ex = exact + ((size_t)f * nK + ki) * N;
                int used[MAX_KERN] = {0};
                s->nmse_min = INFINITY;
                for (size_t t = 0; t < nrows; t++) {
                    const row_t *r = &rows[t];
                    if (r->f != f || r->p != p || r->ki != ki) continue;
                    used[r->kc] = 1;
                    if (r->n_diff) {
                        s->m_changed++;
                        if (!s->first_M) s->first_M = r->M;
                        if (r->max_diff > s->max_diff) s->max_diff = r->max_diff;
                    }
                    if (r->M == 1) s->cost1 = r->cost;
                }
                /* distinct row vectors among the kernels used */
                int reps[MAX_KERN], nr = 0;
                for (int c = 0; c < MAX_KERN; c++) {
                    if (!used[c]) continue;
                    double nm = drift_nmse(kc[c].row, ex, N);
                    if (nm < s->nmse_min) s->nmse_min = nm;
                    if (nm > s->nmse_max) s->nmse_max = nm;
                    int dup = 0;
                    for (int q = 0; q < nr; q++)
                        if (!memcmp(kc[reps[q]].row, kc[c].row, N * sizeof(double))) dup = 1;
                    if (!dup) reps[nr++] = c;
                }
                s->distinct = nr;
            }

    /* -- write -- */
    enum { T_MAIN, T_SUM, T_RUNS, T_MD };
    static const drift_col_t MAIN[] = {
        DRIFT_C_TEXT("format"), DRIFT_C_TEXT("policy"), DRIFT_C_INT("K"), DRIFT_C_INT("M"),
        DRIFT_C_TEXT("kernel_key"), DRIFT_C_TEXT("order"), DRIFT_C_INT("changed"),
        DRIFT_C_NUM("max_abs_diff", "%.9g"), DRIFT_C_INT("n_diff"), DRIFT_C_NUM("cost_model", "%.6g"),
        DRIFT_C_HEX("row0_c0_hex"), DRIFT_C_QUOTED("kernel")};
    static const drift_col_t SUM[] = {
        DRIFT_C_TEXT("format"), DRIFT_C_TEXT("policy"), DRIFT_C_INT("K"), DRIFT_C_INT("distinct_row0"),
        DRIFT_C_INT("m_changed"), DRIFT_C_INT("first_M_changed"), DRIFT_C_NUM("max_abs_diff", "%.9g"),
        DRIFT_C_NUM("nmse_min", "%.6e"), DRIFT_C_NUM("nmse_max", "%.6e"), DRIFT_C_NUM("cost_m1", "%.6g"),
        DRIFT_C_NUM("cost_ratio_bi_vendor_m1", "%.4f")};
    static const drift_col_t RUNS[] = {
        DRIFT_C_TEXT("format"), DRIFT_C_TEXT("policy"), DRIFT_C_INT("K"), DRIFT_C_INT("M_first"),
        DRIFT_C_INT("M_last"), DRIFT_C_TEXT("kernel_key"), DRIFT_C_INT("changed"),
        DRIFT_C_NUM("max_abs_diff", "%.9g")};
    static const drift_col_t MD[] = {
        DRIFT_C_TEXT("format"), DRIFT_C_INT("K"), DRIFT_C_INT("vendor-like: M changed"),
        DRIFT_C_INT("distinct"), DRIFT_C_NUM("max abs diff", "%.3g"), DRIFT_C_INT("batch-invariant: M changed"),
        DRIFT_C_INT("distinct"), DRIFT_C_NUM("max abs diff", "%.3g")};
    static const drift_table_spec_t TABLES[] = {
        {".csv", NULL, 0, MAIN, 12}, {"_summary.csv", NULL, 0, SUM, 11}, {"_runs.csv", NULL, 0, RUNS, 8},
        {NULL, NULL, DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT, MD, 8}};
    drift_out_t out;
    drift_out_open(&out, &cli, TABLES, 4, 1);
    drift_out_meta(&out, T_MAIN, "quoting", "kernel = the canonical spec, double-quoted and last (tiled:BM,BN,BK holds commas); kernel_key = the same with commas as x, for tools that split on every comma");
    drift_out_meta(&out, T_MAIN, "table", "row 0 of (A[:M] B) against row 0 of (A[:1] B), per policy");
    drift_out_meta(&out, T_MAIN, "inputs",
                   "A = linspace(-100, 100, %zu * K) reshaped %zu x K; B = linspace(-100, 100, K * %zu) reshaped K x %zu; "
                   "rounded to the format (RNE); fp32 accumulation, fma",
                   Mmax, Mmax, N, N);
    const int all_rows = cli.profile == DRIFT_PROFILE_FULL;
    drift_out_meta(&out, T_MAIN, "rows", "%s",
                   all_rows ? "every M" : "a sample of M: M <= 16, multiples of 32, 2^k-1, 2^k, 2^k+1, the ends of "
                                          "every run of M with one kernel (all M are in the summaries and in _runs.csv)");
    drift_out_meta(&out, T_MAIN, "device", "%s (%d SMs) for the vendor-like model (lib/ops/policy.h)", dev.name, dev.sms);
    drift_out_meta(&out, T_MAIN, "columns",
                   "max_abs_diff and n_diff over the %zu outputs of row 0 (bitwise comparison); cost_model = "
                   "drift_policy_cost (modelled GPU time, MAC units per SM), not a measurement",
                   N);
    /* Rows in (format, policy, K, M) order (computed in (K, format, policy, M) order): each
     * heatmap row and each curve of the plots is contiguous. Below the full profile, a sample
     * of M (the summaries cover every M; _runs.csv has every run). */
    for (size_t t1 = 0; t1 < nrows; t1++) {
        size_t M0 = t1 % Mmax, blk = t1 / Mmax;
        int ki = (int)(blk % (size_t)nK), p = (int)(blk / (size_t)nK % (size_t)np), f = (int)(blk / (size_t)nK / (size_t)np);
        const row_t *base = &rows[(((size_t)ki * nf + f) * np + p) * Mmax];
        const row_t *r = &base[M0];
        size_t M = r->M;
        int edge = (M0 > 0 && base[M0 - 1].kc != r->kc) || (M0 + 1 < Mmax && base[M0 + 1].kc != r->kc);
        int pow2ish = ((M & (M - 1)) == 0) || (((M + 1) & M) == 0) || (M > 1 && ((M - 1) & (M - 2)) == 0);
        if (!all_rows && !(M <= 16 || M % 32 == 0 || pow2ish || edge || M == Mmax)) continue;
        const kcache_t *kc = cache + ((size_t)r->f * nK + r->ki) * MAX_KERN + r->kc;
        char ks[DRIFT_GEMM_KERNEL_SPEC_MAX], os[DRIFT_ORDER_SPEC_MAX], key[DRIFT_GEMM_KERNEL_SPEC_MAX];
        drift_order_t o;
        drift_gemm_kernel_print(ks, sizeof ks, &kc->k);
        drift_gemm_kernel_order(&o, &kc->k);
        if (drift_order_print(os, sizeof os, &o) < 0) snprintf(os, sizeof os, "?");
        kernel_key(key, ks);
        drift_row(&out, T_MAIN, DRIFT_TXT(drift_format_name(cli.formats[r->f])), DRIFT_TXT(drift_policy_name((drift_policy_t)r->p)),
                  DRIFT_INT(Kv[r->ki]), DRIFT_INT(r->M), DRIFT_TXT(key), DRIFT_TXT(os), DRIFT_INT(r->n_diff > 0),
                  DRIFT_NUM(r->max_diff), DRIFT_INT(r->n_diff), DRIFT_NUM(r->cost), DRIFT_NUM(kc->row[0]), DRIFT_TXT(ks));
    }
    drift_out_meta(&out, T_SUM, "table", "per (format, policy, K), over M = 1..%zu", Mmax);
    drift_out_meta(&out, T_SUM, "columns",
                   "distinct_row0 = distinct row-0 vectors; m_changed = M values whose row 0 differs from M = 1; "
                   "nmse_* = NMSE of row 0 against the exact row (drift_exact_dot), over the kernels used; "
                   "cost_ratio_bi_vendor_m1 = modelled cost of batch-invariant / vendor-like at M = 1");
    drift_out_meta(&out, T_RUNS, "table",
                   "maximal runs M_first..M_last of batch sizes with the same kernel, hence the same row 0 "
                   "(the rows of batch_invariance.csv, compressed for the heatmap)");
    for (int f = 0; f < nf; f++)
        for (int p = 0; p < np; p++)
            for (int ki = 0; ki < nK; ki++) {
                const sum_t *s = &sum[(f * np + p) * nK + ki];
                double ratio = sum[(f * np + DRIFT_POLICY_BATCH_INVARIANT) * nK + ki].cost1 /
                               sum[(f * np + DRIFT_POLICY_VENDOR_LIKE) * nK + ki].cost1;
                const char *fn = drift_format_name(cli.formats[f]), *pn = drift_policy_name((drift_policy_t)p);
                drift_row(&out, T_SUM, DRIFT_TXT(fn), DRIFT_TXT(pn), DRIFT_INT(Kv[ki]), DRIFT_INT(s->distinct),
                          DRIFT_INT(s->m_changed), DRIFT_INT(s->first_M), DRIFT_NUM(s->max_diff), DRIFT_NUM(s->nmse_min),
                          DRIFT_NUM(s->nmse_max), DRIFT_NUM(s->cost1), DRIFT_NUM(ratio));
                /* runs of consecutive M with the same kernel (hence the same row 0): the heatmap */
                const row_t *blk = &rows[(((size_t)ki * nf + f) * np + p) * Mmax];
                size_t m0 = 0;
                for (size_t m = 1; m <= Mmax; m++) {
                    if (m < Mmax && blk[m].kc == blk[m0].kc) continue;
                    char ks[DRIFT_GEMM_KERNEL_SPEC_MAX], key[DRIFT_GEMM_KERNEL_SPEC_MAX];
                    drift_gemm_kernel_print(ks, sizeof ks, &cache[((size_t)f * nK + ki) * MAX_KERN + blk[m0].kc].k);
                    kernel_key(key, ks);
                    drift_row(&out, T_RUNS, DRIFT_TXT(fn), DRIFT_TXT(pn), DRIFT_INT(Kv[ki]), DRIFT_INT(blk[m0].M),
                              DRIFT_INT(blk[m - 1].M), DRIFT_TXT(key), DRIFT_INT(blk[m0].n_diff > 0), DRIFT_NUM(blk[m0].max_diff));
                    m0 = m;
                }
            }

    /* report fragment: every number from the arrays above */
    FILE *fp = out.md;
    long bi_changed = 0, vl_changed = 0, vl_total = 0;
    for (size_t t = 0; t < nrows; t++) {
        if (rows[t].p == DRIFT_POLICY_BATCH_INVARIANT) bi_changed += rows[t].n_diff > 0;
        if (rows[t].p == DRIFT_POLICY_VENDOR_LIKE) vl_changed += rows[t].n_diff > 0, vl_total++;
    }
    fprintf(fp, "**Question.** %s The test of Thinking Machines' batch_invariant_ops: A = linspace(-100, 100) "
                "reshaped %zu x K, B = linspace(-100, 100) reshaped K x %zu, and row 0 of (A[:M] B) compared bit for "
                "bit with (A[:1] B) for every M = 1..%zu; vendor-like is a model of a BLAS heuristic on an %s "
                "(%d SMs), batch-invariant fixes one tile and never splits K (lib/ops/policy.h).\n\n",
            spec.question, Mmax, N, Mmax, dev.name, dev.sms);
    fprintf(fp, "Reproduce: `./lab run batch_invariance --seed %llu --profile %s` (data/batch_invariance*.csv).\n\n",
            (unsigned long long)cli.seed, drift_profile_name(cli.profile));
    fprintf(fp, "**Row 0 across batch sizes** (per K: batch sizes M whose row 0 differs from M = 1, of %zu; distinct "
                "row-0 results; largest |difference|):\n\n", Mmax);
    for (int f = 0; f < nf; f++)
        for (int ki = 0; ki < nK; ki++) {
            const sum_t *v = &sum[(f * np + DRIFT_POLICY_VENDOR_LIKE) * nK + ki];
            const sum_t *b = &sum[(f * np + DRIFT_POLICY_BATCH_INVARIANT) * nK + ki];
            drift_row(&out, T_MD, DRIFT_TXT(drift_format_name(cli.formats[f])), DRIFT_INT(Kv[ki]), DRIFT_INT(v->m_changed),
                      DRIFT_INT(v->distinct), DRIFT_NUM(v->max_diff), DRIFT_INT(b->m_changed), DRIFT_INT(b->distinct),
                      DRIFT_NUM(b->max_diff));
        }
    drift_md_end(&out, T_MD);
    fprintf(fp, "**Takeaway.**\n\n");
    fprintf(fp, "- Under vendor-like, row 0 changed with the batch in %ld of %ld (format, K, M) cases; under "
                "batch-invariant in %ld: %s.\n",
            vl_changed, vl_total, bi_changed,
            bi_changed == 0 ? "exactly zero difference everywhere, as it must be" : "NOT ZERO, which is a bug");
    for (int f = 0; f < nf; f++) {
        if (cli.formats[f] != DRIFT_BF16 && nf > 1 && f != 0) continue;
        int ki = nK - 1;
        for (int t = 0; t < nK; t++)
            if (Kv[t] == 4096) ki = t;
        const sum_t *v = &sum[(f * np + DRIFT_POLICY_VENDOR_LIKE) * nK + ki];
        if (v->first_M)
            fprintf(fp, "- %s, K = %zu: row 0 first changes at M = %zu and takes %d distinct values over the batch sizes; "
                        "the NMSE of row 0 against the exact row ranges from %.3g to %.3g across the kernels the policy "
                        "picks, so no choice is \"the\" right answer.\n",
                    drift_format_name(cli.formats[f]), Kv[ki], v->first_M, v->distinct, v->nmse_min, v->nmse_max);
    }
    {
        /* modelled cost ratios batch-invariant / vendor-like at M = 1 and at M = Mmax, first format */
        double rmin = INFINITY, rmax = 0, bmin = INFINITY, bmax = 0;
        for (int ki = 0; ki < nK; ki++) {
            double r = sum[(0 * np + DRIFT_POLICY_BATCH_INVARIANT) * nK + ki].cost1 /
                       sum[(0 * np + DRIFT_POLICY_VENDOR_LIKE) * nK + ki].cost1;
            const row_t *v = &rows[(((size_t)ki * nf + 0) * np + DRIFT_POLICY_VENDOR_LIKE) * Mmax + Mmax - 1];
            const row_t *b = &rows[(((size_t)ki * nf + 0) * np + DRIFT_POLICY_BATCH_INVARIANT) * Mmax + Mmax - 1];
            double rb = b->cost / v->cost;
            if (r < rmin) rmin = r;
            if (r > rmax) rmax = r;
            if (rb < bmin) bmin = rb;
            if (rb > bmax) bmax = rb;
        }
        fprintf(fp, "- The cure's cost, modelled (not measured; policy.h's toy roofline of an %s): at M = 1 the "
                    "batch-invariant kernel takes %.2fx to %.2fx the vendor-like time over K = %zu..%zu, because it "
                    "leaves most multiprocessors idle instead of splitting K; at M = %zu the ratio is %.2fx to %.2fx. "
                    "The CUDA backend will measure the real ratio.\n",
                dev.name, rmin, rmax, Kv[0], Kv[nK - 1], Mmax, bmin, bmax);
    }

    drift_out_commit(&out);
    if (!cli.quiet)
        printf("\nWhat you just saw: the vendor-like policy splits K when the batch is too small to fill the\n"
               "device, and stops splitting as the batch grows, so the same row is summed in a different order\n"
               "and its bits change with the batch size. The batch-invariant policy uses one order for every\n"
               "shape: zero difference, at the modelled cost in %s/batch_invariance.md.\n",
               cli.out_dir);
    for (int t = 0; t < nf * nK * MAX_KERN; t++) free(cache[t].row);
    free(cache), free(ncache), free(exact), free(rows), free(sum), free(A0), free(B), free(Br), free(A0r), free(col);
    return 0;
}
