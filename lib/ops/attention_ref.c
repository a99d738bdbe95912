/* attention_ref.c — the exact witness of attention (drift_attention_reference): every score,
 * exponential, sum and product in MPFR at a working precision far above the formats', so
 * that the result is the exact softmax(q K^T / sqrt(d)) V rounded once. */
#include "attention.h"

#include <math.h>
#include <stdlib.h>

#include <mpfr.h>

#include "drift.h"
#include "exact.h"
#include "why.h"

static int format_ok(drift_format_t f) { return (int)f >= 0 && f < DRIFT_NFORMATS; }

/* ---- reference ------------------------------------------------------------------------------ */

/* One row at w bits: out_c = sum_j e_j v_jc / sum_j e_j, e_j = exp(scale q.k_j - m). */
static void ref_row(mpfr_t *res, const double *q, const double *k, const double *v, size_t nk, size_t lim, size_t g,
    const unsigned char *mask, const drift_attn_opts_t *o, mpfr_prec_t w)
{
    size_t d = (size_t)o->head_dim, G = (size_t)o->kv_heads;
    mpfr_t sc, t, s, m, sum, *S = malloc(nk * sizeof *S);
    mpfr_inits2(w, sc, t, s, m, sum, (mpfr_ptr)0);
    if (o->scale > 0)
        mpfr_set_d(sc, o->scale, MPFR_RNDN);
    else {
        mpfr_set_ui(sc, (unsigned long)d, MPFR_RNDN);
        mpfr_rec_sqrt(sc, sc, MPFR_RNDN);
    }
    mpfr_set_inf(m, -1);
    for (size_t j = 0; j < nk; j++) {
        mpfr_init2(S[j], w);
        if (!(j < lim && (!mask || mask[j]))) {
            mpfr_set_inf(S[j], -1);
            continue;
        }
        mpfr_set_zero(s, 1);
        for (size_t c = 0; c < d; c++) {
            mpfr_set_d(t, q[c], MPFR_RNDN);
            mpfr_mul_d(t, t, k[(j * G + g) * d + c], MPFR_RNDN);
            mpfr_add(s, s, t, MPFR_RNDN);
        }
        mpfr_mul(S[j], s, sc, MPFR_RNDN);
        if (mpfr_greater_p(S[j], m)) mpfr_set(m, S[j], MPFR_RNDN);
    }
    for (size_t c = 0; c < d; c++) mpfr_set_zero(res[c], 1);
    if (!mpfr_inf_p(m)) {
        mpfr_set_zero(sum, 1);
        for (size_t j = 0; j < nk; j++) {
            if (mpfr_inf_p(S[j])) continue;
            mpfr_sub(t, S[j], m, MPFR_RNDN);
            mpfr_exp(t, t, MPFR_RNDN);
            mpfr_add(sum, sum, t, MPFR_RNDN);
            for (size_t c = 0; c < d; c++) {
                mpfr_mul_d(s, t, v[(j * G + g) * d + c], MPFR_RNDN);
                mpfr_add(res[c], res[c], s, MPFR_RNDN);
            }
        }
        for (size_t c = 0; c < d; c++) mpfr_div(res[c], res[c], sum, MPFR_RNDN);
    }
    for (size_t j = 0; j < nk; j++) mpfr_clear(S[j]);
    free(S);
    mpfr_clears(sc, t, s, m, sum, (mpfr_ptr)0);
}

int drift_attention_reference(double *out, const double *q, const double *k, const double *v, size_t nq, size_t nk,
    size_t q_pos, const unsigned char *key_mask, const drift_attn_opts_t *o, drift_format_t f, char *err, size_t errsz)
{
    if (!o || o->heads < 1 || o->kv_heads < 1 || o->head_dim < 1 || o->heads % o->kv_heads)
        return drift_why(err, errsz, DRIFT_EINVAL,
            "attention reference: heads must be a positive multiple of kv_heads >= 1, head_dim >= 1");
    if (!format_ok(f)) return drift_why(err, errsz, DRIFT_EINVAL, "attention reference: unknown format");
    if (nq && (!out || !q || (nk && (!k || !v))))
        return drift_why(err, errsz, DRIFT_EINVAL, "attention reference: NULL buffer");
    size_t d = (size_t)o->head_dim, H = (size_t)o->heads, grp = H / (size_t)o->kv_heads;
    mpfr_t *a = malloc(d * sizeof *a), *b = malloc(d * sizeof *b);
    if (!a || !b) {
        free(a);
        free(b);
        return drift_why(err, errsz, DRIFT_ENOMEM, "attention reference: out of memory");
    }
    int bad = 0;
    for (size_t i = 0; i < nq; i++) {
        size_t lim = o->causal ? q_pos + i + 1 : nk;
        for (size_t h = 0; h < H; h++) {
            const double *qi = q + (i * H + h) * d;
            double *oi = out + (i * H + h) * d;
            mpfr_prec_t w = 128;
            for (size_t c = 0; c < d; c++) mpfr_init2(a[c], w);
            ref_row(a, qi, k, v, nk, lim, h / grp, key_mask, o, w);
            int done = 0;
            while (!done && w < 4096) {
                w *= 2;
                for (size_t c = 0; c < d; c++) mpfr_init2(b[c], w);
                ref_row(b, qi, k, v, nk, lim, h / grp, key_mask, o, w);
                done = 1;
                for (size_t c = 0; c < d; c++) {
                    double x = drift_mpfr_to_format(a[c], f, DRIFT_RNE), y = drift_mpfr_to_format(b[c], f, DRIFT_RNE);
                    if (x != y || signbit(x) != signbit(y)) done = 0;
                    oi[c] = y;
                }
                for (size_t c = 0; c < d; c++) {
                    mpfr_swap(a[c], b[c]);
                    mpfr_clear(b[c]);
                }
            }
            for (size_t c = 0; c < d; c++) mpfr_clear(a[c]);
            bad |= !done;
        }
    }
    free(a);
    free(b);
    if (bad) return drift_why(err, errsz, DRIFT_ERANGE, "attention reference: 4096 bits did not decide an output");
    return 0;
}
