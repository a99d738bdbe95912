/* dispatch_order.h — the dispatcher's answers about an order (dispatch.c implements them), for
 * code that must know what an order can compute without branching on the tensor-core case
 * itself (softmax, attention, the transformer's recipes). Apart from dispatch.h: its callers
 * need orders, not recipes. */
#ifndef DRIFT_DISPATCH_ORDER_H
#define DRIFT_DISPATCH_ORDER_H

#include <stddef.h>

#include "drift.h"
#include "format.h"
#include "order.h"
#include "tc_model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The orders a sum takes: every order but tc:ARCH, a dot-product model. */
#define DRIFT_SUM_ORDERS "seq, rev, pairwise, blocked:B, splitk:S, warp:W, kahan, neumaier or random:SEED"
/* 0 when o can compute a sum (of exponentials, of squares, ...); DRIFT_EUNSUPPORTED for a
 * tensor-core order, err then saying "order 'tc:h100' is a dot-product model; <what> takes
 * <DRIFT_SUM_ORDERS>" (what: e.g. "a sum of exponentials"; err may be NULL). */
DRIFT_MUST_CHECK int drift_order_sum_check(const drift_order_t *o, const char *what, char *err, size_t errsz);
/* 0 when a dot product of `in` inputs accumulated in `acc` has a path under o (every order
 * but tc:ARCH takes any); for tc:ARCH DRIFT_EUNSUPPORTED when the architecture has no
 * tensor-core path for in ("order tc:v100 has no tensor-core path for input bf16") or acc is
 * neither fp32 nor fp16 ("order tc:h100 accumulates in fp32 or fp16, not fp64"). */
DRIFT_MUST_CHECK int drift_order_dot_check(
    const drift_order_t *o, drift_format_t in, drift_format_t acc, char *err, size_t errsz);
/* 1 with *arch set when o is a tensor-core order, else 0 (*arch untouched): for callers that
 * keep the architecture in their own description (the transformer's matmul recipes). */
int drift_order_tc_arch(drift_tc_arch_t *arch, const drift_order_t *o);
/* 1 when o is a tensor-core order whose architecture takes `in` (p receives the model's
 * parameters), 0 when o is not a tensor-core order, DRIFT_EUNSUPPORTED when it is one that
 * has no path for `in`. */
DRIFT_MUST_CHECK int drift_order_tc_params(drift_tc_params_t *p, const drift_order_t *o, drift_format_t in);
/* y = c + sum a[i] b[i] (c may be NULL) by o's code on the CPU: the tensor-core model for
 * tc:ARCH (in: the inputs' format, acc->acc its accumulator), drift_dot otherwise. No backend
 * and no recipe check: the inner loop of a caller that checked its recipe once
 * (drift_order_dot_check). */
DRIFT_MUST_CHECK int drift_order_dot(double *y, const double *a, const double *b, size_t n, const double *c,
    const drift_order_t *o, drift_format_t in, const drift_acc_t *acc);

#ifdef __cplusplus
}
#endif

#endif
