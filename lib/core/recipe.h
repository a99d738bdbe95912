/* recipe.h — how one number is computed, as one value (the design's Recipes).
 *
 * A recipe names the input format (operands are rounded to it, nearest-even), the reduction
 * order (any order.h spec, tc:ARCH included, or `exact`), the accumulator (format, rounding
 * mode of every accumulation step, fma or not) and the output format the result is stored in.
 * It is the lab's one description of a computation: an LM head configuration is a recipe
 * (lmhead.h takes drift_recipe_t), and a GEMM kernel is built from a recipe by the dispatcher
 * (dispatch.h), never by re-parsing text.
 *
 * Grammar (the printed form is canonical: parse(print(r)) == r):
 *
 *     recipe  := IN "/" ORDER "/" ACC "/" OUT
 *     IN, OUT := a format name (fp64 fp32 tf32 fp16 bf16 fp8e4m3 fp8e5m2)
 *     ORDER   := an order.h spec (seq, pairwise, splitk:8:tree, tc:h100, ...) | "exact"
 *     ACC     := FORMAT [":" MODE] [":nofma"]      MODE in rz | rna | ru | rd (rne: omitted)
 *              | "-"                               only with ORDER = exact
 *
 *   bf16/tc:h100/fp32/bf16     bf16 inputs, H100 tensor-core model, fp32 accumulator, bf16 logits
 *   fp16/seq/fp32:nofma/fp32   products rounded to fp32 before each addition
 *   fp32/pairwise/fp16:rz/fp16 every partial sum rounded toward zero in fp16
 *   bf16/exact/-/fp32          the exact dot product rounded once to fp32
 *
 * For tc:ARCH the model fixes the accumulation (fma-like block FMA, truncation, RZ to fp32 or
 * RNE to fp16): ACC is the tensor core's output format, fp32 or fp16, and takes no modifier;
 * mode and fma are ignored (and compare equal) there and under exact.
 *
 * Validation follows cpfloat's shape: one function, drift_recipe_validate, says exactly what
 * is wrong. Whether an architecture has a tensor-core path for an input format is a property
 * of the model in lib/ops: drift_recipe_check (dispatch.h) adds that one test. */
#ifndef DRIFT_RECIPE_H
#define DRIFT_RECIPE_H

#include <stddef.h>

#include "drift.h"
#include "format.h"
#include "order.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    drift_format_t in;   /* operands rounded (RNE) to this format */
    drift_order_t order; /* reduction order (ignored when exact) */
    drift_acc_t acc;     /* accumulator format, its rounding mode, fma or not */
    drift_format_t out;  /* result stored in this format (RNE); out == acc.acc: no extra rounding */
    int exact;           /* 1: the exact result rounded once to out (order and acc unused) */
} drift_recipe_t;

#define DRIFT_RECIPE_SPEC_MAX 128

/* in/order/acc/out with nearest-even accumulation and fma. */
drift_recipe_t drift_recipe(drift_format_t in, const drift_order_t *order, drift_format_t acc, drift_format_t out);
/* in/exact/-/out. */
drift_recipe_t drift_recipe_exact(drift_format_t in, drift_format_t out);

/* Parses spec. 0, or DRIFT_EINVAL with err (when non-NULL) receiving one line naming the
 * field that is wrong and what it accepts. A parsed recipe is also validated. */
DRIFT_MUST_CHECK int drift_recipe_parse(drift_recipe_t *r, const char *spec, char *err, size_t errsz);
/* Canonical spec into buf; its length, or DRIFT_EINVAL (invalid recipe, or it does not fit). */
int drift_recipe_print(char *buf, size_t size, const drift_recipe_t *r);
/* "ORDER/ACC/OUT" into buf ("tc:h100/fp32/bf16", "seq/fp32/fp32", "exact/-/fp32"): the recipe
 * without its input format, the accumulator by its format alone (mode and fma not shown), for
 * tables whose rows share one input format (the LM head's configurations). Its length, or
 * DRIFT_EINVAL (no buffer or recipe, a malformed order, or it does not fit). */
int drift_recipe_label(char *buf, size_t size, const drift_recipe_t *r);
/* 1 when a and b compute the same number (fields a recipe ignores are not compared). */
int drift_recipe_equal(const drift_recipe_t *a, const drift_recipe_t *b);
/* 1 when a and b differ at most in the output format: they share one accumulation. */
int drift_recipe_same_acc(const drift_recipe_t *a, const drift_recipe_t *b);

/* 0, DRIFT_EINVAL (a field out of range) or DRIFT_EUNSUPPORTED (stochastic rounding; tc:ARCH
 * with an accumulator other than fp32/fp16); err (when non-NULL) says which and why. */
DRIFT_MUST_CHECK int drift_recipe_validate(const drift_recipe_t *r, char *err, size_t errsz);

#ifdef __cplusplus
}
#endif

#endif
