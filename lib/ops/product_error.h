/* product_error.h — a computed matrix product against the exact product of the same rounded
 * inputs (law 1): the inputs of the matrix-product experiments (matmul_drift, its K sweep, and
 * matmul_drift_splitk, its split factors), the exact witnesses, and the error metrics over the
 * outputs. */
#ifndef DRIFT_PRODUCT_ERROR_H
#define DRIFT_PRODUCT_ERROR_H

#include <stddef.h>
#include <stdint.h>

#include "drift.h"
#include "format.h"
#include "gen.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A (M x K) from distribution d, B (K x N) standard normal, each from its own Philox stream
 * (seed, "matmul_drift", K, 2 d + matrix): independent of formats, kernels and threads, and the
 * same for both experiments at one K. */
void drift_product_inputs(double *A, double *B, size_t M, size_t N, size_t K, drift_dist_t d, uint64_t seed);

/* E[i][j] = (A B)[i][j] correctly rounded to double, W[i][j] = sum_k |a_ik b_kj| correctly
 * rounded (the normaliser); A is M x K, B is K x N, row-major. 0 or DRIFT_ENOMEM. */
DRIFT_MUST_CHECK int drift_product_exact(
    double *E, double *W, const double *A, const double *B, size_t M, size_t N, size_t K);

/* Rounds A and B to `in` (into Ar, Br) and computes the exact witnesses of the rounded product
 * into E and W (M x N each) as drift_product_exact. 0 or DRIFT_ENOMEM. */
DRIFT_MUST_CHECK int drift_product_witness(double *E, double *W, double *Ar, double *Br, const double *A,
    const double *B, size_t M, size_t N, size_t K, drift_format_t in);

typedef struct {
    double nmse;              /* sum (c - e)^2 / sum e^2 (llama.cpp's test-backend-ops metric) */
    double err_mean, err_max; /* |c - e| / sum_k |a_k b_k| over the outputs */
    double rel_med;           /* median |c - e| / |e| */
} drift_product_err_t;

/* The metrics of C against (E, W), n outputs; scratch holds n doubles. */
void drift_product_error(
    drift_product_err_t *r, const double *C, const double *E, const double *W, size_t n, double *scratch);

#ifdef __cplusplus
}
#endif

#endif
