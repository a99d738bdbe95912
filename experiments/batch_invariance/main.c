/* batch_invariance.c — does row 0 of a product change when more rows join the batch, and does
 * a batch-invariant policy (one tile, never split K) cure it? The test of Thinking Machines'
 * batch_invariant_ops (2025): row 0 of (A[:M] B) against (A[:1] B), every M = 1..M_max, under
 * each policy of lib/ops/policy.h and each input format (the measurement: batch_sweep.h beside this file).
 * Data (--data): random (default; A and B N(0,1) from Philox, condition number sum|ab|/|sum ab|
 * of a typical dot product) or linspace(-100, 100) as in batch_invariant_ops, a labelled worst
 * case whose row 0 is ill-conditioned (its condition number is printed). fp32 inputs run on
 * fp32 FMA; bf16, fp16 and tf32 run through the tensor-core model of --device (gpu_gemm.h).
 * What the cure costs is batch_invariance_cost's question (the same kernels, modelled).
 * Look for: vendor-like changes row 0 once the batch is large enough for another split-K;
 * batch-invariant gives exactly zero difference. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "batch_sweep.h"
#include "cli.h"
#include "drift.h"
#include "output.h"

enum { T_MAIN, T_SUM, T_RUNS, T_MD };
static const drift_col_t MAIN[] = {DRIFT_C_TEXT("format"), DRIFT_C_TEXT("policy"), DRIFT_C_INT("K"), DRIFT_C_INT("M"),
    DRIFT_C_KEY("kernel_key"), DRIFT_C_TEXT("order"), DRIFT_C_INT("changed"), DRIFT_C_NUM("max_abs_diff", "%.9g"),
    DRIFT_C_INT("n_diff"), DRIFT_C_HEX("row0_c0_hex"), DRIFT_C_QUOTED("kernel")};
static const drift_col_t SUM[] = {DRIFT_C_TEXT("format"), DRIFT_C_TEXT("policy"), DRIFT_C_INT("K"),
    DRIFT_C_INT("distinct_row0"), DRIFT_C_INT("m_changed"), DRIFT_C_INT("first_M_changed"),
    DRIFT_C_NUM("max_abs_diff", "%.9g"), DRIFT_C_NUM("nmse_min", "%.6e"), DRIFT_C_NUM("nmse_max", "%.6e"),
    DRIFT_C_NUM("cond_median", "%.4g"), DRIFT_C_TEXT("arithmetic")};
static const drift_col_t RUNS[] = {DRIFT_C_TEXT("format"), DRIFT_C_TEXT("policy"), DRIFT_C_INT("K"),
    DRIFT_C_INT("M_first"), DRIFT_C_INT("M_last"), DRIFT_C_KEY("kernel_key"), DRIFT_C_INT("changed"),
    DRIFT_C_NUM("max_abs_diff", "%.9g")};
static const drift_col_t MD[] = {DRIFT_C_TEXT("format"), DRIFT_C_INT("K"), DRIFT_C_INT("vendor-like: M changed"),
    DRIFT_C_INT("distinct"), DRIFT_C_NUM("max abs diff", "%.3g"), DRIFT_C_INT("batch-invariant: M changed"),
    DRIFT_C_INT("distinct"), DRIFT_C_NUM("max abs diff", "%.3g")};
static const drift_table_spec_t TABLES[] = {{".csv", NULL, 0, MAIN, 11}, {"_summary.csv", NULL, 0, SUM, 11},
    {"_runs.csv", NULL, 0, RUNS, 8}, {NULL, NULL, DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT, MD, 8}};

static void progress(void *cli, size_t done, size_t total) { drift_progress(cli, done, total); }

/* The rows of one (format, policy, K): every M in _runs.csv as runs of one kernel, the sampled
 * M (all under --profile full) in the main CSV. */
static void write_rows(drift_out_t *out, const drift_batch_sweep_t *bt, int f, int p, int ki, int all_rows)
{
    const drift_batch_row_t *blk = drift_batch_sweep_rows(bt, f, p, ki);
    const drift_row0_cache_t *kc = drift_batch_sweep_cache(bt, f, ki);
    const size_t Mmax = bt->cfg.Mmax;
    const char *fn = drift_format_name(bt->cfg.formats[f]), *pn = drift_policy_name((drift_policy_t)p);
    const long K = bt->cfg.K[ki];
    char ks[DRIFT_GEMM_KERNEL_SPEC_MAX], os[DRIFT_ORDER_SPEC_MAX];
    for (size_t M0 = 0, m0 = 0; M0 < Mmax; M0++) {
        const drift_batch_row_t *r = &blk[M0];
        drift_gemm_kernel_print(ks, sizeof ks, &kc->kern[r->kc]);
        if (M0 + 1 == Mmax || blk[M0 + 1].kc != blk[m0].kc) { /* the end of a run of one kernel */
            drift_row(out, T_RUNS, DRIFT_TXT(fn), DRIFT_TXT(pn), DRIFT_INT(K), DRIFT_INT(blk[m0].M), DRIFT_INT(r->M),
                DRIFT_TXT(ks), DRIFT_INT(blk[m0].n_diff > 0), DRIFT_NUM(blk[m0].max_diff));
            m0 = M0 + 1;
        }
        if (!all_rows && !drift_batch_sweep_sampled(blk, Mmax, M0)) continue;
        drift_order_t o;
        if (drift_gemm_kernel_order(&o, &kc->kern[r->kc]) || drift_order_print(os, sizeof os, &o) < 0)
            snprintf(os, sizeof os, "?");
        drift_row(out, T_MAIN, DRIFT_TXT(fn), DRIFT_TXT(pn), DRIFT_INT(K), DRIFT_INT(r->M), DRIFT_TXT(ks),
            DRIFT_TXT(os), DRIFT_INT(r->n_diff > 0), DRIFT_NUM(r->max_diff), DRIFT_INT(r->n_diff),
            DRIFT_NUM(kc->row[r->kc][0]), DRIFT_TXT(ks));
    }
}

int main(int argc, char **argv)
{
    long N_ = 0, Mmax_ = 0;
    int all_rows = 0;
    drift_intlist_t Ks = {{0}, 0};
    const char *device_opt = "h100", *data_opt = "random";
    const drift_cli_opt_t opts[] = {
        {"K", DRIFT_OPT_INTLIST, &Ks, "N,N,...", "inner dimensions", 1, 1 << 20,
            {"256,1024,4096", "256,512,1024,2048,4096,8192", "256,512,1024,2048,4096,8192,16384"}},
        {"N", DRIFT_OPT_INT, &N_, "N", "columns of B", 1, 1 << 16, {"256", "1024", "4096"}},
        {"M-max", DRIFT_OPT_INT, &Mmax_, "N", "largest batch M", 1, 1 << 16, {"256", "2048", "2048"}},
        {"device", DRIFT_OPT_STRING, &device_opt, "NAME",
            "vendor-like model's device: v100, a100, h100, b200 (default h100)", 0, 0, {0}},
        {"data", DRIFT_OPT_STRING, &data_opt, "KIND",
            "random (N(0,1), default) or linspace (batch_invariant_ops' worst case)", 0, 0, {0}},
        {"all-rows", DRIFT_OPT_FLAG, &all_rows, "", "every batch size M in batch_invariance.csv, not a sample", 0, 0,
            {NULL, NULL, "1"}},
    };
    const drift_cli_spec_t spec = {.name = "batch_invariance",
        .question =
            "Does row 0 of a product change when more rows join the batch, and does a batch-invariant policy cure it?",
        .default_formats = "fp32,tf32,bf16,fp16",
        .default_orders = "seq",
        DRIFT_CLI_OPTS(opts),
        .no_orders =
            "sweeps GEMM kernels, not reduction orders (the kernels come from the policies; each kernel's order is in the CSV)",
        .cpu_only = NULL, /* the full products go through the dispatcher (--backend cuda) */
        .summary =
            "the vendor-like policy splits K when the batch is too small to fill the device, and stops splitting as the "
            "batch grows, so the same row is summed in a different order and its bits change with the batch size. The "
            "batch-invariant policy uses one order for every shape: zero difference, at the modelled cost that "
            "batch_invariance_cost gives."};
    drift_cli_t cli;
    drift_cli_parse(&cli, &spec, argc, argv);
    drift_device_t dev;
    if (drift_device_lookup(&dev, device_opt))
        drift_die("--device: unknown device '%s' (accepted: v100, a100, h100, b200)", device_opt);
    if (strcmp(data_opt, "random") && strcmp(data_opt, "linspace"))
        drift_die("--data: unknown '%s' (accepted: random, linspace)", data_opt);
    const int random_data = !strcmp(data_opt, "random");
    for (int f = 0; f < cli.nformats; f++)
        if (cli.formats[f] == DRIFT_FP64)
            drift_die("--formats: fp64 inputs are not swept here (accepted: fp32, tf32, bf16, fp16, fp8e4m3, fp8e5m2)");
    const size_t N = (size_t)N_, Mmax = (size_t)Mmax_;
    const int nf = cli.nformats, np = DRIFT_NPOLICIES, nK = Ks.n;
    drift_require_memory(&cli, 16.0 * (double)drift_intlist_max(&Ks) * (double)(Mmax + N), "--K, --N, --M-max");

    const drift_batch_sweep_cfg_t cfg = {
        cli.formats, nf, Ks.v, nK, N, Mmax, random_data ? DRIFT_ROWS_NORMAL : DRIFT_ROWS_LINSPACE, cli.seed, dev.name};
    drift_batch_sweep_t bt;
    char why[256];
    double lin_cond = NAN; /* the labelled worst case: linspace's condition number at the last K, first format */
    if (drift_batch_sweep_run(&bt, &cfg, progress, &cli, why, sizeof why)) drift_die("%s", why);
    if (drift_batch_sweep_linspace_cond(&lin_cond, &cfg, (size_t)Ks.v[nK - 1], cli.formats[0]))
        drift_die("the condition numbers at K = %ld: out of memory (--K, --N, --M-max: smaller)", Ks.v[nK - 1]);

    /* -- write -- */
    drift_out_t out;
    drift_out_open(&out, &cli, TABLES, 4, 1);
    drift_out_meta(&out, T_MAIN, "quoting",
        "kernel = the canonical spec, double-quoted and last (tiled:BM,BN,BK holds commas); "
        "kernel_key = the same with commas as x, for tools that split on every comma");
    drift_out_meta(&out, T_MAIN, "table", "row 0 of (A[:M] B) against row 0 of (A[:1] B), per policy");
    if (random_data)
        drift_out_meta(&out, T_MAIN, "inputs",
            "A (%zu x K) and B (K x %zu) N(0,1) rounded to fp32 (Philox, seed %llu), then to the format (RNE)", Mmax, N,
            (unsigned long long)cli.seed);
    else
        drift_out_meta(&out, T_MAIN, "inputs",
            "A = linspace(-100, 100, %zu * K) reshaped %zu x K; B = linspace(-100, 100, K * %zu) reshaped K x %zu; "
            "rounded to the format (RNE): the worst case of batch_invariant_ops",
            Mmax, Mmax, N, N);
    drift_out_meta(&out, T_MAIN, "arithmetic",
        "fp32 and fp64 inputs: fp32 FMA in the kernel's order; bf16, fp16, tf32: the tensor-core model of %s (tc_model.h), "
        "a split-K plan as mma:ARCH,ceil(K/S) (gemm_mma.h)",
        dev.name);
    drift_out_meta(&out, T_MAIN, "rows", "%s",
        all_rows ? "every M"
                 : "a sample of M: M <= 16, multiples of 32, 2^k-1, 2^k, 2^k+1, "
                   "the ends of every run of M with one kernel (all M are in the summaries and in _runs.csv)");
    drift_out_meta(
        &out, T_MAIN, "device", "%s (%d SMs) for the vendor-like model (lib/ops/policy.h)", dev.name, dev.sms);
    drift_out_meta(&out, T_MAIN, "columns",
        "max_abs_diff and n_diff over the %zu outputs of row 0 (bitwise comparison); the modelled cost of each "
        "(format, policy, K, M) is in batch_invariance_cost.csv",
        N);
    drift_out_meta(&out, T_SUM, "table", "per (format, policy, K), over M = 1..%zu", Mmax);
    drift_out_meta(&out, T_SUM, "columns",
        "distinct_row0 = distinct row-0 vectors; m_changed = M values whose row 0 differs from M = 1; "
        "nmse_* = NMSE of row 0 against the exact row (drift_exact_dot), over the kernels used");
    drift_out_meta(&out, T_RUNS, "table",
        "maximal runs M_first..M_last of batch sizes with the same kernel, hence the same row 0 (the rows of batch_invariance.csv, compressed for the heatmap)");
    long changed[DRIFT_NPOLICIES] = {0};
    for (int f = 0; f < nf; f++)
        for (int p = 0; p < np; p++)
            for (int ki = 0; ki < nK; ki++) {
                const drift_batch_sum_t *s = drift_batch_sweep_sum(&bt, f, p, ki);
                changed[p] += s->m_changed;
                write_rows(&out, &bt, f, p, ki, all_rows);
                drift_row(&out, T_SUM, DRIFT_TXT(drift_format_name(cli.formats[f])),
                    DRIFT_TXT(drift_policy_name((drift_policy_t)p)), DRIFT_INT(Ks.v[ki]), DRIFT_INT(s->distinct),
                    DRIFT_INT(s->m_changed), DRIFT_INT(s->first_M), DRIFT_NUM(s->max_diff), DRIFT_NUM(s->nmse_min),
                    DRIFT_NUM(s->nmse_max), DRIFT_NUM(s->cond_med),
                    DRIFT_TXT(s->tc ? "tensor-core model" : "fp32 fma"));
            }

    double here_cond = drift_batch_sweep_sum(&bt, 0, 0, nK - 1)->cond_med;
    if (random_data)
        drift_md_intro(&out,
            "The test of Thinking Machines' batch_invariant_ops on random data: A (%zu x K) and B (K x %zu) with N(0,1) entries, "
            "and row 0 of (A[:M] B) compared bit for bit with (A[:1] B) for every M = 1..%zu; "
            "vendor-like is a model of a BLAS heuristic on an %s (%d SMs), batch-invariant fixes one tile and never splits K (lib/ops/policy.h). "
            "fp32 inputs run on fp32 FMA, bf16/fp16/tf32 through the %s tensor-core model. "
            "Row 0's dot products have a median condition number sum|ab|/|sum ab| of %.3g (%s, K = %ld); "
            "batch_invariant_ops' own linspace(-100, 100) matrices are a worst case with %.3g (`--data linspace`), a condition number %.0fx larger: "
            "a ratio of conditions, not of measured differences (run `--data linspace` to measure those).",
            Mmax, N, Mmax, dev.name, dev.sms, dev.name, here_cond, drift_format_name(cli.formats[0]), Ks.v[nK - 1],
            lin_cond, lin_cond / here_cond);
    else
        drift_md_intro(&out,
            "WORST CASE (linspace data): the test of Thinking Machines' batch_invariant_ops: "
            "A = linspace(-100, 100) reshaped %zu x K, B = linspace(-100, 100) reshaped K x %zu, "
            "and row 0 of (A[:M] B) compared bit for bit with (A[:1] B) for every M = 1..%zu; "
            "vendor-like is a model of a BLAS heuristic on an %s (%d SMs), batch-invariant fixes one tile and never splits K (lib/ops/policy.h). "
            "Row 0's median condition number sum|ab|/|sum ab| is %.3g (K = %ld): random data's is far smaller.",
            Mmax, N, Mmax, dev.name, dev.sms, lin_cond, Ks.v[nK - 1]);
    drift_md_text(&out,
        "**Row 0 across batch sizes** (per K: batch sizes M whose row 0 differs from M = 1, of %zu; distinct row-0 results; largest |difference|):\n\n",
        Mmax);
    for (int f = 0; f < nf; f++)
        for (int ki = 0; ki < nK; ki++) {
            const drift_batch_sum_t *v = drift_batch_sweep_sum(&bt, f, DRIFT_POLICY_VENDOR_LIKE, ki);
            const drift_batch_sum_t *b = drift_batch_sweep_sum(&bt, f, DRIFT_POLICY_BATCH_INVARIANT, ki);
            drift_row(&out, T_MD, DRIFT_TXT(drift_format_name(cli.formats[f])), DRIFT_INT(Ks.v[ki]),
                DRIFT_INT(v->m_changed), DRIFT_INT(v->distinct), DRIFT_NUM(v->max_diff), DRIFT_INT(b->m_changed),
                DRIFT_INT(b->distinct), DRIFT_NUM(b->max_diff));
        }
    drift_md_end(&out, T_MD);
    long bi = changed[DRIFT_POLICY_BATCH_INVARIANT];
    drift_md_text(&out,
        "**Takeaway.**\n\n- Under vendor-like, row 0 changed with the batch in %ld of %zu (format, K, M) cases; under batch-invariant in %ld: %s.\n",
        changed[DRIFT_POLICY_VENDOR_LIKE], (size_t)nf * nK * Mmax, bi,
        bi == 0 ? "exactly zero difference everywhere, as it must be" : "NOT ZERO, which is a bug");
    /* the first format and bf16 at K = 4096 (else the largest K); one bullet when their batch
     * sizes agree, since only the NMSE then differs */
    int ki = nK - 1, shown[2] = {0, -1};
    for (int t = 0; t < nK; t++) ki = Ks.v[t] == 4096 ? t : ki;
    for (int f = 1; f < nf; f++) shown[1] = cli.formats[f] == DRIFT_BF16 ? f : shown[1];
    const drift_batch_sum_t *v0 = drift_batch_sweep_sum(&bt, 0, DRIFT_POLICY_VENDOR_LIKE, ki);
    const drift_batch_sum_t *v1 =
        shown[1] < 0 ? NULL : drift_batch_sweep_sum(&bt, shown[1], DRIFT_POLICY_VENDOR_LIKE, ki);
    if (v1 && v0->first_M && v0->first_M == v1->first_M && v0->distinct == v1->distinct)
        drift_md_text(&out,
            "- %s and %s, K = %ld: row 0 first changes at M = %zu and takes %d distinct values over the batch sizes; "
            "the NMSE of row 0 against the exact row ranges from %.3g to %.3g (%s) and from %.3g to %.3g (%s) across the "
            "kernels the policy picks, so no choice is \"the\" right answer.\n",
            drift_format_name(cli.formats[0]), drift_format_name(cli.formats[shown[1]]), Ks.v[ki], v0->first_M,
            v0->distinct, v0->nmse_min, v0->nmse_max, drift_format_name(cli.formats[0]), v1->nmse_min, v1->nmse_max,
            drift_format_name(cli.formats[shown[1]]));
    else
        for (int s = 0; s < 2; s++) {
            const drift_batch_sum_t *v = s ? v1 : v0;
            if (v && v->first_M)
                drift_md_text(&out,
                    "- %s, K = %ld: row 0 first changes at M = %zu and takes %d distinct values over the batch sizes; "
                    "the NMSE of row 0 against the exact row ranges from %.3g to %.3g across the kernels the policy picks, so no choice is \"the\" right answer.\n",
                    drift_format_name(cli.formats[shown[s]]), Ks.v[ki], v->first_M, v->distinct, v->nmse_min,
                    v->nmse_max);
        }
    drift_out_commit(&out);
    drift_batch_sweep_free(&bt);
    return 0;
}
