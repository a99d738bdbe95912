/* test_batch_sweep.c — the batch-invariance measurement (batch_sweep.h) on a small sweep whose
 * kernels are derived by hand from policy.h's rules.
 *
 * v100 (80 SMs), N = 8, K = 4096. Every candidate tile covers N = 8 in one column, so the tile
 * counts are ceil(M/128) (128-row tiles) and ceil(M/64) (64-row tiles), never 80: no candidate
 * fills the device, the first with the most tiles is taken (M <= 64: 128x128, 1 tile; beyond,
 * 64x128). S = the largest power of two <= min(80 / tiles, K / 256 = 16, 16): 16 while tiles
 * <= 5 (M <= 320), 8 from 6 tiles (M = 321..384). So vendor-like runs splitk:16 for M = 1..320
 * and splitk:8 for M = 321..330: row 0's kernel changes at M = 321 (and the self-check's full
 * product A[:321] B runs: 321 <= 512). batch-invariant is one kernel for every M. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "batch_sweep.h"
#include "drift.h"

Test(batch_sweep, kernels_change_where_the_policy_says, .timeout = 120)
{
    const drift_format_t fmts[2] = {DRIFT_FP32, DRIFT_FP16};
    const long Ks[1] = {4096};
    const drift_batch_sweep_cfg_t cfg = {fmts, 2, Ks, 1, 8, 330, DRIFT_ROWS_NORMAL, 1, "v100"};
    drift_batch_sweep_t b;
    char why[256] = "";
    cr_assert_eq(drift_batch_sweep_run(&b, &cfg, NULL, NULL, why, sizeof why), 0, "%s", why);
    for (int f = 0; f < 2; f++) {
        const drift_batch_row_t *v = drift_batch_sweep_rows(&b, f, DRIFT_POLICY_VENDOR_LIKE, 0);
        for (size_t M = 1; M <= 330; M++) {
            cr_assert_eq(v[M - 1].M, M);
            if (M <= 320)
                cr_assert_eq(v[M - 1].kc, v[0].kc, "M = %zu: the kernel of M = 1 expected", M);
            else
                cr_assert_neq(v[M - 1].kc, v[0].kc, "M = %zu: splitk:8 expected", M);
        }
        const drift_batch_sum_t *vs = drift_batch_sweep_sum(&b, f, DRIFT_POLICY_VENDOR_LIKE, 0);
        cr_assert(vs->m_changed <= 10 && (vs->first_M == 0 || vs->first_M == 321));
        cr_assert_eq(vs->tc, f == 1); /* fp16 on Volta's tensor cores, fp32 on FMA */
        const drift_batch_sum_t *bs = drift_batch_sweep_sum(&b, f, DRIFT_POLICY_BATCH_INVARIANT, 0);
        cr_assert_eq(bs->m_changed, 0);
        cr_assert_eq(bs->distinct, 1);
        cr_assert(isfinite(bs->cond_med) && bs->cond_med >= 1); /* sum|ab| >= |sum ab| */
    }
    drift_batch_sweep_free(&b);
}

/* The CSV's sample of M (batch_sweep.h): by hand, with one kernel throughout (no run ends). */
Test(batch_sweep, sampled_batch_sizes)
{
    drift_batch_row_t blk[100];
    memset(blk, 0, sizeof blk);
    for (size_t i = 0; i < 100; i++) blk[i].M = i + 1;
    const size_t yes[] = {1, 16, 31, 32, 33, 63, 64, 65, 96, 100}, no[] = {18, 30, 50, 99};
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
        cr_assert(drift_batch_sweep_sampled(blk, 100, yes[i] - 1), "M = %zu", yes[i]);
    for (size_t i = 0; i < sizeof no / sizeof *no; i++)
        cr_assert(!drift_batch_sweep_sampled(blk, 100, no[i] - 1), "M = %zu", no[i]);
    blk[49].kc = 1; /* M = 50 alone on another kernel: it and its neighbours end runs */
    cr_assert(drift_batch_sweep_sampled(blk, 100, 48) && drift_batch_sweep_sampled(blk, 100, 49) &&
              drift_batch_sweep_sampled(blk, 100, 50));
}

Test(batch_sweep, unknown_device)
{
    const drift_format_t fmts[1] = {DRIFT_FP32};
    const long Ks[1] = {256};
    const drift_batch_sweep_cfg_t cfg = {fmts, 1, Ks, 1, 8, 4, DRIFT_ROWS_NORMAL, 1, "z100"};
    drift_batch_sweep_t b;
    char why[256] = "";
    cr_assert_eq(drift_batch_sweep_run(&b, &cfg, NULL, NULL, why, sizeof why), DRIFT_EINVAL);
    cr_assert(strstr(why, "z100") != NULL);
    drift_batch_sweep_free(&b);
}
