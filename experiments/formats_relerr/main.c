/* formats_relerr.c — random reals stored in each format, against the unit roundoff.
 *
 * Question: does every format store a real within its unit roundoff u = 2^-p of itself, and
 * where does that guarantee end? The bound (Higham, Accuracy and Stability, Thm 2.2) holds for
 * reals in the normal range in round-to-nearest; below the smallest normal and above the
 * largest finite value it does not.
 *
 * What it sweeps: --samples random reals x = x_hi + x_lo (~106 significant bits, exponents
 * 2^-30 to 2^20, Philox stream from --seed), each rounded once to every format of --formats
 * and held against its exact value (MPFR); each real is classified by where x itself lies
 * (normal range, below the smallest normal, overflow), not by what it was stored as: a real
 * just below the smallest normal may round up to it at the subnormal spacing.
 *
 * How to run:
 *   ./lab run formats_relerr                  all seven formats, default profile
 *   ./lab run formats_relerr --formats fp16,bf16 --samples 5000
 *   ./lab plot formats_relerr                 plots/formats_relerr.png
 *
 * What to look for: in the normal range the largest relative error stays below u in every
 * format; below the smallest normal it grows towards 1 (subnormals keep fewer bits, then 0);
 * above the largest finite value the real overflows (inf, NaN in fp8 e4m3).
 *
 * Outputs (written only after everything is computed; temporary file + rename):
 *   data/formats_relerr.csv          one row per (random real, format)
 *   data/formats_relerr_summary.csv  one row per format: u, the counts and worst errors
 *   data/formats_relerr.md           the report fragment: question, takeaway */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "drift.h"
#include "format.h"
#include "formats_relerr_lab.h"
#include "philox.h"
#include "stored_summary.h"
#include "witness.h"

/* Random reals: exponents uniform in [RAND_EMIN, RAND_EMAX), so the plot sees fp16's and
 * fp8's subnormals (below 2^-14, 2^-6) and their overflow (2^16, 2^8.8) on one axis. */
#define RAND_EMIN (-30)
#define RAND_EMAX 20

/* Random real number i: hi a double with exponent in [RAND_EMIN, RAND_EMAX) and a uniform
 * 52-bit fraction, lo uniform in [-ulp(hi)/2, ulp(hi)/2). The real value hi + lo has ~106
 * significant bits, so even fp64 has something to round. Stream (seed, "formats", i, 0): the
 * name of the experiment these reals were first drawn for, kept so that they stay the same. */
static void random_real(double *hi, double *lo, uint64_t seed, uint32_t i)
{
    drift_stream_t s;
    drift_stream_init(&s, seed, drift_fnv1a32("formats"), i, 0);
    int e = RAND_EMIN + (int)drift_stream_below(&s, RAND_EMAX - RAND_EMIN);
    uint64_t frac = ((uint64_t)drift_stream_u32(&s) << 20) | (drift_stream_u32(&s) >> 12); /* 52 bits */
    *hi = ldexp(1.0 + (double)frac * 0x1p-52, e);
    *lo = (drift_stream_uniform(&s) - 0.5) * ldexp(1.0, e - 52); /* exact: k * 2^-53 scaled */
}

int main(int argc, char **argv)
{
    long nrand = 0; /* 0: not given, take the profile's */
    const drift_cli_opt_t opts[] = {
        {"samples", DRIFT_OPT_INT, &nrand, "N", "random reals for the relative-error plot", 1, 10000000,
            {"200", "1000", "20000"}},
    };
    const drift_cli_spec_t spec = {.name = "formats_relerr",
        .question = "Is every real stored within its unit roundoff u = 2^-p?",
        .default_formats = "fp64,fp32,tf32,fp16,bf16,fp8e4m3,fp8e5m2",
        .default_orders = "seq",
        DRIFT_CLI_OPTS(opts),
        .no_orders = "takes no orders (each real is rounded once)",
        .cpu_only = "CPU only",
        .summary =
            "a real between the smallest normal and the largest finite value is stored within u = 2^-p of itself "
            "(the worst of the random reals is always <= u). Below, subnormals keep fewer bits and the relative "
            "error grows to 1 (the value becomes 0); above, the value overflows to inf (NaN in fp8e4m3). Plots: "
            "./lab plot formats_relerr."};
    drift_cli_t cli;
    drift_cli_parse(&cli, &spec, argc, argv);
    const int nf = cli.nformats;
    const drift_format_t *F = cli.formats;

    /* One stream per point, so the result does not depend on --threads; every thread writes
     * only its own rows. */
    double *rhi = malloc((size_t)nrand * sizeof *rhi), *rlo = malloc((size_t)nrand * sizeof *rlo);
    drift_stored_t *rc = malloc((size_t)nrand * nf * sizeof *rc);
    if (!rhi || !rlo || !rc)
        drift_die_oom((double)nrand * (2 * sizeof *rhi + nf * sizeof *rc),
            "%ld random reals x %d formats (--samples: fewer)", (long)nrand, nf);
    DRIFT_OMP("omp parallel")
    {
        mpfr_t x, d, qq;
        mpfr_inits2(DRIFT_WITNESS_DIFF_PREC, x, d, (mpfr_ptr)0);
        mpfr_init2(qq, 53);
        DRIFT_OMP("omp for schedule(static)")
        for (long i = 0; i < nrand; i++) {
            random_real(&rhi[i], &rlo[i], cli.seed, (uint32_t)i);
            mpfr_set_d(x, rhi[i], MPFR_RNDN);
            mpfr_add_d(x, x, rlo[i], MPFR_RNDN); /* exact: hi and lo span < 110 bits */
            for (int j = 0; j < nf; j++)
                drift_witness_error(&rc[i * nf + j], drift_round_sum2(rhi[i], rlo[i], F[j], DRIFT_RNE), x, F[j], d, qq);
        }
        mpfr_clears(x, d, qq, (mpfr_ptr)0);
        mpfr_free_cache();
    }
    /* classified by the real, not by what it became: the u = 2^-p bound is about reals in
     * the normal range */
    drift_stored_summary_t rs[DRIFT_NFORMATS];
    memset(rs, 0, sizeof rs);
    for (long i = 0; i < nrand; i++)
        for (int j = 0; j < nf; j++) drift_stored_summary_add(&rs[j], &rc[i * nf + j]);

    const drift_formats_relerr_lab_t lab = {&cli, F, nf, nrand, RAND_EMIN, RAND_EMAX, rhi, rlo, rc, rs};
    drift_formats_relerr_write(&lab); /* formats_relerr_report.c */

    free(rhi);
    free(rlo);
    free(rc);
    mpfr_free_cache();
    return 0;
}
