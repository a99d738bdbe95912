/* format.h — the lab's number formats and correctly rounded conversion into them.
 *
 * A format is (precision p including the hidden bit, emin, emax, largest finite value,
 * whether it has infinities). Every value of every format is exactly a double, so a
 * "value in format F" is a double that F can represent; rounding maps any double to one.
 *
 * Rounding is single: drift_round(x, F) rounds the double x straight to F (never via
 * fp32), so 1 + 2^-11 + 2^-40 becomes 1 + 2^-10 in fp16.
 *
 * Arithmetic helpers (drift_add, drift_mul, drift_fma) return the exact result rounded
 * once to F. They never rely on "double is wide enough": for p <= 51 they round the
 * exact result to odd at 53 bits first (Boldo & Melquiond), which makes the second
 * rounding exact for every mode. */
#ifndef DRIFT_FORMAT_H
#define DRIFT_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include "drift.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    DRIFT_FP64 = 0,
    DRIFT_FP32,
    DRIFT_TF32,
    DRIFT_FP16,
    DRIFT_BF16,
    DRIFT_FP8E4M3, /* OCP "fn": no infinities, max 448, NaN = S.1111.111 */
    DRIFT_FP8E5M2,
    DRIFT_NFORMATS
} drift_format_t;

typedef struct {
    const char *name;     /* canonical name: "fp64" "fp32" "tf32" "fp16" "bf16" "fp8e4m3" "fp8e5m2" */
    int bits;             /* storage width of the encoding (tf32: the 32-bit fp32 word) */
    int p;                /* precision in bits, hidden bit included */
    int emin, emax;       /* exponent of the smallest and largest normal binade */
    int has_inf;          /* 0 for fp8e4m3: overflow gives NaN (or saturates) */
    double max_finite;    /* largest finite value */
    double min_normal;    /* 2^emin */
    double min_subnormal; /* 2^(emin - p + 1) */
    double unit_roundoff; /* u = 2^-p */
    double epsilon;       /* 2^(1-p), spacing just above 1 */
} drift_format_info_t;

typedef enum {
    DRIFT_RNE = 0, /* nearest, ties to even */
    DRIFT_RZ,      /* toward zero */
    DRIFT_RNA,     /* nearest, ties away from zero (cvt.rna.tf32.f32) */
    DRIFT_RU,      /* toward +inf */
    DRIFT_RD,      /* toward -inf */
    DRIFT_SR,      /* stochastic: up with probability (x - lo) / (hi - lo) */
    DRIFT_NMODES
} drift_mode_t;

typedef struct {
    drift_mode_t mode;
    int flush_subnormals; /* a result that would be subnormal becomes a signed zero */
    int saturate;         /* overflow gives +-max_finite instead of inf (NaN for e4m3) */
} drift_round_opts_t;

#define DRIFT_ROUND_RNE ((drift_round_opts_t){DRIFT_RNE, 0, 0})

typedef enum {
    DRIFT_CLASS_ZERO,
    DRIFT_CLASS_SUBNORMAL,
    DRIFT_CLASS_NORMAL,
    DRIFT_CLASS_INF,
    DRIFT_CLASS_NAN
} drift_class_t;

const drift_format_info_t *drift_format_info(drift_format_t f);
const char *drift_format_name(drift_format_t f);
/* 0 or DRIFT_EINVAL. Accepts the canonical names (drift_format_name) and the aliases of
 * drift_format_alias, in any case ("BF16", "bfloat16", "half", "fp8_e4m3fn"); what is printed
 * is always the canonical name. */
DRIFT_MUST_CHECK int drift_format_parse(drift_format_t *out, const char *name);
/* The i-th alias drift_format_parse accepts and (f non-NULL) its format; NULL past the last. */
const char *drift_format_alias(int i, drift_format_t *f);
const char *drift_mode_name(drift_mode_t m);
DRIFT_MUST_CHECK int drift_mode_parse(drift_mode_t *out, const char *name); /* 0 or DRIFT_EINVAL */
const char *drift_class_name(drift_class_t c);

/* Round x to the format described by fi. sr_bits is a uniform 32-bit random word, used only
 * by DRIFT_SR: the result rounds away from zero iff sr_bits * 2^-32 < frac, where frac is
 * the exact fractional position of |x| between its two neighbours (so the probability is
 * frac rounded up to a multiple of 2^-32). */
double drift_round_generic(double x, const drift_format_info_t *fi, const drift_round_opts_t *o, uint32_t sr_bits);

/* Bit-manipulation fast paths; identical to drift_round_generic for every input and mode
 * (proved by tests/test_format.c). */
double drift_round_fp16_fast(double x, const drift_round_opts_t *o, uint32_t sr_bits);
double drift_round_bf16_fast(double x, const drift_round_opts_t *o, uint32_t sr_bits);
double drift_round_tf32_fast(double x, const drift_round_opts_t *o, uint32_t sr_bits);

/* The entry point: fast path where one exists, generic otherwise. o may be NULL (RNE). */
double drift_round(double x, drift_format_t f, const drift_round_opts_t *o, uint32_t sr_bits);

/* Round to nearest even with subnormals and overflow to infinity: the common case. */
double drift_rne(double x, drift_format_t f);

/* Encodings of values of f (x is rounded RNE first if it is not representable).
 * fp64: the IEEE word; fp32 and tf32: the fp32 word (tf32 has its 13 low bits zero). */
uint64_t drift_encode(double x, drift_format_t f);
double drift_decode(uint64_t bits, drift_format_t f);
drift_class_t drift_classify(double x, drift_format_t f);

/* Spacing of f at x: the distance between the two members of f around |x| (ulp in the
 * binade of x, or the subnormal spacing below 2^emin). */
double drift_ulp(double x, drift_format_t f);

/* Rounding whole arrays (cpfloat's shape: output first, one options struct, a validator).
 * out[i] is bit for bit drift_round(in[i], format, &{mode, flush_subnormals, saturate},
 * sr_bits ? sr_bits[i] : 0); out may be in. */
typedef struct {
    drift_format_t format;
    drift_mode_t mode;
    int flush_subnormals;    /* 0 or 1, as in drift_round_opts_t */
    int saturate;            /* 0 or 1, as in drift_round_opts_t */
    const uint32_t *sr_bits; /* DRIFT_SR: one uniform 32-bit word per element; else ignored */
} drift_round_array_opts_t;

/* DRIFT_OK, or DRIFT_EINVAL with *why (when why is not NULL) naming the field that is
 * wrong and what it accepts; *why is NULL when the options are fine. */
DRIFT_MUST_CHECK int drift_round_array_validate(const drift_round_array_opts_t *o, const char **why);
/* DRIFT_OK, or DRIFT_EINVAL (options rejected by the validator, NULL arrays with n > 0). */
DRIFT_MUST_CHECK int drift_round_array(double *out, const double *in, size_t n, const drift_round_array_opts_t *o);
/* The same into floats (every value of every format but fp64 is a float): DRIFT_EINVAL
 * for fp64. */
DRIFT_MUST_CHECK int drift_round_array_float(float *out, const double *in, size_t n, const drift_round_array_opts_t *o);

/* Exact operations rounded once to f with mode m (not DRIFT_SR). */
double drift_add(double a, double b, drift_format_t f, drift_mode_t m);
double drift_mul(double a, double b, drift_format_t f, drift_mode_t m);
double drift_fma(double a, double b, double c, drift_format_t f, drift_mode_t m);
/* Round the exact value hi + lo (any two doubles) once to f. */
double drift_round_sum2(double hi, double lo, drift_format_t f, drift_mode_t m);

#ifdef __cplusplus
}
#endif

#endif
