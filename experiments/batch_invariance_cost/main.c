/* batch_invariance_cost.c — what does the cure for batch variance cost? For the kernels that
 * batch_invariance compares (each GEMM policy of lib/ops/policy.h, per input format, K and batch
 * size M = 1..M_max, the same options and defaults, so the two experiments' rows join on
 * (format, policy, K, M)), the modelled GPU time of C (M x N) = A (M x K) B: a bytes-and-FLOPs
 * roofline over the multiprocessors the kernel occupies (cost_model.h beside this file), so a
 * batch-1 product is memory-bound. Published peaks and an assumed per-SM bandwidth: a model, not
 * a measurement; no product is computed.
 * Look for: at M = 1 the batch-invariant kernel's few tiles occupy few multiprocessors, which can
 * neither pull B's bytes nor do the padded tile work as fast as the vendor-like split over the
 * whole device; at the largest M the ratio is near 1 or below it (both kernels fill the device,
 * and the vendor-like policy's smaller tiles can take more waves than the fixed 128 x 128). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "cost_model.h"
#include "drift.h"
#include "gpu_gemm.h"
#include "output.h"
#include "policy.h"

enum { T_MAIN, T_SUM, T_MD };
static const drift_col_t MAIN[] = {DRIFT_C_TEXT("format"), DRIFT_C_TEXT("policy"), DRIFT_C_INT("K"), DRIFT_C_INT("M"),
    DRIFT_C_KEY("kernel_key"), DRIFT_C_NUM("cost_model", "%.6g"), DRIFT_C_NUM("compute_us", "%.6g"),
    DRIFT_C_NUM("memory_us", "%.6g"), DRIFT_C_INT("active_sms"), DRIFT_C_INT("memory_bound"), DRIFT_C_QUOTED("kernel")};
static const drift_col_t SUM[] = {DRIFT_C_TEXT("format"), DRIFT_C_TEXT("policy"), DRIFT_C_INT("K"),
    DRIFT_C_NUM("cost_m1", "%.6g"), DRIFT_C_NUM("cost_ratio_bi_vendor_m1", "%.4f"), DRIFT_C_INT("m1_memory_bound"),
    DRIFT_C_NUM("cost_mmax", "%.6g"), DRIFT_C_NUM("cost_ratio_bi_vendor_mmax", "%.4f"), DRIFT_C_TEXT("arithmetic")};
static const drift_col_t MD[] = {DRIFT_C_TEXT("format"), DRIFT_C_INT("K"), DRIFT_C_NUM("vendor-like µs, M = 1", "%.3g"),
    DRIFT_C_NUM("batch-invariant µs, M = 1", "%.3g"), DRIFT_C_NUM("ratio, M = 1", "%.2f"),
    DRIFT_C_NUM("ratio, M = M_max", "%.2f")};
static const drift_table_spec_t TABLES[] = {{".csv", NULL, 0, MAIN, 11}, {"_summary.csv", NULL, 0, SUM, 9},
    {NULL, NULL, DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT, MD, 6}};

typedef struct { /* one batch size under one (format, policy, K) */
    drift_gemm_kernel_t kern;
    drift_cost_t cost;
    int run; /* the run of batch sizes on one kernel it belongs to */
} cost_row_t;

/* The kernel and modelled cost of every M = 1..Mmax under policy p: rows[M - 1]. */
static void cost_over_m(cost_row_t *rows, drift_policy_t p, size_t Mmax, size_t N, size_t K, drift_format_t in, int tc,
    const drift_device_perf_t *perf)
{
    for (size_t M = 1; M <= Mmax; M++) {
        cost_row_t *r = &rows[M - 1];
        if (drift_policy_choose(&r->kern, p, M, N, K, perf->sms))
            drift_die("the %s policy has no kernel for M = %zu, K = %zu", drift_policy_name(p), M, K);
        if (drift_cost_gemm(&r->cost, &r->kern, M, N, K, in, tc, perf))
            drift_die("--formats: the cost model has no peak rate for %s inputs on the %s", drift_format_name(in),
                perf->name);
        r->run = M == 1 ? 0 : rows[M - 2].run + !drift_gemm_kernel_equal(&rows[M - 2].kern, &r->kern);
    }
}

int main(int argc, char **argv)
{
    long N_ = 0, Mmax_ = 0;
    int all_rows = 0;
    drift_intlist_t Ks = {{0}, 0};
    const char *device_opt = "h100";
    const drift_cli_opt_t opts[] = {
        {"K", DRIFT_OPT_INTLIST, &Ks, "N,N,...", "inner dimensions", 1, 1 << 20,
            {"256,1024,4096", "256,512,1024,2048,4096,8192", "256,512,1024,2048,4096,8192,16384"}},
        {"N", DRIFT_OPT_INT, &N_, "N", "columns of B", 1, 1 << 16, {"256", "1024", "4096"}},
        {"M-max", DRIFT_OPT_INT, &Mmax_, "N", "largest batch M", 1, 1 << 16, {"256", "2048", "2048"}},
        {"device", DRIFT_OPT_STRING, &device_opt, "NAME", "the device modelled: v100, a100, h100, b200 (default h100)",
            0, 0, {0}},
        {"all-rows", DRIFT_OPT_FLAG, &all_rows, "", "every batch size M in batch_invariance_cost.csv, not a sample", 0,
            0, {NULL, NULL, "1"}},
    };
    const drift_cli_spec_t spec = {.name = "batch_invariance_cost",
        .question = "What does the batch-invariant policy cost in modelled GPU time?",
        .default_formats = "fp32,tf32,bf16,fp16",
        DRIFT_CLI_OPTS(opts),
        .no_orders = "models the kernels the GEMM policies pick, not reduction orders",
        .cpu_only = "CPU only (a model of GPU time: no product is computed)",
        .summary = "at M = 1 the vendor-like policy splits K over the whole device, which pulls B's bytes with every "
                   "multiprocessor; the batch-invariant kernel's few tiles occupy few of them, so the cure costs most "
                   "at the smallest batches, in this model."};
    drift_cli_t cli;
    drift_cli_parse(&cli, &spec, argc, argv);
    drift_device_perf_t perf;
    drift_tc_arch_t arch;
    if (drift_device_perf(&perf, device_opt) || drift_gpu_arch(&arch, perf.name))
        drift_die("--device: unknown device '%s' (accepted: v100, a100, h100, b200)", device_opt);
    for (int f = 0; f < cli.nformats; f++)
        if (cli.formats[f] == DRIFT_FP64)
            drift_die(
                "--formats: fp64 inputs are not modelled here (accepted: fp32, tf32, bf16, fp16, fp8e4m3, fp8e5m2)");
    const size_t N = (size_t)N_, Mmax = (size_t)Mmax_;
    const int nf = cli.nformats, nK = Ks.n;
    cost_row_t *rows = malloc(DRIFT_NPOLICIES * Mmax * sizeof *rows);
    if (!rows) drift_die("the %zu batch sizes of --M-max: out of memory", Mmax);

    drift_out_t out;
    drift_out_open(&out, &cli, TABLES, 3, 1);
    drift_out_meta(&out, T_MAIN, "quoting",
        "kernel = the canonical spec, double-quoted and last (tiled:BM,BN,BK holds commas); "
        "kernel_key = the same with commas as x, for tools that split on every comma");
    drift_out_meta(&out, T_MAIN, "table",
        "the kernel each policy picks for C (M x %zu) = A (M x K) B and its modelled GPU time, per (format, policy, K, M)",
        N);
    drift_out_meta(&out, T_MAIN, "rows", "%s",
        all_rows ? "every M"
                 : "the sample of M that batch_invariance.csv shows: M <= 16, multiples of 32, 2^k-1, 2^k, 2^k+1, "
                   "the ends of every run of M with one kernel (the summary reads every M)");
    drift_out_meta(&out, T_MAIN, "device", "%s (%d SMs; lib/ops/policy.h, cost_model.h)", perf.name, perf.sms);
    drift_out_meta(&out, T_MAIN, "columns",
        "cost_model = modelled GPU time in microseconds, max(compute_us, memory_us): a bytes-and-FLOPs roofline over "
        "the active_sms occupied multiprocessors (cost_model.h; published peaks, assumed per-SM bandwidth), not a "
        "measurement; memory_bound = memory_us >= compute_us");
    drift_out_meta(&out, T_SUM, "table", "per (format, policy, K): M = 1 and M = %zu", Mmax);
    drift_out_meta(&out, T_SUM, "columns",
        "cost_ratio_bi_vendor_m1 (_mmax) = modelled time of batch-invariant / vendor-like at M = 1 (M = %zu), the same "
        "on both policies' rows; arithmetic = the peak rate charged (tensor-core model or fp32 FMA)",
        Mmax);
    drift_md_intro(&out,
        "The modelled GPU time of the kernels the two GEMM policies pick for C (M x %zu) = A (M x K) B, M = 1..%zu, on "
        "an %s (%d SMs): the kernels whose row 0 batch_invariance compares. A bytes-and-FLOPs roofline over the "
        "multiprocessors a kernel occupies (cost_model.h; published peaks, an assumed per-multiprocessor bandwidth): a "
        "model, not a measurement.",
        N, Mmax, perf.name, perf.sms);
    drift_md_text(&out, "**Modelled time at M = 1, and the ratio batch-invariant / vendor-like** (µs):\n\n");

    int fcost = 0; /* the takeaway's format: bf16, else the first */
    for (int f = 0; f < nf; f++)
        if (cli.formats[f] == DRIFT_BF16) fcost = f;
    double r1[2] = {INFINITY, 0}, rM[2] = {INFINITY, 0};
    int mb_all = 1;
    for (int f = 0; f < nf; f++) {
        const drift_format_t in = cli.formats[f];
        const int tc = drift_gpu_uses_tc(in, arch);
        for (int ki = 0; ki < nK; ki++) {
            const size_t K = (size_t)Ks.v[ki];
            for (int p = 0; p < DRIFT_NPOLICIES; p++)
                cost_over_m(&rows[p * Mmax], (drift_policy_t)p, Mmax, N, K, in, tc, &perf);
            const cost_row_t *vl = &rows[DRIFT_POLICY_VENDOR_LIKE * Mmax],
                             *bi = &rows[DRIFT_POLICY_BATCH_INVARIANT * Mmax];
            const double ratio = bi[0].cost.time / vl[0].cost.time;
            const double ratioM = bi[Mmax - 1].cost.time / vl[Mmax - 1].cost.time;
            for (int p = 0; p < DRIFT_NPOLICIES; p++) {
                const cost_row_t *blk = &rows[p * Mmax];
                const char *fn = drift_format_name(in), *pn = drift_policy_name((drift_policy_t)p);
                for (size_t M0 = 0; M0 < Mmax; M0++) {
                    const int run_end =
                        (M0 > 0 && blk[M0 - 1].run != blk[M0].run) || (M0 + 1 < Mmax && blk[M0 + 1].run != blk[M0].run);
                    if (!all_rows && !drift_policy_sampled_m(M0 + 1, Mmax, run_end)) continue;
                    const drift_cost_t *c = &blk[M0].cost;
                    char ks[DRIFT_GEMM_KERNEL_SPEC_MAX];
                    drift_gemm_kernel_print(ks, sizeof ks, &blk[M0].kern);
                    drift_row(&out, T_MAIN, DRIFT_TXT(fn), DRIFT_TXT(pn), DRIFT_INT(K), DRIFT_INT(M0 + 1),
                        DRIFT_TXT(ks), DRIFT_NUM(c->time * 1e6), DRIFT_NUM(c->compute * 1e6),
                        DRIFT_NUM(c->memory * 1e6), DRIFT_INT(c->active), DRIFT_INT(c->memory_bound), DRIFT_TXT(ks));
                }
                drift_row(&out, T_SUM, DRIFT_TXT(fn), DRIFT_TXT(pn), DRIFT_INT(K), DRIFT_NUM(blk[0].cost.time * 1e6),
                    DRIFT_NUM(ratio), DRIFT_INT(blk[0].cost.memory_bound), DRIFT_NUM(blk[Mmax - 1].cost.time * 1e6),
                    DRIFT_NUM(ratioM), DRIFT_TXT(tc ? "tensor-core model" : "fp32 fma"));
            }
            drift_row(&out, T_MD, DRIFT_TXT(drift_format_name(in)), DRIFT_INT(K), DRIFT_NUM(vl[0].cost.time * 1e6),
                DRIFT_NUM(bi[0].cost.time * 1e6), DRIFT_NUM(ratio), DRIFT_NUM(ratioM));
            if (f == fcost) { /* the cure's cost over K */
                r1[0] = fmin(r1[0], ratio), r1[1] = fmax(r1[1], ratio), rM[0] = fmin(rM[0], ratioM),
                rM[1] = fmax(rM[1], ratioM);
                mb_all &= vl[0].cost.memory_bound;
            }
        }
    }
    drift_md_end(&out, T_MD);
    drift_md_text(&out,
        "**Takeaway.**\n\n- Modelled, not measured (an %s roofline without caches). At M = 1 the vendor-like "
        "kernel is %s; the batch-invariant kernel takes %.2fx to %.2fx its time (%s, K = %ld..%ld), its few tiles "
        "occupying few multiprocessors. At M = %zu, %.2fx to %.2fx: the vendor-like policy's narrower tiles read A "
        "more often, which this model charges in full and a cache would soften.\n",
        perf.name, mb_all ? "memory-bound at every K" : "compute-bound at some K", r1[0], r1[1],
        drift_format_name(cli.formats[fcost]), Ks.v[0], Ks.v[nK - 1], Mmax, rM[0], rM[1]);
    drift_out_commit(&out);
    free(rows);
    return 0;
}
