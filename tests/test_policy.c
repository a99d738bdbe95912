/* test_policy.c — the kernel-selection models of policy.h.
 *
 * Expected kernels are derived by hand from the documented rules (policy.h), not read from
 * the code: each case states its arithmetic. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <string.h>

#include "drift.h"
#include "gemm.h"
#include "policy.h"

typedef struct {
    size_t M, N, K;
    int sms;
    char expect[32]; /* an array: Criterion re-executes the binary per test */
} policy_case_t;

static policy_case_t VENDOR[] = {
    /* M=1, N=4096: 128x128 gives 1*32 = 32 tiles < 132, 128x64: 64, 64x128: 32, 64x64: 64;
     * none fills, the first with the most is 128x64 (64 tiles). S <= 132/64 = 2,
     * K/256 = 16: S = 2. */
    {1, 4096, 4096, 132, "splitk:2"},
    /* M=1, N=1024: most tiles 16 (128x64); S <= 132/16 = 8, K/256 = 16, cap 16: S = 8. */
    {1, 1024, 4096, 132, "splitk:8"},
    /* same shape, K = 1024: S <= min(8, 1024/256 = 4) = 4. */
    {1, 1024, 1024, 132, "splitk:4"},
    /* K = 256: K/256 = 1, no split; the 128x64 tile. */
    {1, 1024, 256, 132, "tiled:128,64,32"},
    /* M=N=64: one tile whatever the candidate; S <= min(132, 8192/256 = 32, 16) = 16. */
    {64, 64, 8192, 132, "splitk:16"},
    /* M=2048, N=4096: 128x128 gives 16*32 = 512 >= 132 tiles: fills, no split. */
    {2048, 4096, 4096, 132, "tiled:128,128,32"},
    /* M=512, N=1024: 128x128: 4*8 = 32; 128x64: 4*16 = 64; 64x128: 8*8 = 64; 64x64: 8*16 =
     * 128 < 132: none fills, 64x64 has the most (128). S <= 132/128 = 1: no split. */
    {512, 1024, 4096, 132, "tiled:64,64,32"},
    /* M=640, N=1024 on an A100 (108 SMs): 128x128 gives 5*8 = 40; 128x64: 5*16 = 80;
     * 64x128: 10*8 = 80; 64x64: 10*16 = 160 >= 108: fills. */
    {640, 1024, 4096, 108, "tiled:64,64,32"},
};

ParameterizedTestParameters(policy, vendor_like)
{
    return cr_make_param_array(policy_case_t, VENDOR, sizeof VENDOR / sizeof VENDOR[0]);
}

ParameterizedTest(policy_case_t *c, policy, vendor_like)
{
    drift_gemm_kernel_t k;
    char buf[DRIFT_GEMM_KERNEL_SPEC_MAX];
    cr_assert_eq(drift_policy_choose(&k, DRIFT_POLICY_VENDOR_LIKE, c->M, c->N, c->K, c->sms), 0);
    cr_assert_gt(drift_gemm_kernel_print(buf, sizeof buf, &k), 0);
    cr_assert_str_eq(buf, c->expect, "M=%zu N=%zu K=%zu sms=%d", c->M, c->N, c->K, c->sms);
}

/* Batch variance needs both halves: vendor-like splits K for small M*N and large K ... */
Test(policy, vendor_like_splits_small_outputs_with_long_k)
{
    size_t Ms[] = {1, 2, 8, 32};
    for (size_t t = 0; t < 4; t++) {
        drift_gemm_kernel_t k;
        cr_assert_eq(drift_policy_choose(&k, DRIFT_POLICY_VENDOR_LIKE, Ms[t], 256, 16384, 132), 0);
        cr_assert_eq(k.family, DRIFT_GEMM_SPLITK, "M=%zu", Ms[t]);
        cr_assert_geq(k.splits, 2);
    }
}

/* ... and batch-invariant never does, over a grid of shapes and devices. */
Test(policy, batch_invariant_never_splits)
{
    size_t sizes[] = {1, 2, 3, 7, 64, 100, 128, 129, 1000, 4096, 16384};
    int sms[] = {1, 80, 108, 132, 148};
    drift_gemm_kernel_t first;
    cr_assert_eq(drift_policy_choose(&first, DRIFT_POLICY_BATCH_INVARIANT, 1, 1, 1, 1), 0);
    for (size_t a = 0; a < 11; a++)
        for (size_t b = 0; b < 11; b++)
            for (size_t c = 0; c < 11; c++)
                for (size_t d = 0; d < 5; d++) {
                    drift_gemm_kernel_t k;
                    cr_assert_eq(
                        drift_policy_choose(&k, DRIFT_POLICY_BATCH_INVARIANT, sizes[a], sizes[b], sizes[c], sms[d]), 0);
                    cr_assert_neq(k.family, DRIFT_GEMM_SPLITK);
                    cr_assert(drift_gemm_kernel_equal(&k, &first), "the tile must not depend on the shape");
                }
}

/* The kernel's reduction order under vendor-like depends on M (that is batch variance);
 * for a fixed row it changes as the batch grows. */
Test(policy, vendor_like_order_depends_on_batch)
{
    drift_gemm_kernel_t k1, k2;
    cr_assert_eq(drift_policy_choose(&k1, DRIFT_POLICY_VENDOR_LIKE, 1, 1024, 4096, 132), 0);
    cr_assert_eq(drift_policy_choose(&k2, DRIFT_POLICY_VENDOR_LIKE, 2048, 1024, 4096, 132), 0);
    drift_order_t o1, o2;
    cr_assert_eq(drift_gemm_kernel_order(&o1, &k1), 0);
    cr_assert_eq(drift_gemm_kernel_order(&o2, &k2), 0);
    cr_assert_neq(o1.kind, o2.kind);
}

Test(policy, cost_model)
{
    /* M=1, N=1024, K=4096 on 132 SMs. Unsplit 128x64 tiling: 16 tiles, one wave of
     * 128*64*4096 = 33554432 MAC units. splitk:8: 128 tile-slices, one wave of
     * 128*64*512 = 4194304, plus the reduction 64 * 1*1024*8 / 132 = 3971.88: the model
     * says split-K is about 8x faster here, which is why libraries do it. */
    drift_gemm_kernel_t k;
    cr_assert_eq(drift_gemm_kernel_parse(&k, "tiled:128,64,32"), 0);
    cr_assert_float_eq(drift_policy_cost(&k, 1, 1024, 4096, 132), 33554432.0, 1e-6); /* exact integers */
    cr_assert_eq(drift_gemm_kernel_parse(&k, "splitk:8"), 0);
    cr_assert_float_eq(drift_policy_cost(&k, 1, 1024, 4096, 132), 4194304.0 + 64.0 * 1024 * 8 / 132, 1e-6);
}

Test(policy, names_and_devices)
{
    drift_policy_t p;
    cr_assert_eq(drift_policy_parse(&p, "vendor-like"), 0);
    cr_assert_eq(p, DRIFT_POLICY_VENDOR_LIKE);
    cr_assert_eq(drift_policy_parse(&p, "batch-invariant"), 0);
    cr_assert_str_eq(drift_policy_name(p), "batch-invariant");
    cr_assert_eq(drift_policy_parse(&p, "vendor"), DRIFT_EINVAL);
    cr_assert_eq(drift_policy_parse(&p, ""), DRIFT_EINVAL);
    drift_device_t d;
    cr_assert_eq(drift_device_lookup(&d, "h100"), 0);
    cr_assert_eq(d.sms, 132); /* H100 SXM5: 132 SMs (NVIDIA H100 datasheet) */
    cr_assert_eq(drift_device_lookup(&d, "a100"), 0);
    cr_assert_eq(d.sms, 108); /* A100: 108 SMs (NVIDIA A100 whitepaper) */
    cr_assert_eq(drift_device_lookup(&d, "h200x"), DRIFT_EINVAL);
    drift_gemm_kernel_t k;
    cr_assert_eq(drift_policy_choose(&k, DRIFT_POLICY_VENDOR_LIKE, 1, 1, 1, 0), DRIFT_EINVAL);
    cr_assert_eq(drift_policy_choose(NULL, DRIFT_POLICY_VENDOR_LIKE, 1, 1, 1, 1), DRIFT_EINVAL);
}
