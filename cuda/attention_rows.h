/* attention_rows.h — the arithmetic of the attention twin's rows (drift_cuda_attention.h),
 * written once in C that both nvcc (cuda/attention.cu, the kernel) and a C compiler (the host
 * check of the kernel's logic against drift_attention, tests/test_cuda_args.c) compile, and the
 * host staging both use (what the kernel loads, exactly as attention.c's float path loads it).
 *
 * The includer defines, before including:
 *   ATTN_FN                      function qualifiers (static __device__, or static)
 *   attn_mul/add/sub/div(a, b), attn_fma(a, b, c)   one fp32 operation rounded to nearest
 *   attn_exp_cr(t, hard), attn_log_cr(t, hard)      the correctly rounded fp32 exp / log of a
 *                                float (*hard = 1 when it could not be decided)
 *   attn_round(x, f)             RNE of a float to fp32, bf16 or fp16
 * Every function below mirrors one of lib/ops/attention.c (named in its comment). */
#ifndef DRIFT_CUDA_ATTENTION_ROWS_H
#define DRIFT_CUDA_ATTENTION_ROWS_H

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "format.h"

typedef struct {
    float *res;         /* [rows][d]: the float result before the host rounds it to pv.out */
    int *hard;          /* [rows] */
    float *scratch;     /* [rows][per_row] */
    const float *q;     /* [rows][d], rounded to qk.in */
    const float *K, *V; /* [G][Lpad][d], rounded to qk.in / pv.in, zero padded */
    const unsigned char *mask;
    size_t rows, L, Lpad, d, heads, grp, q_pos, per_row, bc;
    int causal, kind, l_fma;
    long splits, size;
    float scale;      /* round_fp32(scale) */
    int scale_is_one; /* the double scale is exactly 1 (softmax's load skips the product) */
    drift_format_t qk_out, pv_in;
} attn_args_t;

#ifdef ATTN_FN
ATTN_FN int attn_live(const attn_args_t *a, size_t j, size_t lim) { return j < lim && (!a->mask || a->mask[j]); }

/* scores_f: q . k with the first product rounded, then an fmaf chain over head_dim. */
ATTN_FN float attn_score(const float *q, const float *k, size_t d)
{
    float s = attn_mul(q[0], k[0]);
    for (size_t c = 1; c < d; c++) s = attn_fma(q[c], k[c], s);
    return s;
}

/* flash_rows_fast: tiles [t0, t1) of one row; m, l and O continue. */
ATTN_FN void attn_flash_tiles(const attn_args_t *a, const float *q, const float *K, const float *V, size_t t0,
    size_t t1, size_t lim, float *m_io, float *l_io, float *O, float *S, float *pr, int *hard)
{
    size_t d = a->d, bc = a->bc;
    float m = *m_io, l = *l_io;
    for (size_t t = t0; t < t1; t++) {
        size_t j0 = t * bc;
        float tmax = -INFINITY;
        for (size_t jj = 0; jj < bc; jj++) {
            size_t j = j0 + jj;
            float s = (j < a->L && attn_live(a, j, lim)) ? attn_mul(attn_score(q, K + j * d, d), a->scale) : -INFINITY;
            S[jj] = s;
            tmax = s > tmax ? s : tmax;
        }
        if (tmax == -INFINITY) continue; /* no live key: the tile is skipped */
        float mn = tmax > m ? tmax : m;
        float alpha = m == -INFINITY ? 0.0f : attn_exp_cr(attn_sub(m, mn), hard);
        for (size_t jj = 0; jj < bc; jj++) {
            float e = S[jj] == -INFINITY ? 0.0f : attn_exp_cr(attn_sub(S[jj], mn), hard);
            S[jj] = e;
            pr[jj] = attn_round(e, a->pv_in);
        }
        float r = S[0];
        for (size_t jj = 1; jj < bc; jj++) r = attn_add(r, S[jj]);
        l = a->l_fma ? attn_fma(l, alpha, r) : attn_add(attn_mul(l, alpha), r);
        for (size_t c = 0; c < d; c++) O[c] = attn_mul(O[c], alpha);
        for (size_t jj = 0; jj < bc; jj++) {
            const float pj = pr[jj], *vr = V + (j0 + jj) * d;
            for (size_t c = 0; c < d; c++) O[c] = attn_fma(pj, vr[c], O[c]);
        }
        m = mn;
    }
    *m_io = m;
    *l_io = l;
}

/* row_standard on the float path: scores rounded to qk.out, softmax.c's safe softmax (scaled
 * on load, max with a sticky NaN, exp, seq sum), P = round_{pv.in}(e / l), O an fmaf chain
 * from +0. */
ATTN_FN void attn_row_standard(
    const attn_args_t *a, float *res, const float *q, const float *K, const float *V, size_t lim, float *S, int *hard)
{
    size_t d = a->d, L = a->L;
    float m = -INFINITY;
    for (size_t j = 0; j < L; j++) {
        float s = attn_live(a, j, lim) ? attn_round(attn_score(q, K + j * d, d), a->qk_out) : -INFINITY;
        if (!a->scale_is_one) s = attn_mul(s, a->scale);
        S[j] = s;
        if (s > m || isnan(s)) m = isnan(m) ? m : s;
    }
    for (size_t c = 0; c < d; c++) res[c] = 0.0f;
    if (m == -INFINITY) return; /* fully masked */
    float l = 0.0f;
    for (size_t j = 0; j < L; j++) {
        float e = S[j] == -INFINITY ? 0.0f : attn_exp_cr(attn_sub(S[j], m), hard);
        S[j] = e;
        l = j == 0 ? e : attn_add(l, e);
    }
    if (l == 0.0f) return;
    for (size_t j = 0; j < L; j++) S[j] = attn_round(attn_div(S[j], l), a->pv_in);
    for (size_t j = 0; j < L; j++) {
        const float pj = S[j], *vr = V + j * d;
        for (size_t c = 0; c < d; c++) res[c] = attn_fma(pj, vr[c], res[c]);
    }
}

/* row_flash + finish: every tile, then O * round(1 / l). */
ATTN_FN void attn_row_flash(
    const attn_args_t *a, float *res, const float *q, const float *K, const float *V, size_t lim, float *S, int *hard)
{
    size_t d = a->d, tiles = (a->L + a->bc - 1) / a->bc;
    float m = -INFINITY, l = 0.0f;
    for (size_t c = 0; c < d; c++) res[c] = 0.0f;
    attn_flash_tiles(a, q, K, V, 0, tiles, lim, &m, &l, res, S, S + a->bc, hard);
    if (l == 0.0f) {
        for (size_t c = 0; c < d; c++) res[c] = 0.0f;
        return;
    }
    float inv = attn_div(1.0f, l);
    for (size_t c = 0; c < d; c++) res[c] = attn_mul(res[c], inv);
}

/* row_splitkv: the flash loop per split (O_s normalised, lse_s = m_s + log l_s), then the
 * combine: M = max lse, Z = seq sum of exp(lse_s - M), lse = log Z + M, O = fmaf chain of
 * exp(lse_s - lse) O_s from +0. */
ATTN_FN void attn_row_splitkv(
    const attn_args_t *a, float *res, const float *q, const float *K, const float *V, size_t lim, float *S, int *hard)
{
    size_t d = a->d, tiles = (a->L + a->bc - 1) / a->bc, per;
    if (a->kind == DRIFT_ATTN_SPLITKV_N)
        per = (tiles + (size_t)a->splits - 1) / (size_t)a->splits;
    else
        per = (size_t)(a->size / (long)a->bc);
    if (per == 0) per = 1;
    size_t nsplit = (tiles + per - 1) / per;
    float *pr = S + a->bc, *O = pr + a->bc, *lse = O + d, *Os = lse + nsplit;
    for (size_t s = 0; s < nsplit; s++) {
        float m = -INFINITY, l = 0.0f;
        for (size_t c = 0; c < d; c++) O[c] = 0.0f;
        size_t t0 = s * per, t1 = t0 + per < tiles ? t0 + per : tiles;
        attn_flash_tiles(a, q, K, V, t0, t1, lim, &m, &l, O, S, pr, hard);
        if (l == 0.0f) {
            lse[s] = -INFINITY;
            continue;
        }
        float inv = attn_div(1.0f, l);
        for (size_t c = 0; c < d; c++) Os[s * d + c] = attn_mul(O[c], inv);
        lse[s] = attn_add(m, attn_log_cr(l, hard));
    }
    for (size_t c = 0; c < d; c++) res[c] = 0.0f;
    float M = -INFINITY;
    for (size_t s = 0; s < nsplit; s++) M = lse[s] > M ? lse[s] : M;
    if (M == -INFINITY) return;
    float Z = 0.0f;
    int first = 1;
    for (size_t s = 0; s < nsplit; s++) {
        if (lse[s] == -INFINITY) continue;
        float e = attn_exp_cr(attn_sub(lse[s], M), hard);
        Z = first ? e : attn_add(Z, e);
        first = 0;
    }
    float LSE = attn_add(attn_log_cr(Z, hard), M);
    for (size_t s = 0; s < nsplit; s++) {
        if (lse[s] == -INFINITY) continue;
        float w = attn_exp_cr(attn_sub(lse[s], LSE), hard);
        for (size_t c = 0; c < d; c++) res[c] = attn_fma(w, Os[s * d + c], res[c]);
    }
}

/* Row r (query r / heads, head r % heads): its result and hard flag. */
ATTN_FN void attn_row(const attn_args_t *a, size_t r)
{
    size_t i = r / a->heads, h = r % a->heads, g = h / a->grp;
    size_t lim = a->causal ? a->q_pos + i + 1 : a->L;
    const float *q = a->q + r * a->d, *K = a->K + g * a->Lpad * a->d, *V = a->V + g * a->Lpad * a->d;
    float *res = a->res + r * a->d, *S = a->scratch + r * a->per_row;
    int hard = 0;
    if (a->kind == DRIFT_ATTN_STANDARD)
        attn_row_standard(a, res, q, K, V, lim, S, &hard);
    else if (a->kind == DRIFT_ATTN_FLASH)
        attn_row_flash(a, res, q, K, V, lim, S, &hard);
    else
        attn_row_splitkv(a, res, q, K, V, lim, S, &hard);
    a->hard[r] = hard;
}
#endif /* ATTN_FN */

/* ---- host staging (both sides) ------------------------------------------------------------ */

/* The shape fields of a for drift_attention's arguments (already checked), and the host
 * buffers the kernel loads: hq [rows][d] and hk, hv [G][Lpad][d] (zero padded), each value
 * rounded as attention.c's float path rounds it. 0, or DRIFT_ENOMEM (nothing allocated). */
static int attn_stage(attn_args_t *a, float **hq, float **hk, float **hv, const double *q, size_t nq, size_t q_pos,
    const drift_kv_cache_t *kv, const drift_attn_opts_t *o)
{
    memset(a, 0, sizeof *a);
    size_t d = (size_t)o->head_dim, H = (size_t)o->heads, G = (size_t)o->kv_heads, L = kv->len;
    a->rows = nq * H;
    a->L = L;
    a->d = d;
    a->heads = H;
    a->grp = H / G;
    a->q_pos = q_pos;
    a->causal = o->causal;
    a->kind = (int)o->kernel.kind;
    a->l_fma = o->softmax_acc.fma != 0;
    a->splits = o->kernel.splits;
    a->size = o->kernel.size;
    a->bc = o->kernel.kind == DRIFT_ATTN_STANDARD ? (L ? L : 1) : (size_t)o->kernel.bc;
    a->Lpad = (L + a->bc - 1) / a->bc * a->bc;
    if (a->Lpad == 0) a->Lpad = a->bc;
    double scale_d = o->scale > 0 ? o->scale : 1.0 / sqrt((double)d);
    a->scale = (float)drift_rne(scale_d, DRIFT_FP32);
    a->scale_is_one = scale_d == 1.0;
    a->qk_out = o->qk.out;
    a->pv_in = o->pv.in;
    size_t tiles = a->Lpad / a->bc;
    a->per_row = a->kind == DRIFT_ATTN_STANDARD ? (L ? L : 1) : 2 * a->bc + d + tiles * (d + 1);
    size_t nkv = G * a->Lpad * d, nqv = a->rows * d;
    *hq = (float *)malloc((nqv ? nqv : 1) * sizeof(float));
    *hk = (float *)calloc(nkv, sizeof(float));
    *hv = (float *)calloc(nkv, sizeof(float));
    if (!*hq || !*hk || !*hv) {
        free(*hq), free(*hk), free(*hv);
        *hq = *hk = *hv = NULL;
        return DRIFT_ENOMEM;
    }
    /* operands rounded to their recipe's input format (exact as floats: formats of <= 24 bits) */
    for (size_t i = 0; i < nqv; i++) (*hq)[i] = (float)drift_rne(q[i], o->qk.in);
    for (size_t g = 0; g < G; g++)
        for (size_t j = 0; j < L; j++)
            for (size_t c = 0; c < d; c++) {
                size_t src = (j * G + g) * d + c, dst = (g * a->Lpad + j) * d + c;
                (*hk)[dst] = (float)drift_rne(kv->k[src], o->qk.in);
                (*hv)[dst] = (float)drift_rne(kv->v[src], o->pv.in);
            }
    return 0;
}

#endif
