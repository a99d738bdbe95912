/* matmul_report.c — the declared output of the matmul_drift experiment (matmul_lab.h): every
 * number from the lab's cells. */
#include "matmul_lab.h"
#include "drift.h"
#include "output.h"

#include <math.h>
#include <stdio.h>

#define LLAMA_NMSE_MATMUL DRIFT_LLAMA_NMSE_MATMUL
#define MAX_KERNELS 16

void drift_matmul_write(const drift_matmul_lab_t *L)
{
    const drift_mm_sweep_t *W = L->W;
    const size_t M = W->M, N = W->N, *Kv = W->Kv;
    const int nK = W->nK, nd = W->nd, ns = W->ns, nk = W->nk, key = L->key;
    const drift_dist_t *dists = W->dists;
    const drift_mm_setting_t *set = W->set;
    const drift_gemm_kernel_t *kern = W->kern;
    const char(*kname)[DRIFT_GEMM_KERNEL_SPEC_MAX] = L->kname;
    const char *kernels_opt = L->kernels_opt;
    const double *slope = L->slope;
#define CELL(d, si, kk, ki) (&L->cells[drift_mm_at(W, d, si, kk, ki)])
    /* ---- declared output ---- */
    enum { T_MAIN, T_MD_NMSE, T_SHOW_REL };
    static const drift_col_t MAIN[] = {DRIFT_C_TEXT("dist"), DRIFT_C_TEXT("format"), DRIFT_C_TEXT("acc"),
        DRIFT_C_KEY("kernel_key"), DRIFT_C_TEXT("order"), DRIFT_C_INT("K"), DRIFT_C_NUM("nmse", "%.6e"),
        DRIFT_C_NUM("err_norm_mean", "%.6e"), DRIFT_C_NUM("err_norm_max", "%.6e"),
        DRIFT_C_NUM("rel_err_median", "%.6e"), DRIFT_C_NUM("u_acc", "%.6e"), DRIFT_C_NUM("sqrtK_u", "%.6e"),
        DRIFT_C_NUM("K_u", "%.6e"), DRIFT_C_INT("llama_pass"), DRIFT_C_NUM("c00", "%.9g"), DRIFT_C_HEX("c00_hex"),
        DRIFT_C_HEX("exact00_hex"), DRIFT_C_QUOTED("kernel")};
    drift_col_t by_kernel[2 + MAX_KERNELS] = {DRIFT_C_TEXT("inputs"), DRIFT_C_TEXT("accumulator")};
    for (int kk = 0; kk < nk; kk++) by_kernel[2 + kk] = (drift_col_t)DRIFT_C_CELL(kname[kk]);
    char title[2][256];
    snprintf(title[0], sizeof title[0],
        "**NMSE at K = %zu, %s inputs** (llama.cpp's matmul threshold is %g; values "
        "above it are in bold):",
        Kv[key], drift_dist_name(dists[0]), LLAMA_NMSE_MATMUL);
    snprintf(title[1], sizeof title[1],
        "median relative error |c-e|/|e| at K = %zu (%s inputs); (slope over K = "
        "%zu..%zu)",
        Kv[key], drift_dist_name(dists[0]), Kv[0], Kv[nK - 1]);
    const drift_table_spec_t TABLES[] = {{".csv", NULL, 0, MAIN, 18},
        {NULL, title[0], DRIFT_SHOW_MD, by_kernel, 2 + nk}, {NULL, title[1], DRIFT_SHOW_STDOUT, by_kernel, 2 + nk}};
    drift_out_t out;
    drift_out_open(&out, L->cli, TABLES, 3, 1);
    drift_md_question(&out, "Every result is held against the exact product of the same rounded inputs (a "
                            "superaccumulator, correctly rounded), so only the arithmetic of the product is measured.");
    drift_md_reproduce(&out, "data/matmul_drift.csv; %zu x %zu outputs, K = %zu .. %zu", M, N, Kv[0], Kv[nK - 1]);
    char b1[80], b2[32];
    drift_out_meta(&out, T_MAIN, "quoting",
        "kernel = the canonical spec, double-quoted and last (tiled:BM,BN,BK holds commas); "
        "kernel_key = the same with commas as x, for tools that split on every comma");
    drift_out_meta(
        &out, T_MAIN, "table", "error of C = A B (M x N outputs) against the exact product of the rounded inputs");
    drift_out_meta(&out, T_MAIN, "shape", "M = %zu, N = %zu", M, N);
    drift_out_meta(&out, T_MAIN, "kernels", "%s", kernels_opt);
    drift_out_meta(&out, T_MAIN, "inputs",
        "normal: A, B standard normal; llm: A LLM-like activations (lib/core/gen.c, outliers per row), B "
        "standard normal; Philox stream (seed, \"matmul_drift\", K, 2*dist + matrix); A and B rounded "
        "to the input format (RNE)");
    drift_out_meta(&out, T_MAIN, "exact", "drift_exact_dot of the rounded inputs, correctly rounded to double");
    drift_out_meta(&out, T_MAIN, "metrics",
        "nmse = sum (c-e)^2 / sum e^2; err_norm = |c-e| / sum_k |a_k b_k| (mean, max over outputs); "
        "rel_err_median = median |c-e|/|e|; u_acc = unit roundoff of the accumulator; guides sqrtK_u "
        "= sqrt(K) u_acc, K_u = K u_acc");
    drift_out_meta(&out, T_MAIN, "threshold", "llama.cpp test-backend-ops mul_mat max NMSE %g", LLAMA_NMSE_MATMUL);
    /* Rows ordered by (dist, setting, kernel, K): each curve of the plot is contiguous. */
    for (int d = 0; d < nd; d++)
        for (int si = 0; si < ns; si++)
            for (int kk = 0; kk < nk; kk++)
                for (int ki = 0; ki < nK; ki++) {
                    const drift_mm_cell_t *r = CELL(d, si, kk, ki);
                    if (!r->ran) continue;
                    size_t K = Kv[ki];
                    double u = drift_format_info(set[si].acc)->unit_roundoff;
                    drift_order_t o;
                    char ospec[DRIFT_ORDER_SPEC_MAX];
                    if (drift_gemm_kernel_order(&o, &kern[kk]) || drift_order_print(ospec, sizeof ospec, &o) < 0)
                        snprintf(ospec, sizeof ospec, "?");
                    drift_row(&out, T_MAIN, DRIFT_TXT(drift_dist_name(dists[d])),
                        DRIFT_TXT(drift_format_name(set[si].in)), DRIFT_TXT(drift_format_name(set[si].acc)),
                        DRIFT_TXT(kname[kk]), DRIFT_TXT(ospec), DRIFT_INT(K), DRIFT_NUM(r->err.nmse),
                        DRIFT_NUM(r->err.err_mean), DRIFT_NUM(r->err.err_max), DRIFT_NUM(r->err.rel_med), DRIFT_NUM(u),
                        DRIFT_NUM(sqrt((double)K) * u), DRIFT_NUM((double)K * u),
                        DRIFT_INT(r->err.nmse <= LLAMA_NMSE_MATMUL), DRIFT_NUM(r->c00), DRIFT_NUM(r->c00),
                        DRIFT_NUM(r->e00), DRIFT_TXT(kname[kk]));
                }

    /* the key-K tables: NMSE (bold above the threshold) in the fragment, median relative error
     * (slope) on stdout; "—": the kernel does not take the setting */
    char cell[2][MAX_KERNELS][160];
    drift_cell_t row[2][2 + MAX_KERNELS];
    for (int si = 0; si < ns; si++) {
        for (int t = 0; t < 2; t++)
            row[t][0] = DRIFT_TXT(drift_format_name(set[si].in)), row[t][1] = DRIFT_TXT(drift_format_name(set[si].acc));
        for (int kk = 0; kk < nk; kk++) {
            const drift_mm_cell_t *hit = CELL(0, si, kk, key);
            drift_fmt_num(b1, sizeof b1, hit->err.nmse, "%.3g");
            snprintf(cell[0][kk], sizeof cell[0][kk], hit->err.nmse > LLAMA_NMSE_MATMUL ? "**%s**" : "%s", b1);
            drift_fmt_num(b1, sizeof b1, hit->err.rel_med, "%.3g");
            drift_fmt_num(b2, sizeof b2, slope[(0 * ns + si) * nk + kk], "%.3g");
            snprintf(cell[1][kk], sizeof cell[1][kk], "%s (%s)", b1, b2);
            if (!hit->ran)
                snprintf(cell[0][kk], sizeof cell[0][kk], "—"), snprintf(cell[1][kk], sizeof cell[1][kk], "-");
            row[0][2 + kk] = DRIFT_TXT(cell[0][kk]), row[1][2 + kk] = DRIFT_TXT(cell[1][kk]);
        }
        drift_row_cells(&out, T_MD_NMSE, row[0], 2 + nk);
        drift_row_cells(&out, T_SHOW_REL, row[1], 2 + nk);
    }
    drift_md_end(&out, T_MD_NMSE);
    drift_md_text(&out, "(— : the kernel does not take that setting; tensor-core models run only the formats their "
                        "architecture accepts, into fp32 or fp16.)\n\n**Takeaway.**\n\n");
    int naive = -1, split = -1, tch = -1; /* the first of each: growth exponents and ratios below */
    for (int kk = nk - 1; kk >= 0; kk--) {
        if (kern[kk].family == DRIFT_GEMM_NAIVE) naive = kk;
        if (kern[kk].family == DRIFT_GEMM_SPLITK) split = kk;
        if (kern[kk].family == DRIFT_GEMM_TC && kern[kk].arch == DRIFT_TC_H100) tch = kk;
    }
    const int kl = nK - 1;
    const size_t Klast = Kv[kl];
    if (naive >= 0) {
        drift_md_text(&out,
            "- Growth with K (slope of the median relative error |c-e|/|e| on log-log axes, %s inputs, %s): ",
            drift_dist_name(dists[0]), kname[naive]);
        for (int si = 0; si < ns; si++)
            drift_md_text(&out, "%s%s into %s %.2f", si ? ", " : "", drift_format_name(set[si].in),
                drift_format_name(set[si].acc), slope[(0 * ns + si) * nk + naive]);
        drift_md_text(&out,
            ". A slope of 0.5 is the sqrt(K) growth of independent rounding errors, 1 the K u worst case. "
            "A slope near 1 here is not same-sign error: where products of narrow inputs and their short "
            "sums are exact in the accumulator, the median error is exactly 0 up to some K and the fitted "
            "slope measures where rounding starts.\n");
        for (int si = 0; si < ns; si++) {
            const drift_mm_cell_t *rn = CELL(0, si, naive, kl), *rsp = split >= 0 ? CELL(0, si, split, kl) : NULL,
                                  *rtc = tch >= 0 ? CELL(0, si, tch, kl) : NULL;
            if (set[si].acc != DRIFT_FP32 || set[si].in != DRIFT_BF16 || !rn->ran) continue;
            double u = drift_format_info(DRIFT_FP32)->unit_roundoff, e = rn->err.rel_med;
            drift_md_text(&out,
                "- bf16 inputs, fp32 accumulation, K = %zu: the seq kernel's median relative error is "
                "%.3g, that is %.2f sqrt(K) u (u = 2^-24) and %.4f K u",
                Klast, e, e / (sqrt((double)Klast) * u), e / ((double)Klast * u));
            if (rsp && rsp->ran)
                drift_md_text(&out, "; %s brings it to %.3g (%.1fx smaller)", kname[split], rsp->err.rel_med,
                    e / rsp->err.rel_med);
            if (rtc && rtc->ran)
                drift_md_text(&out, "; the H100 tensor-core model, which truncates, gives %.3g (%.1fx the seq error)",
                    rtc->err.rel_med, rtc->err.rel_med / e);
            drift_md_text(&out, ".\n");
            /* Higham and Mary: for products of zero-mean data the normwise error hardly grows
             * with K, unlike the componentwise one (rounding errors partly cancel in the norm) */
            const drift_mm_cell_t *r0 = CELL(0, si, naive, 0);
            if (r0->ran && r0->err.err_mean > 0)
                drift_md_text(&out,
                    "- The error relative to sum_k |a_k b_k| (err_norm_mean) of the same products grows only %.3gx "
                    "from K = %zu to %zu, against %.3gx for sqrt(K): with zero-mean data, as Higham and Mary predict, "
                    "it barely grows with K.\n",
                    rn->err.err_mean / r0->err.err_mean, Kv[0], Klast, sqrt((double)Klast / (double)Kv[0]));
        }
        for (int si = 0; si < ns; si++) {
            const drift_mm_cell_t *rn = CELL(0, si, naive, kl);
            if (set[si].acc == DRIFT_FP32 || !rn->ran) continue;
            drift_fmt_num(b1, sizeof b1, rn->err.nmse, "%.3g");
            drift_fmt_num(b2, sizeof b2, rn->err.rel_med, "%.3g");
            drift_md_text(&out, "- %s accumulated in %s, K = %zu, seq: NMSE %s, median relative error %s%s.\n",
                drift_format_name(set[si].in), drift_format_name(set[si].acc), Klast, b1, b2,
                rn->err.nmse > LLAMA_NMSE_MATMUL
                    ? " — far above llama.cpp's threshold: the fp32 accumulator is not optional"
                    : "");
        }
    }
    long fails = 0, total_rows = 0;
    for (int d = 0; d < nd; d++)
        for (int si = 0; si < ns; si++)
            for (int kk = 0; kk < nk; kk++)
                if (CELL(d, si, kk, key)->ran)
                    total_rows++, fails += CELL(d, si, kk, key)->err.nmse > LLAMA_NMSE_MATMUL;
    drift_md_text(&out,
        "- At K = %zu, %ld of %ld (distribution, setting, kernel) configurations exceed the %g NMSE "
        "threshold.\n",
        Kv[key], fails, total_rows, LLAMA_NMSE_MATMUL);
    drift_out_commit(&out);
}
