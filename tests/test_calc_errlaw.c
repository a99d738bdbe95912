/* test_calc_errlaw.c — `drift-calc errlaw --format F EXACT COMPUTED`: the law of a computed
 * dump's error against an exact one, per binade of |exact|. The dumps are written here from
 * mechanisms whose law is known by hand:
 *   rounding alone: exact x uniform in [2, 4) (the binade k = 1, where bf16's spacing is
 *     q = 2^(1-7) = 2^-6), computed = x rounded to nearest on that grid (nearbyint(x / q) q, the
 *     C library's rounding, not the lab's): every error lies in [-q/2, q/2] and, x's position
 *     on the grid being uniform, is uniform there, so rms = q / sqrt(12) = 0.0045105 (to a few
 *     percent over 4000 errors); no noise beyond it: sigma_conv at the search's lower end,
 *     1e-6 q; CONV decided on every one of the 10 units.
 *   noise alone, sigma = 0.3 >> q: CONV tends to GAUSS as q / sigma -> 0, so no data decide
 *     (power far below log 20): undecided; GAUSS's maximum-likelihood sigma is the rms
 *     (closed form).
 * Inputs draw from a fixed LCG (Knuth's MMIX constants): the test needs numbers, not the
 * lab's generator. */
#include <criterion/criterion.h>
#include <fenv.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

#define CALC DRIFT_BIN_DIR "/drift-calc"
#define HEADER "lo,hi,q,n,units_tested,units_conv,rms,sigma_gauss,sigma_conv,dloglik,power_conv,power_gauss,law\n"

static char dir[64];
static void setup(void) { tmpdir_make(dir, sizeof dir, "drift_errlaw"); }
static void teardown(void) { tmpdir_remove(dir); }

static uint64_t lcg = 12345;
static double uniform01(void)
{
    lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(lcg >> 11) * 0x1p-53;
}
/* Box-Muller: one N(0, 1) value */
static double normal01(void) { return sqrt(-2 * log1p(-uniform01())) * cos(2 * M_PI * uniform01()); }

/* 40 rows of 100 (a CSV line holds at most 4096 bytes): exact.csv, and computed.csv as the mechanism makes it from each exact value */
static void write_dumps(double (*computed_of)(double))
{
    char pe[128], pc[128];
    snprintf(pe, sizeof pe, "%s/exact.csv", dir);
    snprintf(pc, sizeof pc, "%s/computed.csv", dir);
    FILE *fe = fopen(pe, "w"), *fc = fopen(pc, "w");
    cr_assert(fe && fc);
    for (int r = 0; r < 40; r++)
        for (int c = 0; c < 100; c++) {
            double x = 2 + 2 * uniform01();
            fprintf(fe, "%a%c", x, c == 99 ? '\n' : ',');
            fprintf(fc, "%a%c", computed_of(x), c == 99 ? '\n' : ',');
        }
    fclose(fe), fclose(fc);
}

static double on_bf16_grid(double x) { return nearbyint(x * 0x1p6) * 0x1p-6; } /* q = 2^-6 in [2, 4) */
static double with_noise(double x) { return x + 0.3 * normal01(); }

/* The one binade's row, parsed */
typedef struct {
    double lo, hi, q, rms, sg, sc, dll, pc, pg;
    long n;
    int tested, conv;
    char law[16];
} row_t;

static void run_one(const char *fmt, row_t *r)
{
    char cmd[512];
    static char out[4096], err[1024];
    snprintf(cmd, sizeof cmd, CALC " errlaw --format %s '%s/exact.csv' '%s/computed.csv'", fmt, dir, dir);
    cr_assert_eq(run_capture(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
    cr_assert(!strncmp(out, HEADER, strlen(HEADER)), "%s", out);
    const char *line = out + strlen(HEADER);
    cr_assert_eq(sscanf(line, "%la,%la,%la,%ld,%d,%d,%lg,%lg,%lg,%lg,%lg,%lg,%15s", &r->lo, &r->hi, &r->q, &r->n,
                     &r->tested, &r->conv, &r->rms, &r->sg, &r->sc, &r->dll, &r->pc, &r->pg, r->law),
        13, "%s", out);
    cr_assert_null(strchr(strchr(line, '\n') + 1, '\n'), "one binade only: %s", out);
}

Test(calc_errlaw, rounding_alone_is_conv, .init = setup, .fini = teardown)
{
    cr_assert_eq(fegetround(), FE_TONEAREST);
    write_dumps(on_bf16_grid);
    row_t r;
    run_one("bf16", &r);
    cr_expect_eq(r.lo, 2);
    cr_expect_eq(r.hi, 4);
    cr_expect_eq(r.q, 0x1p-6);
    cr_expect_eq(r.n, 4000);
    cr_expect(fabs(r.rms / (0x1p-6 / sqrt(12)) - 1) < 0.05, "rms %g", r.rms);
    cr_expect(r.sc <= 2e-6 * 0x1p-6, "no noise beyond the rounding: sigma_conv %g", r.sc);
    cr_expect_eq(r.tested, 10);
    cr_expect_eq(r.conv, 10);
    cr_expect(r.dll > log(20) && r.pc > log(20));
    cr_expect_str_eq(r.law, "conv");
}

Test(calc_errlaw, large_noise_is_undecided, .init = setup, .fini = teardown)
{
    write_dumps(with_noise);
    row_t r;
    run_one("bf16", &r);
    cr_expect_eq(r.n, 4000);
    cr_expect(fabs(r.rms - 0.3) < 0.02, "rms %g", r.rms);
    cr_expect(fabs(r.sg / r.rms - 1) < 1e-12, "GAUSS's ML sigma is the rms: %g %g", r.sg, r.rms);
    cr_expect(r.pc < log(20) && r.pg < log(20), "the laws coincide: powers %g %g", r.pc, r.pg);
    cr_expect_str_eq(r.law, "undecided");
}

/* Refusals: one line on stderr naming the problem, exit 2, nothing on stdout. */
Test(calc_errlaw, bad_input, .init = setup, .fini = teardown)
{
    static const struct {
        const char *exact, *computed, *args, *says;
    } CASES[] = {
        {"1,2\n3,4\n", "1,2\n", "--format bf16", "COMPUTED: 1 x 2 values, EXACT 2 x 2"},
        {"1,2\n3,4\n", "1,2\n3,4\n", "", "--format: missing"},
        {"1,2\n3,4\n", "1,2\n3,4\n", "--format bf16 --units 3", "--units: '3' (accepted: 1..2, the rows)"},
        {"1,2\n3,4\n", "1,inf\n3,4\n", "--format bf16", "row 0, column 1 is inf (accepted: finite values)"},
        {"1,2\n3,4\n", "1,2\n3,4\n", "--format bf17", "--format: unknown format 'bf17'"},
    };
    for (size_t i = 0; i < sizeof CASES / sizeof *CASES; i++) {
        char pe[128], pc[128], cmd[512], out[256], err[1024];
        snprintf(pe, sizeof pe, "%s/e%zu.csv", dir, i);
        snprintf(pc, sizeof pc, "%s/c%zu.csv", dir, i);
        FILE *fe = fopen(pe, "w"), *fc = fopen(pc, "w");
        cr_assert(fe && fc);
        fputs(CASES[i].exact, fe), fputs(CASES[i].computed, fc);
        fclose(fe), fclose(fc);
        snprintf(cmd, sizeof cmd, CALC " errlaw %s '%s' '%s'", CASES[i].args, pe, pc);
        cr_expect_eq(run_capture(cmd, out, sizeof out, err, sizeof err), 2, "case %zu", i);
        cr_expect(strstr(err, CASES[i].says), "case %zu: %s", i, err);
        size_t len = strlen(err);
        cr_expect(len > 0 && !memchr(err, '\n', len - 1), "case %zu: one line: %s", i, err);
        cr_expect_str_empty(out, "case %zu", i);
    }
}
