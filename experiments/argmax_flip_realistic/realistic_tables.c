/* realistic_tables.c — the CSV tables of the realistic heads (argmax_realistic.h): the flip
 * fraction per kernel, the rows below each critical gap, the distribution of exact top-2 gaps and
 * the two references; declared once (output.h) and written from a finished run. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "argmax_realistic.h"
#include "argmax_run.h"
#include "drift.h"
#include "output.h"
#include "stats.h"

static const drift_col_t C_REAL[] = {DRIFT_AF_HEAD_COLS, DRIFT_C_INT("rows"), DRIFT_C_INT("exact_ties"),
    DRIFT_C_INT("flips"), DRIFT_C_NUM("rate", "%.6g"), DRIFT_C_NUM("lo", "%.6g"), DRIFT_C_NUM("hi", "%.6g"),
    DRIFT_C_NUM("predicted_flips", "%.4g"), DRIFT_C_NUM("stage1_mean", "%.2f"), DRIFT_C_NUM("eval_mean", "%.2f")};
static const drift_col_t C_GAPS[] = {DRIFT_C_INT("K"), DRIFT_C_TEXT("format"), DRIFT_C_TEXT("bin"),
    DRIFT_C_TEXT("rel_lo"), DRIFT_C_NUM("rel_hi", "%.6e"), DRIFT_C_INT("rows"), DRIFT_C_INT("count"),
    DRIFT_C_NUM("fraction", "%.6g"), DRIFT_C_NUM("cum_fraction", "%.6g")};
static const drift_col_t C_BELOW[] = {DRIFT_AF_HEAD_COLS, DRIFT_C_NUM("gap_half_rel", "%.6e"),
    DRIFT_C_INT("rows_below_half"), DRIFT_C_NUM("frac_half", "%.6g"), DRIFT_C_NUM("lo_half", "%.6g"),
    DRIFT_C_NUM("hi_half", "%.6g"), DRIFT_C_NUM("gap_p001_rel", "%.6e"), DRIFT_C_INT("rows_below_p001"),
    DRIFT_C_NUM("frac_p001", "%.6g"), DRIFT_C_NUM("lo_p001", "%.6g"), DRIFT_C_NUM("hi_p001", "%.6g"),
    DRIFT_C_TEXT("tag"), DRIFT_C_TEXT("law"), DRIFT_C_NUM("law_gap_p001_rel", "%.6e")};
static const drift_col_t C_REFS[] = {DRIFT_AF_HEAD_COLS, DRIFT_C_INT("rows"), DRIFT_C_INT("input_rounding_flips"),
    DRIFT_C_INT("flips_vs_exact_rounded"), DRIFT_C_INT("accumulation_flips"), DRIFT_C_INT("output_rounding_changes"),
    DRIFT_C_INT("flips_vs_exact_unrounded")};

/* A count of rows with its fraction and Wilson 95% interval. */
#define COUNT_CELLS(k, n) \
    DRIFT_INT(k), DRIFT_NUM((double)(k) / (n)), DRIFT_NUM(wilson_lo(k, n)), DRIFT_NUM(wilson_hi(k, n))
static double wilson_lo(long k, size_t n)
{
    double lo, hi;
    return drift_wilson(&lo, &hi, k, (long)n, DRIFT_Z95) ? NAN : lo;
}
static double wilson_hi(long k, size_t n)
{
    double lo, hi;
    return drift_wilson(&lo, &hi, k, (long)n, DRIFT_Z95) ? NAN : hi;
}

/* The realistic tables: per (K, format, kernel) the pruning could bound, the flip fraction
 * (AFR_REAL) and the rows below each critical gap (AFR_BELOW). */
static void write_realistic(drift_out_t *o, const drift_aflab_t *L)
{
    drift_out_meta(o, AFR_REAL, "table",
        "realistic heads: fraction of hidden states whose computed argmax differs from the exact argmax");
    drift_out_meta(o, AFR_REAL, "head",
        "V = %ld tokens, weights N(0, 1/K) (fp32 master), hidden states N(0,1) with max(1, "
        "K/512) outlier channels of magnitude 20..100; %ld hidden states per K",
        L->V, L->rows);
    drift_out_meta(o, AFR_REAL, "pruning",
        "rigorous (gen_logits.h): stage1_mean = tokens surviving the first stage, "
        "eval_mean = tokens whose logit this kernel computed; own-format accumulation is left out (no finite bound)");
    drift_out_meta(o, AFR_REAL, "predicted",
        "sum over rows of Phi(-rel_gap/sigma_rel) with sigma_rel from the planted fit of the same (K, format, kernel)");
    drift_out_meta(o, AFR_BELOW, "table",
        "realistic heads: fraction of rows whose exact relative gap lies below each kernel's critical gaps (from the planted fits)");
    drift_out_meta(o, AFR_BELOW, "law",
        "law_gap_p001_rel: D_0.1%% under the law the kernel's mechanism implies, as argmax_flip_laws.csv gives it (the "
        "lines of the gaps figure); tag: the kernel's part in the report (default, engine, ...)");
    if (L->rows <= 0) return;
    DRIFT_AF_EACH_KERNEL(L)
    {
        const drift_flipset_t *st = &cl->realistic;
        if (!cl->realistic_ok[c]) continue;
        double s1 = 0;
        long nt = 0;
        for (size_t i = 0; i < st->n; i++) s1 += (double)st->nstage1[i], nt += st->t[i].tie;
        const drift_flip_fit_t *F = &cl->fits[c];
        drift_flip_real_t R;
        drift_flipset_realistic(&R, st, c, F);
        drift_row(o, AFR_REAL, DRIFT_AF_HEAD_CELLS(L->Ks[ki], ks, c), DRIFT_INT(st->n), DRIFT_INT(nt),
            DRIFT_INT(R.flips), DRIFT_NUM(R.rate), DRIFT_NUM(R.lo), DRIFT_NUM(R.hi), DRIFT_NUM(R.predicted),
            DRIFT_NUM(s1 / (double)st->n), DRIFT_NUM(R.eval_mean));
        drift_row(o, AFR_BELOW, DRIFT_AF_HEAD_CELLS(L->Ks[ki], ks, c), DRIFT_NUM(F->half),
            COUNT_CELLS(R.below_half, st->n), DRIFT_NUM(F->p001), COUNT_CELLS(R.below_p001, st->n),
            DRIFT_TXT(drift_kset_tag(ks, c)), DRIFT_TXT(drift_fliplaw_name(cl->laws[c].implied)),
            DRIFT_NUM(cl->laws[c].d001));
    }
}

/* Realistic heads: the distribution of exact top-2 gaps. */
static void write_gaps(drift_out_t *o, const drift_aflab_t *L)
{
    drift_logbins_t gb;
    if (drift_logbins_init(&gb, 1e-9, 10, 40)) drift_die("cannot make the gap bins");
    drift_out_meta(o, AFR_GAPS, "table",
        "realistic heads: distribution of the exact top-1/top-2 gap relative to s (log bins, 4 per decade); below_lo: "
        "rows with a relative gap under 1e-9 (ties included)");
    for (int ki = 0; ki < L->nKs && L->rows > 0; ki++)
        for (int fi = 0; fi < L->nformats; fi++) {
            const drift_flipset_t *st = &L->cell[ki][fi].realistic;
            long cum = 0;
            for (int b = -1; b < gb.nbins; b++) { /* b = -1: the rows below the first edge */
                long cnt = 0;
                for (size_t i = 0; i < st->n; i++)
                    cnt += b < 0 ? st->t[i].rel < gb.edge[0] : drift_logbins_find(&gb, st->t[i].rel) == b;
                cum += cnt;
                char bin[16], lo[32];
                snprintf(bin, sizeof bin, "%d", b);
                snprintf(lo, sizeof lo, "%.6e", gb.edge[b < 0 ? 0 : b]);
                drift_row(o, AFR_GAPS, DRIFT_INT(L->Ks[ki]), DRIFT_TXT(drift_format_name(L->cell[ki][fi].kernels.f)),
                    DRIFT_TXT(b < 0 ? "below_lo" : bin), DRIFT_TXT(b < 0 ? "0" : lo), DRIFT_NUM(gb.edge[b + 1]),
                    DRIFT_INT(st->n), DRIFT_INT(cnt), DRIFT_NUM((double)cnt / st->n), DRIFT_NUM((double)cum / st->n));
            }
        }
}

/* Realistic rows against the two references. */
static void write_refs(drift_out_t *o, const drift_aflab_t *L)
{
    drift_out_meta(o, AFR_REFS, "table",
        "realistic rows against two references: exact(rounded inputs) and exact(unrounded inputs) (the fp32 master values: "
        "the fp32 format's exact argmax); -1 = not available (no fp32 format in the run, or own-format accumulation, which the pruning cannot bound)");
    drift_out_meta(o, AFR_REFS, "columns",
        "input_rounding_flips: rows whose exact argmax changes when the inputs are rounded to the format; "
        "flips_vs_exact_rounded: the kernel's argmax against exact(rounded); accumulation_flips: "
        "the kernel's partner (same accumulation, logits kept in the accumulator) against exact(rounded); output_rounding_changes: "
        "the kernel's argmax against its partner's (for the exact head: against exact(rounded)); flips_vs_exact_unrounded: "
        "the kernel against exact(unrounded). Exact ties are never flips.");
    if (L->rows <= 0) return;
    DRIFT_AF_EACH_KERNEL(L)
    drift_row(o, AFR_REFS, DRIFT_AF_HEAD_CELLS(L->Ks[ki], ks, c), DRIFT_INT(L->rows),
        DRIFT_INT(cl->input_rounding_flips),
        DRIFT_INT(cl->realistic_ok[c] ? drift_flipset_flips(&cl->realistic, c) : -1),
        DRIFT_INT(cl->accumulation_flips[c]), DRIFT_INT(cl->output_rounding_changes[c]),
        DRIFT_INT(cl->flips_vs_unrounded[c]));
}

void drift_afr_declare_tables(drift_table_spec_t *tables)
{
    const drift_table_spec_t t[AFR_NCSV] = {{".csv", NULL, 0, C_REAL, DRIFT_COUNTOF(C_REAL)},
        {"_gaps.csv", NULL, 0, C_GAPS, DRIFT_COUNTOF(C_GAPS)}, {"_below.csv", NULL, 0, C_BELOW, DRIFT_COUNTOF(C_BELOW)},
        {"_refs.csv", NULL, 0, C_REFS, DRIFT_COUNTOF(C_REFS)}};
    memcpy(tables, t, sizeof t);
}

void drift_afr_write_tables(drift_out_t *o, const drift_aflab_t *L)
{
    write_realistic(o, L);
    write_gaps(o, L);
    write_refs(o, L);
}
