/* argmax_kernels.h — the kernel sets of the argmax-flip experiment: per (K, input format) the LM-head
 * configurations it compares (every order with fp32 accumulation; logits stored in the format;
 * own-format accumulation; the exact dot; the orders the GEMM policies pick), each with its role,
 * and the table of the kernels the GEMM policies choose per (policy, shard, batch). */
#ifndef DRIFT_ARGMAX_KERNELS_H
#define DRIFT_ARGMAX_KERNELS_H

#include <stddef.h>

#include "drift.h"
#include "format.h"
#include "lmhead.h"
#include "order.h"
#include "policy.h"
#include "gemm.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DRIFT_AF_MAXK 8
#define DRIFT_AF_MAXF 4
#define DRIFT_AF_MAXC DRIFT_LMHEAD_MAXCFG
#define DRIFT_AF_PER_DECADE 4 /* planted target gaps per decade */

enum { DRIFT_ROLE_ORDER, DRIFT_ROLE_STORE, DRIFT_ROLE_OWN, DRIFT_ROLE_EXACT, DRIFT_ROLE_POLICY };
extern const char *const drift_role_name[];

typedef struct {
    drift_recipe_t c;
    char name[96];
    int role;
    double nu; /* mean rounded-partial-sum participation / K (the c of the prediction) */
} drift_afkern_t;


typedef struct {
    drift_format_t f;
    drift_afkern_t k[DRIFT_AF_MAXC];
    int n;
    int def;    /* first order, fp32 accumulation, fp32 logits */
    int engine; /* tc:h100 with logits in the format (bf16/fp16); tc fp32 (tf32); def (fp32) */
    int tc32;   /* tc:h100/fp32/fp32, or -1 */
    int exact;
    int seq32; /* seq/fp32/fp32, or -1 */
} drift_kset_t;


/* Adds the configuration (f, o, acc, out, exact) under `role` to ks for hidden size K, unless the same
 * computation is already there. Its index, or -1 (the set is full or the configuration invalid). */
int drift_kset_add(drift_kset_t *ks, drift_format_t f, const drift_order_t *o, drift_format_t acc, drift_format_t out,
    int exact, int role, size_t K);

/* ---- the GEMM policies ------------------------------------------------------------------- */

#define DRIFT_AF_NBATCH 5
extern const long drift_af_batch[DRIFT_AF_NBATCH];
#define DRIFT_AF_NPOL (DRIFT_NPOLICIES * 2 * DRIFT_AF_NBATCH)
typedef struct {
    drift_policy_t pol;
    int shard; /* 0: N = V; 1: N = V / shard */
    long batch;
    char kernel[DRIFT_GEMM_KERNEL_SPEC_MAX];
    drift_order_t order;
    double cost; /* drift_policy_cost, modelled */
} drift_polrow_t;


/* Row q of the policy table (policy, shard, batch: see the loop order below) for hidden size K:
 * the kernel the policy picks, its order and modelled cost. 0, or the policy's error. */
DRIFT_MUST_CHECK int drift_policy_row(
    drift_polrow_t *r, int q, size_t V, size_t shard, size_t K, const drift_device_t *dev);

/* "default" (the first order, fp32 accumulation, fp32 logits), "engine" (tensor cores, logits in
 * the format), or "-": a column the plots select on. */
const char *drift_kset_tag(const drift_kset_t *ks, int c);

/* The kernel set of input format f at hidden size K: every order with fp32 accumulation and fp32 logits
 * (the first is ks->def), for bf16/fp16 the same with logits stored in the format and own-format
 * accumulation (tc orders: fp16 only), the exact dot (ks->exact), the orders of the npol policy rows
 * polk with fp32 logits and logits in the format (their indices into polcfg[q][0], [1]), and the named
 * kernels of the report: seq fp32 (ks->seq32), tc:h100 fp32 (ks->tc32, or -1) and the engine.
 * 0; DRIFT_EUNSUPPORTED when no order applies to f; DRIFT_ERANGE when the set would be too large. */
DRIFT_MUST_CHECK int drift_kset_build(drift_kset_t *ks, int (*polcfg)[2], drift_format_t f, const drift_order_t *orders,
    int norders, const drift_polrow_t *polk, int npol, size_t K);

/* The report's named kernels of ks (default, engine, tc:h100 fp32, exact) into out, in that order,
 * each once and only those present. How many. */
int drift_kset_named(int out[4], const drift_kset_t *ks);

#ifdef __cplusplus
}
#endif

#endif
