/* test_cuda_args.c — the CUDA backend's argument checking, without a device.
 *
 * cuda/args.c is plain C and always built, so these tests run on every machine: bad shapes,
 * orders, formats and kernel specs give the CPU path's own error codes (the expected code of
 * each case is what drift_sum / drift_dot / drift_gemm return for the same arguments, asked
 * here independently), and the GPU's own limits give DRIFT_EUNSUPPORTED with a message.
 * When the backend is built (DRIFT_HAVE_CUDA), the entry points are called too: with bad
 * arguments they return the same codes before touching CUDA; with good arguments and no
 * device they return DRIFT_EUNSUPPORTED ("skipped: no CUDA device" is printed when there is
 * none; with a device, the good cases are left to cuda/check.sh). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "drift.h"
#include "drift_cuda.h"
#include "drift_cuda_gemm.h"
#include "drift_cuda_reduce.h"
#include "format.h"
#include "gemm.h"
#include "order.h"
#include "philox.h"
#include "softmax.h"

static drift_order_t order(const char *spec)
{
    drift_order_t o;
    cr_assert_eq(drift_order_parse(&o, spec), 0, "spec %s", spec);
    return o;
}

static drift_cuda_gemm_t gk(const char *spec)
{
    drift_cuda_gemm_t g;
    cr_assert_eq(drift_cuda_gemm_parse(&g, spec), 0, "spec %s", spec);
    return g;
}

/* ---- kernel specs --------------------------------------------------------------------- */

Test(cuda_args, gemm_specs_round_trip)
{
    static const char *good[] = {"naive", "tiled:128,128,32", "splitk:4", "splitk:4:tree", "tc:h100", "splitk:8:atomic",
        "cublas", "cublas:pedantic", "cublas:tf32", "cublaslt", "cublaslt:pedantic", "cublaslt:tf32", "cublaslt:fixed"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        drift_cuda_gemm_t g = gk(good[i]);
        char buf[DRIFT_CUDA_GEMM_SPEC_MAX];
        cr_assert_gt(drift_cuda_gemm_print(buf, sizeof buf, &g), 0);
        cr_expect_str_eq(buf, good[i]);
    }
}

Test(cuda_args, bad_gemm_specs_are_refused)
{
    /* every one of these is also refused by the CPU grammar (gemm.h), checked first; tc:h300 is no
     * architecture (tc:h200 became one with the hardware-conformance work) */
    static const char *bad[] = {"", "Naive", "splitk:0", "splitk:4:tree:atomic", "splitk:4:atomic:tree",
        "splitk::atomic", "naive:atomic", "tiled:1,2,3:atomic", "cublas:", "cublas:fixed", "cublaslt:TF32", "tc:h300",
        "splitk:04:atomic", "atomic"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        drift_gemm_kernel_t k;
        drift_cuda_gemm_t g;
        cr_expect_eq(drift_gemm_kernel_parse(&k, bad[i]), DRIFT_EINVAL, "CPU accepts %s", bad[i]);
        cr_expect_eq(drift_cuda_gemm_parse(&g, bad[i]), DRIFT_EINVAL, "GPU accepts '%s'", bad[i]);
    }
    cr_expect(
        drift_cuda_gemm_is_twin(&(drift_cuda_gemm_t){DRIFT_CUDA_TWIN, {DRIFT_GEMM_SPLITK, 0, 0, 0, 4, 0, 0}, 0, 0}));
    drift_cuda_gemm_t atomic = gk("splitk:4:atomic");
    cr_expect(!drift_cuda_gemm_is_twin(&atomic), "atomic split-K is not deterministic");
}

/* ---- GEMM arguments: the CPU's codes first ------------------------------------------- */

typedef struct {
    const char *kernel;
    size_t M, N, K;
    int null_a, null_b, null_c;
    drift_format_t in;
    drift_format_t acc;
    drift_mode_t mode;
    int bad_enum; /* 1: in out of range, 2: acc out of range, 3: mode out of range */
} gemm_case_t;

Test(cuda_args, gemm_errors_match_the_cpu)
{
    static const gemm_case_t cases[] = {
        {"naive", 4, 4, 4, 1, 0, 0, DRIFT_FP32, DRIFT_FP32, DRIFT_RNE, 0}, /* A NULL */
        {"tiled:8,8,8", 4, 4, 4, 0, 1, 0, DRIFT_FP32, DRIFT_FP32, DRIFT_RNE, 0},
        {"splitk:2", 4, 4, 4, 0, 0, 1, DRIFT_FP32, DRIFT_FP32, DRIFT_RNE, 0}, /* C NULL */
        {"naive", 4, 4, 4, 0, 0, 0, DRIFT_FP32, DRIFT_FP32, DRIFT_SR, 0},     /* SR: unsupported on both */
        {"naive", 4, 4, 4, 0, 0, 0, DRIFT_FP32, DRIFT_FP32, DRIFT_RNE, 1},
        {"naive", 4, 4, 4, 0, 0, 0, DRIFT_FP32, DRIFT_FP32, DRIFT_RNE, 2},
        {"naive", 4, 4, 4, 0, 0, 0, DRIFT_FP32, DRIFT_FP32, DRIFT_RNE, 3},
        {"tc:h100", 4, 4, 4, 0, 0, 0, DRIFT_FP32, DRIFT_FP32, DRIFT_RNE, 0}, /* tc with fp32 input */
        {"tc:v100", 4, 4, 4, 0, 0, 0, DRIFT_BF16, DRIFT_FP32, DRIFT_RNE, 0}, /* no bf16 on v100 */
        {"tc:a100", 4, 4, 4, 0, 0, 0, DRIFT_FP8E4M3, DRIFT_FP32, DRIFT_RNE, 0},
        {"tc:h100", 4, 4, 4, 0, 0, 0, DRIFT_FP16, DRIFT_BF16, DRIFT_RNE, 0}, /* tc output fp32/fp16 only */
        {"cublas", 4, 4, 4, 1, 0, 0, DRIFT_FP16, DRIFT_FP32, DRIFT_RNE, 0},
        {"splitk:3:atomic", 4, 4, 4, 0, 0, 0, DRIFT_FP32, DRIFT_FP32, DRIFT_SR, 0},
    };
    double buf[64] = {0};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const gemm_case_t *c = &cases[i];
        drift_cuda_gemm_t g = gk(c->kernel);
        drift_gemm_opts_t o = drift_gemm_opts(c->in, c->acc);
        o.acc.mode = c->mode;
        if (c->bad_enum == 1) o.in = DRIFT_NFORMATS;
        if (c->bad_enum == 2) o.acc.acc = (drift_format_t)-1;
        if (c->bad_enum == 3) o.acc.mode = DRIFT_NMODES;
        const double *A = c->null_a ? NULL : buf, *B = c->null_b ? NULL : buf;
        double *C = c->null_c ? NULL : buf;
        drift_gemm_kernel_t cpu = g.kern; /* the vendor and atomic paths validate like naive */
        if (g.path != DRIFT_CUDA_TWIN) cpu = (drift_gemm_kernel_t){DRIFT_GEMM_NAIVE, 0, 0, 0, 0, 0, 0};
        double Ccpu[64];
        int want = drift_gemm(C ? Ccpu : NULL, A, B, c->M, c->N, c->K, &cpu, &o);
        cr_assert_neq(want, 0, "case %zu: the CPU accepts it; not a bad case", i);
        int got = drift_cuda_check_gemm(C, A, B, c->M, c->N, c->K, &g, &o);
        cr_expect_eq(
            got, want, "case %zu (%s): GPU check %d, CPU %d (%s)", i, c->kernel, got, want, drift_cuda_message());
        cr_expect_neq(drift_cuda_message()[0], '\0', "case %zu: no message", i);
#ifdef DRIFT_HAVE_CUDA
        double Cg[64];
        got = drift_cuda_gemm(C ? Cg : NULL, A, B, c->M, c->N, c->K, &g, &o, NULL);
        cr_expect_eq(got, want, "case %zu: drift_cuda_gemm %d, CPU %d", i, got, want);
#endif
    }
}

Test(cuda_args, gemm_sizes_that_cannot_fit)
{
    drift_cuda_gemm_t g = gk("naive");
    drift_gemm_opts_t o = drift_gemm_opts(DRIFT_FP32, DRIFT_FP32);
    double x = 0;
    size_t big = (size_t)1 << 40;
    /* the CPU gives ENOMEM for a product whose matrices cannot be addressed */
    drift_gemm_kernel_t naive = {DRIFT_GEMM_NAIVE, 0, 0, 0, 0, 0, 0};
    int want = drift_gemm(&x, &x, &x, big, big, big, &naive, &o);
    cr_assert_eq(want, DRIFT_ENOMEM);
    cr_expect_eq(drift_cuda_check_gemm(&x, &x, &x, big, big, big, &g, &o), want);
    /* M = 0 or N = 0: nothing to do, on both */
    cr_expect_eq(drift_cuda_check_gemm(&x, NULL, NULL, 0, 5, 0, &g, &o), 0);
    /* fits the CPU, not the GPU's int indexing */
    size_t M = (size_t)1 << 32;
    cr_expect_eq(drift_cuda_check_gemm(&x, &x, &x, M, 1, 1, &g, &o), DRIFT_EUNSUPPORTED);
    cr_expect(strstr(drift_cuda_message(), "int"), "message: %s", drift_cuda_message());
}

typedef struct {
    const char *kernel;
    drift_format_t in, acc;
    drift_mode_t mode;
    int fma;
    const char *why; /* a word the message must contain */
} gpu_limit_t;

Test(cuda_args, gpu_only_limits_are_unsupported_with_a_reason)
{
    static const gpu_limit_t cases[] = {
        {"naive", DRIFT_FP32, DRIFT_FP64, DRIFT_RNE, 1, "fp32"},
        {"tiled:128,128,32", DRIFT_FP16, DRIFT_FP32, DRIFT_RZ, 1, "rne"},
        {"naive", DRIFT_FP64, DRIFT_FP32, DRIFT_RNE, 1, "fp64"},
        {"tc:h100", DRIFT_FP16, DRIFT_FP16, DRIFT_RNE, 1, "fp32"},
        {"cublas", DRIFT_FP8E4M3, DRIFT_FP32, DRIFT_RNE, 1, "fp8"},
        {"cublas:tf32", DRIFT_FP16, DRIFT_FP32, DRIFT_RNE, 1, "tf32"},
    };
    double x[16] = {0};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        drift_cuda_gemm_t g = gk(cases[i].kernel);
        drift_gemm_opts_t o = drift_gemm_opts(cases[i].in, cases[i].acc);
        o.acc.mode = cases[i].mode;
        o.acc.fma = cases[i].fma;
        drift_gemm_kernel_t cpu = g.kern;
        if (g.path != DRIFT_CUDA_TWIN) cpu = (drift_gemm_kernel_t){DRIFT_GEMM_NAIVE, 0, 0, 0, 0, 0, 0};
        double C[4];
        cr_assert_eq(drift_gemm(C, x, x, 2, 2, 2, &cpu, &o), 0, "case %zu: the CPU must accept it", i);
        cr_expect_eq(drift_cuda_check_gemm(C, x, x, 2, 2, 2, &g, &o), DRIFT_EUNSUPPORTED, "case %zu", i);
        cr_expect(strstr(drift_cuda_message(), cases[i].why), "case %zu: message '%s' lacks '%s'", i,
            drift_cuda_message(), cases[i].why);
    }
    /* the epilogue: alpha, beta and out are the CPU's options; the GPU has only C = A B */
    drift_cuda_gemm_t g = gk("naive");
    drift_gemm_opts_t o = drift_gemm_opts(DRIFT_FP32, DRIFT_FP32);
    o.beta = 1;
    double C[4] = {0};
    cr_expect_eq(drift_cuda_check_gemm(C, x, x, 2, 2, 2, &g, &o), DRIFT_EUNSUPPORTED);
    /* and a good case passes */
    o = drift_gemm_opts(DRIFT_BF16, DRIFT_FP32);
    cr_expect_eq(drift_cuda_check_gemm(C, x, x, 2, 2, 2, &g, &o), 0, "%s", drift_cuda_message());
}

/* ---- sums and dot products ------------------------------------------------------------ */

Test(cuda_args, reduce_errors_match_the_cpu)
{
    double x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[2] = {0};
    drift_acc_t good = {DRIFT_FP32, DRIFT_RNE, 1};
    drift_order_t seq = order("seq"), tc = order("tc:h100");
    drift_order_t broken = seq;
    broken.kind = (drift_order_kind_t)99;
    drift_order_t warp6 = order("warp:8");
    warp6.param = 6; /* not a power of two: refused by the CPU */
    struct {
        const drift_order_t *o;
        drift_acc_t acc;
    } cases[] = {
        {&tc, good},                            /* tc on a sum/dot: EUNSUPPORTED on the CPU */
        {&broken, good},                        /* EINVAL */
        {&warp6, good},                         /* EINVAL */
        {&seq, {DRIFT_FP32, DRIFT_SR, 1}},      /* EUNSUPPORTED */
        {&seq, {DRIFT_NFORMATS, DRIFT_RNE, 1}}, /* EINVAL */
        {&seq, {DRIFT_FP32, DRIFT_NMODES, 1}},  /* EINVAL */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        double r;
        int want_sum = drift_sum(&r, x, 8, cases[i].o, &cases[i].acc);
        int want_dot = drift_dot(&r, x, x, 8, NULL, cases[i].o, &cases[i].acc);
        cr_assert_neq(want_sum, 0, "case %zu", i);
        cr_expect_eq(
            drift_cuda_check_reduce(out, x, NULL, 8, 1, cases[i].o, &cases[i].acc, 0), want_sum, "sum case %zu", i);
        cr_expect_eq(
            drift_cuda_check_reduce(out, x, x, 8, 1, cases[i].o, &cases[i].acc, 0), want_dot, "dot case %zu", i);
#ifdef DRIFT_HAVE_CUDA
        cr_expect_eq(
            drift_cuda_sum(out, x, 8, 1, cases[i].o, &cases[i].acc, 0), want_sum, "drift_cuda_sum case %zu", i);
        cr_expect_eq(
            drift_cuda_dot(out, x, x, 8, 1, cases[i].o, &cases[i].acc, 0), want_dot, "drift_cuda_dot case %zu", i);
#endif
    }
    /* NULL inputs with work to do: EINVAL as on the CPU */
    double r;
    cr_expect_eq(drift_sum(&r, NULL, 8, &seq, &good), DRIFT_EINVAL);
    cr_expect_eq(drift_cuda_check_reduce(out, NULL, NULL, 8, 1, &seq, &good, 0), DRIFT_EINVAL);
    cr_expect_eq(drift_cuda_check_reduce(NULL, x, NULL, 8, 1, &seq, &good, 0), DRIFT_EINVAL);
}

Test(cuda_args, reduce_gpu_limits)
{
    double x[4] = {1, 0.1, 3, 4}, out[1] = {0};
    drift_acc_t f32 = {DRIFT_FP32, DRIFT_RNE, 1}, f16 = {DRIFT_FP16, DRIFT_RNE, 1}, rna = {DRIFT_FP64, DRIFT_RNA, 1};
    drift_order_t seq = order("seq"), rnd = order("random:7"), w2048 = order("warp:2048"), w64 = order("warp:64");
    drift_order_t w32 = order("warp:32"), pw = order("pairwise");
    cr_expect_eq(drift_cuda_check_reduce(out, x, NULL, 4, 1, &seq, &f16, 0), DRIFT_EUNSUPPORTED);
    cr_expect_eq(drift_cuda_check_reduce(out, x, NULL, 4, 1, &seq, &rna, 0), DRIFT_EUNSUPPORTED);
    cr_expect_eq(drift_cuda_check_reduce(out, x, NULL, 4, 1, &rnd, &f32, 0), DRIFT_EUNSUPPORTED);
    cr_expect_eq(drift_cuda_check_reduce(out, x, NULL, 4, 1, &w2048, &f32, 0), DRIFT_EUNSUPPORTED);
    cr_expect_eq(
        drift_cuda_check_reduce(out, x, NULL, 4, 1, &w64, &f32, 2), DRIFT_EUNSUPPORTED, "shuffles need W <= 32");
    cr_expect_eq(drift_cuda_check_reduce(out, x, NULL, 4, 1, &pw, &f32, 2), DRIFT_EINVAL, "pairwise has one kernel");
    /* 0.1 is not an fp32 value: the GPU would read a different number */
    cr_expect_eq(drift_cuda_check_reduce(out, x, NULL, 4, 1, &w32, &f32, 0), DRIFT_EUNSUPPORTED);
    cr_expect(strstr(drift_cuda_message(), "fp32"), "%s", drift_cuda_message());
    x[1] = 0.5;
    cr_expect_eq(drift_cuda_check_reduce(out, x, NULL, 4, 1, &w32, &f32, 2), 0, "%s", drift_cuda_message());
    cr_expect_eq(drift_cuda_check_reduce(out, x, x, 4, 1, &pw, &f32, 1), 0, "%s", drift_cuda_message());
}

/* ---- conversions ---------------------------------------------------------------------- */

Test(cuda_args, round_checks)
{
    double in[2] = {1.0, 0.1}, out[2] = {0};
    drift_round_opts_t rne = {DRIFT_RNE, 0, 0}, sr = {DRIFT_SR, 0, 0}, rna = {DRIFT_RNA, 0, 0};
    drift_round_opts_t sat = {DRIFT_RNE, 0, 1}, ftz = {DRIFT_RNE, 1, 0}, ru = {DRIFT_RU, 0, 0};
    cr_expect_eq(drift_cuda_check_round(out, in, 2, DRIFT_NFORMATS, &rne, 1), DRIFT_EINVAL);
    cr_expect_eq(drift_cuda_check_round(out, in, 2, DRIFT_FP16, &rne, 0), DRIFT_EINVAL);
    cr_expect_eq(drift_cuda_check_round(out, in, 2, DRIFT_FP16, &rne, 4), DRIFT_EINVAL);
    cr_expect_eq(drift_cuda_check_round(NULL, in, 2, DRIFT_FP16, &rne, 1), DRIFT_EINVAL);
    cr_expect_eq(drift_cuda_check_round(out, in, 2, DRIFT_FP16, &sr, 1), DRIFT_EUNSUPPORTED);
    cr_expect_eq(drift_cuda_check_round(out, in, 2, DRIFT_FP16, &rna, 1), DRIFT_EUNSUPPORTED);
    cr_expect_eq(drift_cuda_check_round(out, in, 2, DRIFT_TF32, &rna, 1), 0);
    cr_expect_eq(drift_cuda_check_round(out, in, 2, DRIFT_TF32, &ru, 1), DRIFT_EUNSUPPORTED);
    cr_expect_eq(drift_cuda_check_round(out, in, 2, DRIFT_FP16, &ftz, 1), DRIFT_EUNSUPPORTED);
    cr_expect_eq(drift_cuda_check_round(out, in, 2, DRIFT_FP16, &sat, 1), DRIFT_EUNSUPPORTED);
    cr_expect_eq(drift_cuda_check_round(out, in, 2, DRIFT_FP8E4M3, &sat, 1), 0);
    cr_expect_eq(drift_cuda_check_round(out, in, 2, DRIFT_FP8E5M2, &ru, 1), DRIFT_EUNSUPPORTED);
    /* kernel 3 reads fp32: 0.1 is not an fp32 value */
    cr_expect_eq(drift_cuda_check_round(out, in, 2, DRIFT_BF16, &rne, 3), DRIFT_EINVAL);
    cr_expect_eq(drift_cuda_check_round(out, in, 1, DRIFT_BF16, &rne, 3), 0);
    /* the format names the CPU parser refuses are refused before any of this */
    drift_format_t f;
    cr_expect_eq(drift_format_parse(&f, "fp8"), DRIFT_EINVAL);
}

/* ---- the entry points without a device ------------------------------------------------ */

Test(cuda_args, good_arguments_without_a_device)
{
#ifndef DRIFT_HAVE_CUDA
    printf("test_cuda_args: CUDA backend not built: skipped\n");
    return;
#else
    if (drift_cuda_device_count() > 0) { /* the "no device" expectations do not apply */
        printf("test_cuda_args: a CUDA device is present: the device runs are cuda/check.sh's\n");
        return;
    }
    printf("test_cuda_args: skipped: no CUDA device (entry points checked to refuse cleanly)\n");
    double x[4] = {1, 2, 3, 4}, out[4] = {0};
    drift_acc_t f32 = {DRIFT_FP32, DRIFT_RNE, 1};
    drift_order_t seq = order("seq");
    cr_expect_eq(drift_cuda_sum(out, x, 4, 1, &seq, &f32, 0), DRIFT_EUNSUPPORTED);
    cr_expect(strstr(drift_cuda_message(), "no CUDA device"), "%s", drift_cuda_message());
    drift_cuda_gemm_t g = gk("tiled:128,128,32");
    drift_gemm_opts_t o = drift_gemm_opts(DRIFT_FP32, DRIFT_FP32);
    cr_expect_eq(drift_cuda_gemm(out, x, x, 2, 2, 1, &g, &o, NULL), DRIFT_EUNSUPPORTED);
    cr_expect_eq(drift_cuda_round(out, x, 4, DRIFT_FP16, DRIFT_RNE), DRIFT_EUNSUPPORTED);
    cr_expect_eq(drift_cuda_device_count(), 0);
#endif
}

/* ---- softmax ---------------------------------------------------------------------------- */
#include "drift_cuda_softmax.h"
Test(cuda_args, softmax_checks_match_the_cpu_then_name_the_subset)
{
    double x[4] = {0, 1, 2, 3}, out[4] = {0};
    char err[DRIFT_ERRMSG_MAX];
    drift_softmax_opts_t o = drift_softmax_opts(DRIFT_FP16, DRIFT_FP32);
    o.scale = -1; /* the CPU refuses it */
    int want = drift_softmax_validate(&o, err, sizeof err);
    cr_assert_neq(want, 0);
    cr_expect_eq(drift_cuda_check_softmax(out, x, 4, 1, &o), want);
    o = drift_softmax_opts(DRIFT_FP16, DRIFT_FP32);
    o.acc.mode = DRIFT_SR;
    cr_expect_eq(drift_cuda_check_softmax(out, x, 4, 1, &o), drift_softmax_validate(&o, err, sizeof err));
    o = drift_softmax_opts(DRIFT_FP16, DRIFT_FP32);
    cr_expect_eq(drift_cuda_check_softmax(NULL, x, 4, 1, &o), DRIFT_EINVAL);
    cr_expect_eq(drift_cuda_check_softmax(out, x, 4, 1, &o), 0, "%s", drift_cuda_message());
    o.exp = DRIFT_EXP_EXP2;
    cr_expect_eq(drift_cuda_check_softmax(out, x, 4, 1, &o), DRIFT_EUNSUPPORTED);
    o = drift_softmax_opts(DRIFT_FP16, DRIFT_FP16);
    cr_expect_eq(drift_cuda_check_softmax(out, x, 4, 1, &o), DRIFT_EUNSUPPORTED, "fp16 accumulator");
    o = drift_softmax_opts(DRIFT_FP16, DRIFT_FP32);
    cr_assert_eq(drift_order_parse(&o.order, "pairwise"), 0);
    cr_expect_eq(drift_cuda_check_softmax(out, x, 4, 1, &o), DRIFT_EUNSUPPORTED, "order pairwise");
}

/* ---- the dispatcher's hook path (backend.h, tools/gpu_hook.c) --------------------------- */
/* What --backend cuda calls: the table tools/gpu_hook.c registers. Its entries take the CPU's
 * own arguments (kernel, options, order, acc) and must give the CPU's codes for bad ones
 * without a device; good ones without a device are DRIFT_EUNSUPPORTED (the dispatcher then
 * computes on the CPU) and drift_backend_use refuses the device with cuda's own reason. */
#include "backend.h"

Test(cuda_args, dispatcher_hook_gives_the_cpu_codes)
{
    const drift_backend_ops_t *ops = drift_backend_registered();
#ifndef DRIFT_HAVE_CUDA
    cr_expect_null(ops, "a build without CUDA registers no backend");
    char why[256] = "";
    cr_expect_eq(drift_backend_use(1, why, sizeof why), DRIFT_EUNSUPPORTED);
    cr_expect(strstr(why, "no CUDA backend"), "%s", why);
    printf("skipped: no CUDA device (CUDA backend not built)\n");
#else
    cr_assert(ops && !strcmp(ops->name, "cuda"), "tools/gpu_hook.c registers the cuda table before main");
    double A[6] = {1, 2, 3, 4, 5, 6}, B[6] = {1, 0, 0, 1, 1, 1}, C[4] = {0}, y[2];
    char ran[64];
    drift_gemm_opts_t good = drift_gemm_opts(DRIFT_FP32, DRIFT_FP32), sr = good;
    sr.acc.mode = DRIFT_SR;
    drift_gemm_kernel_t naive = {.family = DRIFT_GEMM_NAIVE},
                        badtile = {.family = DRIFT_GEMM_TILED, .bm = 0, .bn = 8, .bk = 8};
    drift_gemm_kernel_t v100 = {.family = DRIFT_GEMM_TC, .arch = DRIFT_TC_V100};
    drift_gemm_opts_t bf16 = drift_gemm_opts(DRIFT_BF16, DRIFT_FP32); /* V100 tensor cores: fp16 only */
    struct {
        const char *what;
        const double *A;
        const drift_gemm_kernel_t *k;
        const drift_gemm_opts_t *o;
    } cases[] = {{"NULL A", NULL, &naive, &good}, {"tile 0", A, &badtile, &good}, {"SR", A, &naive, &sr},
        {"tc:v100 bf16", A, &v100, &bf16}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int cpu = drift_gemm(C, cases[i].A, B, 2, 2, 3, cases[i].k, cases[i].o);
        cr_assert_neq(cpu, 0, "%s is bad input", cases[i].what);
        cr_expect_eq(
            ops->gemm(C, cases[i].A, B, 2, 2, 3, cases[i].k, cases[i].o, ran, sizeof ran), cpu, "%s", cases[i].what);
    }
    drift_acc_t f32 = {DRIFT_FP32, DRIFT_RNE, 1}, sracc = {DRIFT_FP32, DRIFT_SR, 1};
    drift_order_t seq = order("seq"), tc = order("tc:h100");
    cr_expect_eq(ops->sum(y, A, 3, 2, &seq, &sracc), drift_sum(y, A, 3, &seq, &sracc), "SR accumulator");
    cr_expect_eq(ops->dot(y, A, B, 3, 2, &tc, &f32), drift_dot(y, A, B, 3, NULL, &tc, &f32), "tc is not a dot order");
    cr_expect_eq(ops->gemm_spec(C, A, B, 2, 2, 3, "cublas:fixed", &good, ran, sizeof ran), DRIFT_EINVAL);
    if (drift_cuda_device_count() == 0) {
        cr_expect_eq(ops->gemm(C, A, B, 2, 2, 3, &naive, &good, ran, sizeof ran), DRIFT_EUNSUPPORTED);
        cr_expect_eq(ops->sum(y, A, 3, 2, &seq, &f32), DRIFT_EUNSUPPORTED);
        char why[256] = "";
        cr_expect_eq(drift_backend_use(1, why, sizeof why), DRIFT_EUNSUPPORTED);
        cr_expect(strstr(why, "CUDA"), "the reason is cuda's own: %s", why);
        cr_expect_eq(drift_backend_active(), 0);
        printf("skipped: no CUDA device (good arguments left to cuda/check.sh)\n");
    }
#endif
}

/* ---- attention (cuda/drift_cuda_attention.h) ------------------------------------------- */
/* Each bad case is handed to drift_attention itself and to the device's check: same code and
 * the same one-line message (the CPU's words). Then the device's subset: recipes the float
 * path does not compute are DRIFT_EUNSUPPORTED with a reason, and good ones pass the check
 * (and, without a device, the entry point and the hook say DRIFT_EUNSUPPORTED). */
#include "drift_cuda_attention.h"
#include "dispatch_attention.h"

static drift_attn_opts_t attn_opts(const char *kernel)
{
    drift_attn_opts_t o = drift_attn_opts(4, 2, 8, DRIFT_BF16);
    cr_assert_eq(drift_attn_kernel_parse(&o.kernel, kernel, NULL, 0), 0, "%s", kernel);
    return o;
}

Test(cuda_args, attention_errors_match_the_cpu)
{
    drift_kv_cache_t kv, kv_other;
    drift_kv_format_t kf = {DRIFT_KV_FLOAT, DRIFT_BF16};
    cr_assert_eq(drift_kv_init(&kv, 2, 8, 16, &kf, NULL, 0), 0);
    cr_assert_eq(drift_kv_init(&kv_other, 1, 8, 16, &kf, NULL, 0), 0);
    double k[16 * 2 * 8], q[3 * 4 * 8], out[3 * 4 * 8];
    for (size_t i = 0; i < sizeof k / sizeof *k; i++) k[i] = sin((double)i);
    for (size_t i = 0; i < sizeof q / sizeof *q; i++) q[i] = cos((double)i);
    cr_assert_eq(drift_kv_append(&kv, k, k, 4, NULL, 0), 0);
    drift_attn_opts_t good = attn_opts("flash:16,4"), heads = good, dim = good, scale = good, sr = good, tile = good;
    heads.heads = 3;  /* not a multiple of kv_heads = 2 */
    dim.head_dim = 0; /* no head_dim */
    scale.scale = -1; /* scale must be > 0 or 0 */
    sr.pv.acc.mode = DRIFT_SR;
    tile.kernel.bc = 0; /* a tile of nothing */
    struct {
        const char *what;
        const double *out, *q;
        size_t nq, q_pos;
        const drift_kv_cache_t *kv;
        const drift_attn_opts_t *o;
    } cases[] = {
        {"heads not a multiple", out, q, 1, 3, &kv, &heads},
        {"head_dim 0", out, q, 1, 3, &kv, &dim},
        {"negative scale", out, q, 1, 3, &kv, &scale},
        {"SR accumulator", out, q, 1, 3, &kv, &sr},
        {"tile 0", out, q, 1, 3, &kv, &tile},
        {"no cache", out, q, 1, 3, NULL, &good},
        {"NULL q", out, NULL, 1, 3, &kv, &good},
        {"cache of another shape", out, q, 1, 0, &kv_other, &good},
        {"causal past the cache", out, q, 3, 2, &kv, &good},
        {"options missing", out, q, 1, 3, &kv, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char cpu_err[DRIFT_ERRMSG_MAX] = "";
        int cpu = drift_attention((double *)cases[i].out, cases[i].q, cases[i].nq, cases[i].q_pos, cases[i].kv, NULL,
            cases[i].o, cpu_err, sizeof cpu_err);
        cr_assert_neq(cpu, 0, "%s is bad input", cases[i].what);
        int gpu = drift_cuda_check_attention(
            cases[i].out, cases[i].q, cases[i].nq, cases[i].q_pos, cases[i].kv, NULL, cases[i].o);
        cr_expect_eq(gpu, cpu, "%s: code", cases[i].what);
        cr_expect_str_eq(drift_cuda_message(), cpu_err, "%s: message", cases[i].what);
    }
    drift_kv_free(&kv);
    drift_kv_free(&kv_other);
}

Test(cuda_args, attention_subset_and_good_calls)
{
    drift_kv_cache_t kv;
    drift_kv_format_t kf = {DRIFT_KV_INT8_TOKEN, DRIFT_FP32};
    cr_assert_eq(drift_kv_init(&kv, 2, 8, 16, &kf, NULL, 0), 0);
    double k[16 * 2 * 8], q[4 * 8], out[4 * 8];
    for (size_t i = 0; i < sizeof k / sizeof *k; i++) k[i] = sin((double)i);
    for (size_t i = 0; i < sizeof q / sizeof *q; i++) q[i] = cos((double)i);
    cr_assert_eq(drift_kv_append(&kv, k, k, 16, NULL, 0), 0);
    /* good: every kernel, bf16 / fp16 / fp32 storage of P, any output */
    static const char *kernels[] = {
        "standard", "flash:16,4", "flash:1,16", "splitkv:3", "splitkv:2,4", "splitkv:size=8,4"};
    for (size_t i = 0; i < sizeof kernels / sizeof *kernels; i++) {
        drift_attn_opts_t o = attn_opts(kernels[i]);
        o.pv.out = DRIFT_FP8E4M3;
        cr_expect_eq(
            drift_cuda_check_attention(out, q, 1, 15, &kv, NULL, &o), 0, "%s: %s", kernels[i], drift_cuda_message());
        o.pv.in = DRIFT_FP16;
        o.qk.in = DRIFT_FP8E5M2;
        cr_expect_eq(
            drift_cuda_check_attention(out, q, 1, 15, &kv, NULL, &o), 0, "%s: %s", kernels[i], drift_cuda_message());
    }
    /* the float path's limits: unsupported, with a reason naming the option */
    drift_attn_opts_t base = attn_opts("flash:16,4"), o;
    struct {
        const char *what, *word; /* the case (edited below by index) and a word its reason names */
    } cases[] = {
        {"pairwise qk", "qk order"},
        {"nofma pv", "pv accumulator"},
        {"fp64 qk.in", "qk input"},
        {"tf32 pv.in", "pv.in"},
        {"fp64 softmax", "softmax accumulator"},
        {"exp2", "expf"},
        {"online standard", "safe"},
        {"fp8 scores", "qk.out"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        o = base;
        switch (i) {
        case 0: o.qk.order = order("pairwise"); break;
        case 1: o.pv.acc.fma = 0; break;
        case 2: o.qk.in = DRIFT_FP64; break;
        case 3: o.pv.in = DRIFT_TF32; break;
        case 4: o.softmax_acc.acc = DRIFT_FP64; break;
        case 5: o.exp = DRIFT_EXP_EXP2; break;
        case 6:
            o.kernel.kind = DRIFT_ATTN_STANDARD;
            o.softmax.kind = DRIFT_SOFTMAX_ONLINE;
            o.softmax.block = 1;
            break;
        case 7:
            o.kernel.kind = DRIFT_ATTN_STANDARD;
            o.qk.out = DRIFT_FP8E4M3;
            break;
        }
        char err[DRIFT_ERRMSG_MAX];
        cr_assert_eq(drift_attention(out, q, 1, 15, &kv, NULL, &o, err, sizeof err), 0, "%s: the CPU takes it: %s",
            cases[i].what, err);
        cr_expect_eq(drift_cuda_check_attention(out, q, 1, 15, &kv, NULL, &o), DRIFT_EUNSUPPORTED, "%s", cases[i].what);
        cr_expect(strstr(drift_cuda_message(), cases[i].word), "%s: %s", cases[i].what, drift_cuda_message());
    }
#ifdef DRIFT_HAVE_CUDA
    const drift_backend_ops_t *ops = drift_backend_registered();
    cr_assert(ops && ops->attention, "the hook registers attention");
    drift_attn_opts_t bad = base;
    bad.heads = 3;
    cr_expect_eq(ops->attention(out, q, 1, 15, &kv, NULL, &bad), DRIFT_EINVAL, "bad options: the CPU's code");
    cr_expect_eq(drift_cuda_attention(out, q, 1, 15, &kv, NULL, &base, 7, NULL), DRIFT_EINVAL,
        "kernel version 7 does not exist");
    if (drift_cuda_device_count() == 0) {
        cr_expect_eq(ops->attention(out, q, 1, 15, &kv, NULL, &base), DRIFT_EUNSUPPORTED);
        printf("skipped: no CUDA device (attention's good arguments left to cuda/check.sh)\n");
    }
#endif
    /* without a selected device the dispatcher is drift_attention itself */
    double want[4 * 8];
    cr_assert_eq(drift_attention(want, q, 1, 15, &kv, NULL, &base, NULL, 0), 0);
    cr_assert_eq(drift_dispatch_attention(out, q, 1, 15, &kv, NULL, &base, NULL, 0), 0);
    cr_expect_eq(memcmp(out, want, sizeof out), 0);
    drift_kv_free(&kv);
}

/* ---- the attention kernel's logic, run on the host -------------------------------------- */
/* cuda/attention_rows.h holds the rows' arithmetic that kernel 1 runs; compiled here with
 * plain fp32 operations (-ffp-contract=off: each one correctly rounded, as __fmul_rn ...),
 * the CPU's correctly rounded exp and log, and drift_rne for the roundings, it must give
 * drift_attention's bits for every kernel, format, shape and mask: the twin's order of
 * operations is checked here, without a device; cuda/check_attention.cu checks the device's
 * own arithmetic on hardware. */
static float host_mul(float a, float b) { return a * b; }
static float host_add(float a, float b) { return a + b; }
static float host_sub(float a, float b) { return a - b; }
static float host_div(float a, float b) { return a / b; }
static float host_fma(float a, float b, float c) { return fmaf(a, b, c); }
static float host_exp_cr(float t, int *hard)
{
    (void)hard;
    return drift_kexpf(t);
}
static float host_log_cr(float t, int *hard)
{
    (void)hard;
    return (float)drift_klog(t, DRIFT_FP32);
}
static float host_round(float x, drift_format_t f) { return (float)drift_rne(x, f); }
#define ATTN_FN static
#define attn_mul host_mul
#define attn_add host_add
#define attn_sub host_sub
#define attn_div host_div
#define attn_fma host_fma
#define attn_exp_cr host_exp_cr
#define attn_log_cr host_log_cr
#define attn_round host_round
#include "attention_rows.h"

/* drift_cuda_attention's host part with the rows run here instead of on the device. */
static int rows_on_host(double *out, const double *q, size_t nq, size_t q_pos, const drift_kv_cache_t *kv,
    const unsigned char *mask, const drift_attn_opts_t *o)
{
    attn_args_t a;
    float *hq, *hk, *hv;
    int rc = attn_stage(&a, &hq, &hk, &hv, q, nq, q_pos, kv, o);
    if (rc) return rc;
    float *res = malloc(a.rows * a.d * sizeof *res), *scr = malloc(a.rows * a.per_row * sizeof *scr);
    int *hard = malloc(a.rows * sizeof *hard);
    cr_assert(res && scr && hard);
    a.res = res, a.scratch = scr, a.hard = hard, a.q = hq, a.K = hk, a.V = hv, a.mask = mask;
    for (size_t r = 0; r < a.rows; r++) attn_row(&a, r);
    for (size_t i = 0; i < a.rows * a.d; i++) out[i] = drift_rne(res[i], o->pv.out);
    free(res), free(scr), free(hard), free(hq), free(hk), free(hv);
    return 0;
}

Test(cuda_args, attention_rows_logic_equals_drift_attention)
{
    static const char *kernels[] = {
        "standard", "flash:64,64", "flash:4,5", "splitkv:3", "splitkv:2,4", "splitkv:size=16,8", "splitkv:size=8"};
    static const drift_format_t fmts[] = {DRIFT_FP32, DRIFT_BF16, DRIFT_FP16};
    enum { H = 4, G = 2, D = 6, L = 37, NQ = 5 };
    double k[L * G * D], v[L * G * D], q[NQ * H * D], want[NQ * H * D], got[NQ * H * D];
    unsigned char mask[L];
    drift_stream_t st;
    drift_stream_init(&st, 1, drift_fnv1a32("test_cuda_args"), 0, 0);
    for (size_t i = 0; i < L * G * D; i++) k[i] = 2 * drift_stream_normal(&st), v[i] = drift_stream_normal(&st);
    for (size_t i = 0; i < NQ * H * D; i++) q[i] = 2 * drift_stream_normal(&st);
    for (size_t j = 0; j < L; j++) mask[j] = j % 7 != 3;
    size_t checked = 0;
    for (size_t f = 0; f < 3; f++) {
        drift_kv_cache_t kv;
        drift_kv_format_t kf = {DRIFT_KV_FLOAT, fmts[f]};
        cr_assert_eq(drift_kv_init(&kv, G, D, L, &kf, NULL, 0), 0);
        cr_assert_eq(drift_kv_append(&kv, k, v, L, NULL, 0), 0);
        for (size_t ki = 0; ki < sizeof kernels / sizeof *kernels; ki++)
            for (int variant = 0; variant < 4; variant++) {
                drift_attn_opts_t o = drift_attn_opts(H, G, D, fmts[f]);
                cr_assert_eq(drift_attn_kernel_parse(&o.kernel, kernels[ki], NULL, 0), 0);
                o.softmax_acc.fma = variant != 1;
                if (variant == 2) o.pv.out = DRIFT_FP32, o.qk.out = DRIFT_FP32, o.scale = 1.0;
                int causal = variant != 3;
                o.causal = causal;
                const unsigned char *m = causal ? NULL : mask;
                size_t q_pos = causal ? L - NQ : 0;
                cr_assert_eq(drift_cuda_check_attention(got, q, NQ, q_pos, &kv, m, &o), 0, "%s", drift_cuda_message());
                cr_assert_eq(drift_attention(want, q, NQ, q_pos, &kv, m, &o, NULL, 0), 0);
                cr_assert_eq(rows_on_host(got, q, NQ, q_pos, &kv, m, &o), 0);
                size_t i = drift_backend_first_diff(got, want, NQ * H * D);
                cr_expect_eq(i, (size_t)NQ * H * D, "%s %s variant %d: first difference at %zu: rows %a, cpu %a",
                    kernels[ki], drift_format_name(fmts[f]), variant, i, i < NQ * H * D ? got[i] : 0,
                    i < NQ * H * D ? want[i] : 0);
                checked++;
            }
        drift_kv_free(&kv);
    }
    cr_expect_eq(checked, 3 * 7 * 4);
}

/* ---- one GEMM on concurrent streams (drift_cuda_gemm_streams, determinism's third schedule) */
#include "dispatch_streams.h"

Test(cuda_args, gemm_streams_checks)
{
    double A[6] = {1, 2, 3, 4, 5, 6}, B[6] = {1, 0, 0, 1, 1, 1}, C[4 * DRIFT_CUDA_MAX_STREAMS];
    drift_gemm_opts_t o = drift_gemm_opts(DRIFT_FP32, DRIFT_FP32);
    drift_cuda_gemm_t atomic = gk("splitk:2:atomic"), blas = gk("cublas"), twin = gk("splitk:2"),
                      fixed = gk("cublaslt:fixed");
    cr_expect_eq(drift_cuda_check_gemm_streams(C, A, B, 2, 2, 3, &atomic, &o, 4), 0, "%s", drift_cuda_message());
    cr_expect_eq(drift_cuda_check_gemm_streams(C, A, B, 2, 2, 3, &blas, &o, DRIFT_CUDA_MAX_STREAMS), 0, "%s",
        drift_cuda_message());
    cr_expect_eq(drift_cuda_check_gemm_streams(C, A, B, 2, 2, 3, &atomic, &o, 0), DRIFT_EINVAL, "0 streams");
    cr_expect_eq(
        drift_cuda_check_gemm_streams(C, A, B, 2, 2, 3, &atomic, &o, DRIFT_CUDA_MAX_STREAMS + 1), DRIFT_EINVAL);
    cr_expect(strstr(drift_cuda_message(), "streams"), "%s", drift_cuda_message());
    cr_expect_eq(drift_cuda_check_gemm_streams(C, A, B, 2, 2, 3, &twin, &o, 2), DRIFT_EUNSUPPORTED, "a twin");
    cr_expect_eq(drift_cuda_check_gemm_streams(C, A, B, 2, 2, 3, &fixed, &o, 2), DRIFT_EUNSUPPORTED, "cublaslt:fixed");
    cr_expect_eq(
        drift_cuda_check_gemm_streams(C, NULL, B, 2, 2, 3, &atomic, &o, 2), DRIFT_EINVAL, "the CPU's check first");
    /* no device selected: the dispatcher refuses, with the reason */
    char ran[64];
    cr_expect_eq(drift_dispatch_gemm_streams(C, A, B, 2, 2, 3, "cublas", &o, 2, ran, sizeof ran), DRIFT_EUNSUPPORTED);
    cr_expect(strstr(drift_backend_message(), "streams"), "%s", drift_backend_message());
#ifdef DRIFT_HAVE_CUDA
    if (drift_cuda_device_count() == 0) {
        cr_expect_eq(drift_cuda_gemm_streams(C, A, B, 2, 2, 3, &atomic, &o, 2, NULL), DRIFT_EUNSUPPORTED);
        printf("skipped: no CUDA device (streams left to the determinism experiment in cuda/check.sh)\n");
    }
#endif
}
