/* kv_cache.c — the KV cache (attention.h's drift_kv_cache_t): keys and values stored in a
 * float format, or as int8 with a scale per token or per head (a scale is an fp32 value of
 * amax / 127, rounded to nearest), appended token by token and read back dequantised. */
#include "attention.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "why.h"

/* ---- KV cache ------------------------------------------------------------------------------ */

void drift_kv_free(drift_kv_cache_t *c)
{
    if (!c) return;
    free(c->k);
    free(c->v);
    free(c->kq);
    free(c->vq);
    free(c->kscale);
    free(c->vscale);
    memset(c, 0, sizeof *c);
}

int drift_kv_init(drift_kv_cache_t *c, int kv_heads, int head_dim, size_t capacity, const drift_kv_format_t *fmt,
    char *err, size_t errsz)
{
    if (!c || !fmt) return drift_why(err, errsz, DRIFT_EINVAL, "kv cache: missing argument");
    memset(c, 0, sizeof *c);
    if (kv_heads < 1 || kv_heads > DRIFT_ATTN_DIM_MAX)
        return drift_why(err, errsz, DRIFT_EINVAL, "kv cache: kv_heads (%d) must be an integer 1..%ld", kv_heads,
            DRIFT_ATTN_DIM_MAX);
    if (head_dim < 1 || head_dim > DRIFT_ATTN_DIM_MAX)
        return drift_why(err, errsz, DRIFT_EINVAL, "kv cache: head_dim (%d) must be an integer 1..%ld", head_dim,
            DRIFT_ATTN_DIM_MAX);
    if (capacity < 1) return drift_why(err, errsz, DRIFT_EINVAL, "kv cache: capacity must be at least 1 token");
    char buf[32];
    if (drift_kv_format_print(buf, sizeof buf, fmt) < 0)
        return drift_why(
            err, errsz, DRIFT_EINVAL, "kv cache: unknown format (accepted: a lab float format, int8:token, int8:head)");
    size_t row = (size_t)kv_heads * (size_t)head_dim;
    if (capacity > SIZE_MAX / 2 / sizeof(double) / row)
        return drift_why(
            err, errsz, DRIFT_ENOMEM, "kv cache: capacity %zu tokens x %zu values cannot fit in memory", capacity, row);
    size_t n = capacity * row;
    c->fmt = *fmt;
    c->kv_heads = kv_heads;
    c->head_dim = head_dim;
    c->capacity = capacity;
    c->k = malloc(n * sizeof *c->k);
    c->v = malloc(n * sizeof *c->v);
    int bad = !c->k || !c->v;
    if (fmt->storage != DRIFT_KV_FLOAT) {
        size_t ns = fmt->storage == DRIFT_KV_INT8_TOKEN ? capacity * (size_t)kv_heads : (size_t)kv_heads;
        c->kq = malloc(n);
        c->vq = malloc(n);
        c->kscale = malloc(ns * sizeof *c->kscale);
        c->vscale = malloc(ns * sizeof *c->vscale);
        bad |= !c->kq || !c->vq || !c->kscale || !c->vscale;
    }
    if (bad) {
        drift_kv_free(c);
        return drift_why(err, errsz, DRIFT_ENOMEM, "kv cache: out of memory for %zu tokens", capacity);
    }
    return 0;
}

static double amax(const double *x, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) m = fabs(x[i]) > m ? fabs(x[i]) : m;
    return m;
}

static double int8_scale(double a) { return a > 0 ? drift_rne(a / 127.0, DRIFT_FP32) : 1.0; }

/* code of x at scale s: rint (ties to even) of the double quotient, clamped */
static void quantise(int8_t *q, double *deq, const double *x, size_t n, double s)
{
    for (size_t i = 0; i < n; i++) {
        double r = rint(x[i] / s);
        r = r > 127 ? 127 : r < -127 ? -127 : r;
        q[i] = (int8_t)r;
        deq[i] = drift_rne(r * s, DRIFT_FP32);
    }
}

int drift_kv_append(drift_kv_cache_t *c, const double *k, const double *v, size_t ntok, char *err, size_t errsz)
{
    if (!c || !c->k || (ntok && (!k || !v))) return drift_why(err, errsz, DRIFT_EINVAL, "kv cache: missing argument");
    if (ntok > c->capacity - c->len)
        return drift_why(err, errsz, DRIFT_ERANGE, "kv cache: %zu more tokens do not fit (%zu of %zu used)", ntok,
            c->len, c->capacity);
    size_t d = (size_t)c->head_dim, H = (size_t)c->kv_heads, row = H * d;
    for (size_t i = 0; i < ntok * row; i++)
        if (!isfinite(k[i]) || !isfinite(v[i]))
            return drift_why(err, errsz, DRIFT_EINVAL, "kv cache: keys and values must be finite");
    if (c->fmt.storage == DRIFT_KV_INT8_HEAD && !c->scales_set) {
        for (size_t g = 0; g < H; g++) {
            double ak = 0, av = 0;
            for (size_t t = 0; t < ntok; t++) {
                double a = amax(k + t * row + g * d, d), b = amax(v + t * row + g * d, d);
                ak = a > ak ? a : ak;
                av = b > av ? b : av;
            }
            c->kscale[g] = int8_scale(ak);
            c->vscale[g] = int8_scale(av);
        }
        c->scales_set = ntok > 0;
    }
    for (size_t t = 0; t < ntok; t++) {
        size_t at = (c->len + t) * row;
        for (size_t g = 0; g < H; g++) {
            const double *kx = k + t * row + g * d, *vx = v + t * row + g * d;
            size_t o = at + g * d;
            switch (c->fmt.storage) {
            case DRIFT_KV_FLOAT:
                for (size_t i = 0; i < d; i++) {
                    c->k[o + i] = drift_rne(kx[i], c->fmt.fmt);
                    c->v[o + i] = drift_rne(vx[i], c->fmt.fmt);
                }
                break;
            case DRIFT_KV_INT8_TOKEN: {
                size_t si = (c->len + t) * H + g;
                c->kscale[si] = int8_scale(amax(kx, d));
                c->vscale[si] = int8_scale(amax(vx, d));
                quantise(c->kq + o, c->k + o, kx, d, c->kscale[si]);
                quantise(c->vq + o, c->v + o, vx, d, c->vscale[si]);
                break;
            }
            case DRIFT_KV_INT8_HEAD:
                quantise(c->kq + o, c->k + o, kx, d, c->kscale[g]);
                quantise(c->vq + o, c->v + o, vx, d, c->vscale[g]);
                break;
            }
        }
    }
    c->len += ntok;
    return 0;
}
