/* attention.h — multi-head attention as kernels compute it: standard (materialised scores),
 * FlashAttention-2 tiling, and split-KV (flash-decoding), for prefill, decode and chunked
 * prefill, over a KV cache stored in any lab format or int8; plus an MPFR reference.
 *
 * THE DECODE CALL (what a transformer's decoder needs):
 *
 *     drift_attn_opts_t o = drift_attn_opts(heads, kv_heads, head_dim, DRIFT_BF16);
 *     drift_kv_cache_t kv;  drift_kv_format_t kf = {DRIFT_KV_FLOAT, DRIFT_BF16};
 *     drift_kv_init(&kv, kv_heads, head_dim, max_tokens, &kf, err, sizeof err);
 *     for each token:
 *         drift_kv_append(&kv, k_tok, v_tok, 1, err, sizeof err);   // [kv_heads][head_dim]
 *         drift_attention_decode(out, q_tok, &kv, &o, err, sizeof err); // [heads][head_dim]
 *     drift_kv_free(&kv);
 *
 * Every function returns 0 or a negative DRIFT_E* code and then writes one line into err
 * (when err != NULL and errsz > 0) naming the option and what it accepts, e.g.
 * "attention: heads (6) must be a multiple of kv_heads (4)". Bad options and shapes are
 * caught before anything is written to out. Rows are spread over OpenMP threads; each row
 * is computed by one thread, so the bits never depend on the thread count.
 *
 * Layout: rows of tokens, then heads, then head_dim: q and out are [nq][heads][head_dim];
 * the cache's k and v are [token][kv_heads][head_dim]. Query head h reads KV head
 * h / (heads / kv_heads) (grouped-query attention; kv_heads == heads is MHA, 1 is MQA).
 * Query i of a call sits at absolute position q_pos + i; with causal it attends keys
 * j <= q_pos + i, else every key of the cache; key_mask (length kv->len, nonzero = attend,
 * NULL = all) masks padding keys on top.
 *
 * Numerics. Operands are rounded (RNE) to their recipe's input format as they are loaded:
 * q and K to qk.in, V and P to pv.in. A dot product (q.k_j, or a column of P.V) follows
 * its recipe's order in its accumulator: seq/pairwise/... through drift_dot (order.h),
 * tc:ARCH through the tensor-core model drift_tc_dot (tc_model.h; pv with tc needs the
 * tile width Bc to be a multiple of the block of products). A P.V dot that continues a
 * running output O starts from O (seq: the chain continues; tc: O is the block FMA's c;
 * multi-partial orders: round(O + r)); the first starts from +0. Softmax arithmetic (max,
 * exp, row sums, rescaling, 1/l) is in softmax_acc, with the exponential of softmax.h
 * (`exp`: expf correctly rounded, the default; or exp2 with scale*log2e pre-scaled as
 * FlashAttention does) and row sums in sum_order.
 *   scale   = round_A(o->scale), o->scale = 0 meaning 1/sqrt(head_dim) (computed in double).
 *   expf:   s_j = round_A(S_j * scale), m = max s_j, p_j = exp(round_A(s_j - m)).
 *   exp2:   c = round_A(scale * log2 e), m = max S_j, p_j = exp2(fma_A(S_j, c, -round_A(m c))).
 *
 * Kernels (spec strings, drift_attn_kernel_parse):
 *   standard         S_j = round_{qk.out}(q.k_j) for every key j of the cache (masked: -inf)
 *                    is materialised; P = softmax(S) with the `softmax` variant (softmax.h:
 *                    in = qk.out, A = softmax_acc, sum_order, exp, scale) rounded to pv.in;
 *                    O_c = round_{pv.out}(P . V_c) (the dot over all keys, from +0).
 *                    With normalise_after = 1 (the unfused form of a fused kernel): P~ =
 *                    round_{pv.in}(e_j) unnormalised, l = their unrounded sum, and
 *                    O_c = round_out(round_A(round_A(P~ . V_c) * round_A(1 / l))).
 *   flash:Br,Bc      FlashAttention-2 forward. Keys are cut into tiles [t Bc, (t+1) Bc) from
 *                    key 0; per query row, m = -inf, l = 0, O = 0; per tile with a live key:
 *                    S_j = q.k_j in qk.acc (never rounded to qk.out: scores stay in
 *                    registers; expf mode scales them as above), m' = max(m, tile max),
 *                    alpha = exp(round_A(m - m')) (exp2: exp2(round_A(round_A(m - m') c))),
 *                    0 on the first live tile; p_j as above relative to m'; l = fma_A(l,
 *                    alpha, r) with r = sum of the tile's p_j (unrounded, sum_order);
 *                    O_c = round_acc(O_c * alpha), then O_c continues with the tile's
 *                    terms round_{pv.in}(p_j) * v_jc (P is rounded to the input format before
 *                    P.V, as the real kernels do). Finally O_c = round_{pv.out}(round_A(O_c *
 *                    round_A(1 / l))). A tile always has Bc slots: keys past the cache or
 *                    masked inside a live tile contribute p = 0 and v = 0; a tile without
 *                    live keys is skipped. Br only groups rows into thread blocks: every row
 *                    has its own m, l, O, so Br never changes a bit (kept as data for the
 *                    CUDA twin's launch shape).
 *   splitkv:N[,Bc]   flash-decoding as FlashAttention-2's split-KV: the cache's L keys make
 *                    ceil(L/Bc) tiles (Bc default 64), n = ceil(tiles / N) tiles per split;
 *                    split s runs the flash loop over its tiles and yields O_s (normalised
 *                    as above, in softmax_acc = the partial's fp32 buffer) and lse_s =
 *                    round_A(m_s' + log l_s) (m_s' = m_s, or round_A(m_s * scale) in exp2).
 *                    Merge: M = max lse_s; Z = sum_s exp(round_A(lse_s - M)) (seq);
 *                    lse = round_A(log Z + M); w_s = exp(round_A(lse_s - lse));
 *                    O_c = round_{pv.out}(sum_s w_s O_sc) (fma chain in softmax_acc from +0).
 *                    Splits without live keys take no part. N splits of a length-dependent
 *                    size: decode (L = i + 1) and prefill (L = n) cut differently.
 *   splitkv:size=S[,Bc]  the same with a fixed split size S keys (a multiple of Bc; Bc
 *                    defaults to min(S, 64)): split boundaries at multiples of S whatever L,
 *                    so decode, prefill and chunked prefill give the same bits.
 *
 * Fully masked query rows (no live key): out = +0 (FlashAttention-2's inv_sum = 1 when
 * l = 0 with O = 0), never NaN.
 *
 * KV cache storage (drift_kv_format_parse): any lab float format ("fp64" ... "fp8e5m2"):
 * stored = RNE_fmt(value). "int8:token": per (token, kv head) scale s = round_fp32(max|x| /
 * 127) (1 when the vector is zero), code q = clamp(rint(x / s), -127, 127); "int8:head":
 * one scale per kv head (and tensor, K or V), fixed by the first append (calibration on the
 * prompt), later values clamped. The kernel reads round_fp32(q * s). */
#ifndef DRIFT_ATTENTION_H
#define DRIFT_ATTENTION_H

#include <stddef.h>
#include <stdint.h>

#include "drift.h"
#include "format.h"
#include "order.h"
#include "recipe.h"
#include "softmax.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    DRIFT_ATTN_STANDARD = 0,
    DRIFT_ATTN_FLASH,
    DRIFT_ATTN_SPLITKV_N,
    DRIFT_ATTN_SPLITKV_SIZE
} drift_attn_kind_t;

typedef struct {
    drift_attn_kind_t kind;
    long br, bc; /* flash tile (Br x Bc); splitkv: bc is the tile inside a split */
    long splits; /* splitkv:N */
    long size;   /* splitkv:size=S */
} drift_attn_kernel_t;

#define DRIFT_ATTN_TILE_MAX 65536L
#define DRIFT_ATTN_SPLIT_MAX 65536L
#define DRIFT_ATTN_SIZE_MAX (1L << 30)
#define DRIFT_ATTN_DIM_MAX 65536L
#define DRIFT_ATTN_SPEC_MAX 64

/* standard | flash:Br,Bc | splitkv:N[,Bc] | splitkv:size=S[,Bc]; integers >= 1 without
 * sign or leading zeros (tiles <= 65536, N <= 65536, S <= 2^30); S a multiple of Bc.
 * 0, or DRIFT_EINVAL with the reason in err. */
DRIFT_MUST_CHECK int drift_attn_kernel_parse(drift_attn_kernel_t *k, const char *spec, char *err, size_t errsz);
int drift_attn_kernel_print(char *buf, size_t size, const drift_attn_kernel_t *k); /* length or EINVAL */

typedef struct {
    int heads, kv_heads, head_dim;
    int causal;   /* 1: query at position p sees keys 0..p */
    double scale; /* 0: 1/sqrt(head_dim) */
    drift_attn_kernel_t kernel;
    drift_recipe_t qk, pv;           /* QK^T and P.V (recipe.h); qk.out: the format standard stores S in;
                                     * pv.out: the output's. Orders any dot order or tc:ARCH, never exact */
    drift_softmax_variant_t softmax; /* standard only (default safe) */
    drift_acc_t softmax_acc;         /* A: max, exp, sums, rescaling (default fp32, RNE, fma) */
    drift_order_t sum_order;         /* row sums of P (default seq) */
    drift_exp_kind_t exp;            /* default DRIFT_EXP_EXPF */
    int normalise_after;             /* standard only, see above */
} drift_attn_opts_t;

/* Defaults: standard, causal, scale 1/sqrt(d), qk = pv = {in, seq, fp32 RNE fma, out = in},
 * safe softmax in fp32 with seq sums and expf. */
drift_attn_opts_t drift_attn_opts(int heads, int kv_heads, int head_dim, drift_format_t in);

/* Checks the options alone: 0 or the code with the reason in err. */
DRIFT_MUST_CHECK int drift_attn_validate(const drift_attn_opts_t *o, char *err, size_t errsz);

/* ---- KV cache ---------------------------------------------------------------------- */

typedef enum { DRIFT_KV_FLOAT = 0, DRIFT_KV_INT8_TOKEN, DRIFT_KV_INT8_HEAD } drift_kv_storage_t;

typedef struct {
    drift_kv_storage_t storage;
    drift_format_t fmt; /* DRIFT_KV_FLOAT: the storage format */
} drift_kv_format_t;

/* fp64 | fp32 | tf32 | fp16 | bf16 | fp8e4m3 | fp8e5m2 | int8:token | int8:head. */
DRIFT_MUST_CHECK int drift_kv_format_parse(drift_kv_format_t *f, const char *spec, char *err, size_t errsz);
int drift_kv_format_print(char *buf, size_t size, const drift_kv_format_t *f);

typedef struct {
    drift_kv_format_t fmt;
    int kv_heads, head_dim;
    size_t capacity, len;
    double *k, *v;           /* [capacity][kv_heads][head_dim]: what the kernel loads */
    int8_t *kq, *vq;         /* int8 codes (NULL for float storage) */
    double *kscale, *vscale; /* int8:token [capacity][kv_heads]; int8:head [kv_heads] */
    int scales_set;          /* int8:head: scales fixed by the first append */
} drift_kv_cache_t;

DRIFT_MUST_CHECK int drift_kv_init(drift_kv_cache_t *c, int kv_heads, int head_dim, size_t capacity,
    const drift_kv_format_t *fmt, char *err, size_t errsz);
void drift_kv_free(drift_kv_cache_t *c);
/* Appends ntok tokens: k and v are [ntok][kv_heads][head_dim] (finite values). */
DRIFT_MUST_CHECK int drift_kv_append(
    drift_kv_cache_t *c, const double *k, const double *v, size_t ntok, char *err, size_t errsz);

/* ---- attention ----------------------------------------------------------------------- */

/* The general call: nq queries at positions q_pos .. q_pos+nq-1 against the cache (causal
 * needs q_pos + nq <= kv->len). */
DRIFT_MUST_CHECK int drift_attention(double *out, const double *q, size_t nq, size_t q_pos, const drift_kv_cache_t *kv,
    const unsigned char *key_mask, const drift_attn_opts_t *o, char *err, size_t errsz);

/* Decode: one query (the last token, position kv->len - 1) against the whole cache. */
DRIFT_MUST_CHECK int drift_attention_decode(
    double *out, const double *q, const drift_kv_cache_t *kv, const drift_attn_opts_t *o, char *err, size_t errsz);

/* Prefill of n tokens (q, k, v as [n][heads or kv_heads][head_dim]) through a cache in
 * format kvf. chunk = 0: all queries in one call; chunk = C: chunked prefill, the cache
 * grows by C tokens and those C queries attend to it, as serving engines do. */
DRIFT_MUST_CHECK int drift_attention_prefill(double *out, const double *q, const double *k, const double *v, size_t n,
    const drift_kv_format_t *kvf, size_t chunk, const drift_attn_opts_t *o, char *err, size_t errsz);

/* The exact attention of the given values, each output correctly rounded to f with high
 * probability: MPFR at w = 128, 256, ... bits until two successive precisions round alike
 * (Ziv's test without a proven bound: a heuristic, stated as such). The scores use the
 * exact scale (1/sqrt(head_dim) in MPFR, or o->scale exactly); only the shape fields of o
 * (heads, kv_heads, head_dim, causal, scale) are read. q [nq][heads][d], k and v
 * [nk][kv_heads][d]; fully masked rows give +0. */
DRIFT_MUST_CHECK int drift_attention_reference(double *out, const double *q, const double *k, const double *v,
    size_t nq, size_t nk, size_t q_pos, const unsigned char *key_mask, const drift_attn_opts_t *o, drift_format_t f,
    char *err, size_t errsz);

#ifdef __cplusplus
}
#endif

#endif
