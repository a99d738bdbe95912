/* test_round_array.c — drift_round_array and drift_round_array_float against the scalar
 * drift_round (itself held against MPFR by test_format.c and long_format.c): bit for bit,
 * every format, mode, flush and saturate setting, on random words of every exponent, on
 * values near each format's edges, in place, and through the validator's messages.
 * The exhaustive version over all fp32 inputs is long_round_array.c. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "format.h"
#include "philox.h"
#include "support.h"

#define N 6000

/* Random doubles: a third arbitrary words (every exponent, NaNs, infs), a third near 1
 * scaled by 2^[-150, 20) (the interesting ranges of every narrow format, subnormals
 * included), a third values of the format's edges with a random nudge of a few ulps. */
static void fill(double *x, size_t n, drift_format_t f, drift_stream_t *s)
{
    const drift_format_info_t *fi = drift_format_info(f);
    const double edges[] = {0.0, fi->max_finite, fi->min_normal, fi->min_subnormal, fi->min_subnormal / 2,
        fi->min_subnormal * 1.5, fi->min_normal - fi->min_subnormal, 1.0, INFINITY, NAN};
    for (size_t i = 0; i < n; i++) {
        uint64_t w = u64(s);
        switch (i % 3) {
        case 0: memcpy(&x[i], &w, sizeof w); break;
        case 1: x[i] = ldexp(1.0 + (double)(w >> 12) * 0x1p-52, (int)(w % 170) - 150); break;
        default: {
            double e = edges[w % (sizeof edges / sizeof edges[0])];
            uint64_t b;
            memcpy(&b, &e, sizeof b);
            if (isfinite(e) && e != 0) b += (uint64_t)((int64_t)((w >> 8) % 9) - 4) << (w >> 32) % 40;
            memcpy(&x[i], &b, sizeof b);
        }
        }
        if (w >> 63) x[i] = -x[i];
    }
}

Test(round_array, equals_scalar_everywhere)
{
    static double x[N], y[N], z[N];
    static float yf[N];
    static uint32_t sr[N];
    drift_stream_t s;
    drift_stream_init(&s, 7, drift_fnv1a32("test_round_array"), 0, 0);
    for (size_t i = 0; i < N; i++) sr[i] = (uint32_t)u64(&s);
    for (int f = 0; f < DRIFT_NFORMATS; f++) {
        fill(x, N, (drift_format_t)f, &s);
        for (int m = 0; m < DRIFT_NMODES; m++)
            for (int flush = 0; flush < 2; flush++)
                for (int sat = 0; sat < 2; sat++) {
                    drift_round_array_opts_t o = {(drift_format_t)f, (drift_mode_t)m, flush, sat, sr};
                    drift_round_opts_t so = {(drift_mode_t)m, flush, sat};
                    cr_assert_eq(drift_round_array(y, x, N, &o), DRIFT_OK);
                    memcpy(z, x, sizeof z);
                    cr_assert_eq(drift_round_array(z, z, N, &o), DRIFT_OK); /* in place */
                    int fl = f != DRIFT_FP64;
                    if (fl) cr_assert_eq(drift_round_array_float(yf, x, N, &o), DRIFT_OK);
                    for (size_t i = 0; i < N; i++) {
                        double want = drift_round(x[i], (drift_format_t)f, &so, sr[i]);
                        cr_assert(same(y[i], want), "%s %s flush %d sat %d: x = %a gives %a, scalar %a",
                            drift_format_name((drift_format_t)f), drift_mode_name((drift_mode_t)m), flush, sat, x[i],
                            y[i], want);
                        cr_assert(same(z[i], want), "in place: x = %a", x[i]);
                        if (fl)
                            cr_assert(same((double)yf[i], want), "float out %s %s: x = %a gives %a, scalar %a",
                                drift_format_name((drift_format_t)f), drift_mode_name((drift_mode_t)m), x[i],
                                (double)yf[i], want);
                    }
                }
    }
}

Test(round_array, validator_names_the_problem)
{
    const char *why = "unset";
    drift_round_array_opts_t ok = {DRIFT_FP16, DRIFT_RNE, 0, 0, NULL};
    cr_assert_eq(drift_round_array_validate(&ok, &why), DRIFT_OK);
    cr_assert_null(why);
    cr_assert_eq(drift_round_array_validate(NULL, &why), DRIFT_EINVAL);
    cr_assert(strstr(why, "NULL"));
    drift_round_array_opts_t bad = ok;
    bad.format = DRIFT_NFORMATS;
    cr_assert_eq(drift_round_array_validate(&bad, &why), DRIFT_EINVAL);
    cr_assert(strstr(why, "format") && strstr(why, "bf16"), "%s", why);
    bad = ok;
    bad.mode = DRIFT_NMODES;
    cr_assert_eq(drift_round_array_validate(&bad, &why), DRIFT_EINVAL);
    cr_assert(strstr(why, "mode") && strstr(why, "rz"), "%s", why);
    bad = ok;
    bad.mode = DRIFT_SR;
    cr_assert_eq(drift_round_array_validate(&bad, &why), DRIFT_EINVAL);
    cr_assert(strstr(why, "sr_bits"), "%s", why);
    bad = ok;
    bad.flush_subnormals = 2;
    cr_assert_eq(drift_round_array_validate(&bad, &why), DRIFT_EINVAL);
    cr_assert(strstr(why, "flush_subnormals"), "%s", why);
    bad = ok;
    bad.saturate = -1;
    cr_assert_eq(drift_round_array_validate(&bad, &why), DRIFT_EINVAL);
    cr_assert(strstr(why, "saturate"), "%s", why);
    double v = 1.0;
    float fv;
    cr_assert_eq(drift_round_array(NULL, &v, 1, &ok), DRIFT_EINVAL);
    cr_assert_eq(drift_round_array(&v, &v, 0, &ok), DRIFT_OK);
    drift_round_array_opts_t f64 = {DRIFT_FP64, DRIFT_RNE, 0, 0, NULL};
    cr_assert_eq(drift_round_array_float(&fv, &v, 1, &f64), DRIFT_EINVAL); /* fp64 is not a float */
}
