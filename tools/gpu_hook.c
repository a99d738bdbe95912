/* gpu_hook.c — linked into every program when the CUDA backend is built: registers cuda/'s
 * entry points with lib/ before main runs, so that lib/ itself never calls into cuda/ (the
 * layers only look down):
 *   - the device description for the environment snapshot (envinfo.h): device, driver and
 *     runtime (drift_cuda_describe) and the cuBLAS / cuBLASLt versions;
 *   - the backend table the recipe dispatcher sends work to under --backend cuda|auto
 *     (backend.h): GEMM (twins, tensor cores, and the device-only atomic split-K and cuBLAS
 *     paths by spec), sum, dot, conversions, softmax and attention, each with the CPU's
 *     arguments. */
#include "backend.h"
#include "drift.h"
#include "drift_cuda.h"
#include "drift_cuda_attention.h"
#include "drift_cuda_gemm.h"
#include "drift_cuda_reduce.h"
#include "drift_cuda_softmax.h"
#include "envinfo.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* The snapshot's GPU line: runtime, driver, device, and the BLAS versions when a device is
 * there (asking cuBLAS without a driver only repeats the same "no device"). */
static void describe(char *buf, size_t size)
{
    drift_cuda_describe(buf, size);
    if (drift_cuda_device_count() > 0) {
        char blas[96];
        drift_cuda_blas_versions(blas, sizeof blas);
        size_t n = strlen(buf);
        if (n + 2 < size) snprintf(buf + n, size - n, ", %s", blas);
    }
}

static int available(char *err, size_t errsz)
{
    if (drift_cuda_device_count() > 0) return 1;
    snprintf(err, errsz, "%s", *drift_cuda_message() ? drift_cuda_message() : "no CUDA device found");
    return 0;
}

static int run_gemm(double *C, const double *A, const double *B, size_t M, size_t N, size_t K, drift_cuda_gemm_t *g,
    const drift_gemm_opts_t *o, char *ran, size_t ran_size)
{
    drift_cuda_gemm_info_t info;
    memset(&info, 0, sizeof info);
    int rc = drift_cuda_gemm(C, A, B, M, N, K, g, o, &info);
    if (!rc && ran && ran_size) snprintf(ran, ran_size, "%s", info.kernel);
    return rc;
}

static int gemm(double *C, const double *A, const double *B, size_t M, size_t N, size_t K, const drift_gemm_kernel_t *k,
    const drift_gemm_opts_t *o, char *ran, size_t ran_size)
{
    drift_cuda_gemm_t g;
    memset(&g, 0, sizeof g);
    g.path = DRIFT_CUDA_TWIN;
    g.kern = *k;
    return run_gemm(C, A, B, M, N, K, &g, o, ran, ran_size);
}

static int gemm_spec(double *C, const double *A, const double *B, size_t M, size_t N, size_t K, const char *spec,
    const drift_gemm_opts_t *o, char *ran, size_t ran_size)
{
    drift_cuda_gemm_t g;
    if (drift_cuda_gemm_parse(&g, spec)) return drift_cuda_fail(DRIFT_EINVAL, "unknown GPU GEMM spec '%s'", spec);
    return run_gemm(C, A, B, M, N, K, &g, o, ran, ran_size);
}

static int gemm_streams(double *C, const double *A, const double *B, size_t M, size_t N, size_t K, const char *spec,
    const drift_gemm_opts_t *o, int nstreams, char *ran, size_t ran_size)
{
    drift_cuda_gemm_t g;
    drift_cuda_gemm_info_t info;
    memset(&info, 0, sizeof info);
    if (drift_cuda_gemm_parse(&g, spec)) return drift_cuda_fail(DRIFT_EINVAL, "unknown GPU GEMM spec '%s'", spec);
    int rc = drift_cuda_gemm_streams(C, A, B, M, N, K, &g, o, nstreams, &info);
    if (!rc && ran && ran_size) snprintf(ran, ran_size, "%s", info.kernel);
    return rc;
}

static int sum(double *out, const double *x, size_t n, size_t batch, const drift_order_t *o, const drift_acc_t *acc)
{
    return drift_cuda_sum(out, x, n, batch, o, acc, 0);
}

static int dot(double *out, const double *a, const double *b, size_t n, size_t batch, const drift_order_t *o,
    const drift_acc_t *acc)
{
    return drift_cuda_dot(out, a, b, n, batch, o, acc, 0);
}

static int round_values(double *out, const double *in, size_t n, drift_format_t f, const drift_round_opts_t *o)
{
    return drift_cuda_round_opts(out, in, n, f, o, 2);
}

static int softmax(double *out, const double *x, size_t n, size_t batch, const drift_softmax_opts_t *o)
{
    return drift_cuda_softmax(out, x, n, batch, o, NULL);
}

static int attention(double *out, const double *q, size_t nq, size_t q_pos, const drift_kv_cache_t *kv,
    const unsigned char *key_mask, const drift_attn_opts_t *o)
{
    return drift_cuda_attention(out, q, nq, q_pos, kv, key_mask, o, 0, NULL);
}

static const drift_backend_ops_t CUDA_OPS = {
    .name = "cuda",
    .available = available,
    .describe = describe,
    .gemm = gemm,
    .gemm_spec = gemm_spec,
    .gemm_streams = gemm_streams,
    .sum = sum,
    .dot = dot,
    .round = round_values,
    .softmax = softmax,
    .attention = attention,
    .message = drift_cuda_message,
};

__attribute__((constructor)) static void drift_register_gpu_hook(void)
{
    drift_env_set_gpu_hook(describe);
    drift_backend_register(&CUDA_OPS);
}
