/* backend.h — where the recipe dispatcher (dispatch.h) sends its work: the CPU kernels, or an
 * accelerator registered as a table of hooks.
 *
 * lib/ never calls cuda/ (the layers only look down): a program built with the CUDA backend
 * registers cuda/'s entry points here before main (tools/gpu_hook.c), and the command line
 * (--backend, cli.c) selects it. Once selected, every dispatcher call whose arguments the
 * device takes runs there:
 *   - deterministic kernels (GEMM naive/tiled/splitk, every sum and dot order, conversions,
 *     softmax, attention) are also computed by their CPU twin with the same arguments and
 *     compared bit for bit as they are produced (NaN equals NaN); a mismatch is a bug of one
 *     side: the dispatcher calls the mismatch handler (programs: one line naming the kernel
 *     and the first differing element, exit 2) or returns DRIFT_ERANGE with that line in
 *     drift_backend_message();
 *   - measured paths (tensor cores against their tc:ARCH model, atomic split-K, cuBLAS) have no
 *     twin: their results are returned as they are, and the experiment holds them against the
 *     exact reference like any other kernel;
 *   - a call the device has no path for (DRIFT_EUNSUPPORTED from the hook: an fp16
 *     accumulator, order random, a tc architecture that is not the device's) runs on the CPU
 *     and is counted (drift_backend_stats), so a run says how much of it the GPU computed.
 * Hooks are called from one thread at a time (the dispatcher serialises them: the CUDA
 * backend is not thread-safe); the CPU twin runs outside the lock. */
#ifndef DRIFT_BACKEND_H
#define DRIFT_BACKEND_H

#include <stddef.h>

#include "drift.h"
#include "attention.h"
#include "format.h"
#include "gemm.h"
#include "order.h"
#include "softmax.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Every hook returns 0, DRIFT_EUNSUPPORTED (no device path for these arguments: the CPU
 * computes it) or another DRIFT_E* code (message() says why). Arguments have already passed
 * the CPU path's own checks. NULL hooks: that operation always runs on the CPU. */
typedef struct {
    const char *name; /* "cuda" */
    /* 1 when a device can run, 0 when not; err gets one line (no driver, no device, ...) */
    int (*available)(char *err, size_t errsz);
    /* one line for the metadata: device, driver, runtime and library versions */
    void (*describe)(char *buf, size_t size);
    /* C = A B with the CPU's kernel and options (drift_gemm's signature); ran: what ran */
    int (*gemm)(double *C, const double *A, const double *B, size_t M, size_t N, size_t K, const drift_gemm_kernel_t *k,
        const drift_gemm_opts_t *o, char *ran, size_t ran_size);
    /* a device-only GEMM path by spec (splitk:S:atomic, cublas[:...], cublaslt[:...]) */
    int (*gemm_spec)(double *C, const double *A, const double *B, size_t M, size_t N, size_t K, const char *spec,
        const drift_gemm_opts_t *o, char *ran, size_t ran_size);
    /* gemm_spec's GEMM queued on nstreams concurrent streams: C holds nstreams results of M x N */
    int (*gemm_streams)(double *C, const double *A, const double *B, size_t M, size_t N, size_t K, const char *spec,
        const drift_gemm_opts_t *o, int nstreams, char *ran, size_t ran_size);
    /* batched: out[r] = reduction of row r (batch rows of n), as drift_sum / drift_dot */
    int (*sum)(double *out, const double *x, size_t n, size_t batch, const drift_order_t *o, const drift_acc_t *acc);
    int (*dot)(double *out, const double *a, const double *b, size_t n, size_t batch, const drift_order_t *o,
        const drift_acc_t *acc);
    /* out[i] = drift_round(in[i], f, o, 0) */
    int (*round)(double *out, const double *in, size_t n, drift_format_t f, const drift_round_opts_t *o);
    /* batch rows of n: drift_softmax of each row */
    int (*softmax)(double *out, const double *x, size_t n, size_t batch, const drift_softmax_opts_t *o);
    /* drift_attention's arguments (dispatch_attention.h) */
    int (*attention)(double *out, const double *q, size_t nq, size_t q_pos, const drift_kv_cache_t *kv,
        const unsigned char *key_mask, const drift_attn_opts_t *o);
    /* the last error's one line */
    const char *(*message)(void);
} drift_backend_ops_t;

/* Registers the accelerator (NULL: none). Programs built with CUDA do it before main. */
void drift_backend_register(const drift_backend_ops_t *ops);
/* The registered accelerator, or NULL (a build without CUDA). */
const drift_backend_ops_t *drift_backend_registered(void);

/* Sends dispatcher calls to the registered accelerator (on = 1) or to the CPU (on = 0).
 * DRIFT_EUNSUPPORTED when on = 1 and nothing is registered or no device is available (err
 * says which, in one line). */
DRIFT_MUST_CHECK int drift_backend_use(int on, char *err, size_t errsz);
/* 1 when dispatcher calls go to the accelerator. */
int drift_backend_active(void);

/* Called once when a deterministic kernel's device result differs from its CPU twin, with the
 * one-line message; programs register one that prints it and exits 2 (cli.c). Without a
 * handler the dispatcher returns DRIFT_ERANGE and the line stays in drift_backend_message(). */
typedef void (*drift_backend_mismatch_fn)(const char *line);
void drift_backend_on_mismatch(drift_backend_mismatch_fn fn);
/* The last mismatch or hook failure, one line; "" if none. */
const char *drift_backend_message(void);

typedef struct {
    unsigned long long checked;  /* device calls compared bit for bit with the CPU twin */
    unsigned long long measured; /* device calls without a twin (tensor cores, vendor paths) */
    unsigned long long on_cpu;   /* calls the device had no path for, computed on the CPU */
} drift_backend_stats_t;
drift_backend_stats_t drift_backend_stats(void);

/* ---- for the dispatcher and for tests ----------------------------------------------------- */
/* First element where a and b differ as bits (NaN equals NaN), or n when none. */
size_t drift_backend_first_diff(const double *a, const double *b, size_t n);
/* Reports a twin mismatch of `kernel` at element i (row-major with `cols` columns; cols = 0:
 * a flat index): sets the message, calls the handler, returns DRIFT_ERANGE. */
int drift_backend_mismatch(const char *kernel, size_t i, size_t cols, double device, double cpu);
/* A hook failure other than EUNSUPPORTED: the message becomes "<what>: <hook message>". */
int drift_backend_failed(int rc, const char *what);
void drift_backend_count(int checked, int measured, int on_cpu);
/* Serialise the hooks: lock before a hook call, unlock after. */
void drift_backend_lock(void);
void drift_backend_unlock(void);

#ifdef __cplusplus
}
#endif

#endif
