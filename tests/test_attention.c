/* test_attention.c — standard, flash and split-KV attention against an independent scalar
 * emulation, their bitwise relations (flash vs standard, decode vs prefill), the MPFR
 * reference against long double, and the one-line errors for bad shapes.
 *
 * The emulation is written from attention.h's documented semantics in plain C float
 * arithmetic for the common recipe (bf16 inputs, fp32 accumulation with fmaf, seq order,
 * fp32 softmax), with its own correctly rounded expf/exp2f (MPFR at 200 bits, then
 * mpfr_get_flt) and its own bf16 rounding (bit trick). Comparisons are bit-for-bit. */
#include <criterion/criterion.h>
#include <math.h>
#include <mpfr.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "attention.h"
#include "drift.h"
#include "philox.h"

/* ---- emulation ------------------------------------------------------------------------- */

static float em_exp(float t, int base2)
{
    if (t == -INFINITY) return 0.0f;
    mpfr_t x, y;
    mpfr_inits2(200, x, y, (mpfr_ptr)0);
    mpfr_set_flt(x, t, MPFR_RNDN);
    if (base2)
        mpfr_exp2(y, x, MPFR_RNDN);
    else
        mpfr_exp(y, x, MPFR_RNDN);
    float r = mpfr_get_flt(y, MPFR_RNDN);
    mpfr_clears(x, y, (mpfr_ptr)0);
    return r;
}
static float em_log(float t)
{
    mpfr_t x, y;
    mpfr_inits2(200, x, y, (mpfr_ptr)0);
    mpfr_set_flt(x, t, MPFR_RNDN);
    mpfr_log(y, x, MPFR_RNDN);
    float r = mpfr_get_flt(y, MPFR_RNDN);
    mpfr_clears(x, y, (mpfr_ptr)0);
    return r;
}

static float bf(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    if ((u & 0x7f800000u) == 0x7f800000u) return x;
    u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
    memcpy(&x, &u, 4);
    return x;
}

typedef struct {
    int H, G, d;
    size_t L;
    int causal, base2;
    const unsigned char *mask;
    const float *k, *v; /* bf16 values [L][G][d] */
} shape_t;

static float em_dot(const float *a, const float *b, int d)
{
    float s = a[0] * b[0];
    for (int c = 1; c < d; c++) s = fmaf(a[c], b[c], s);
    return s;
}

static const float L2E = 1.44269504f;

/* The flash loop over tiles [t0, t1) (tile width bc): m, l, O unnormalised. */
static void em_tiles(const shape_t *s, const float *q, int g, size_t lim, size_t bc, size_t t0, size_t t1, float *m_out,
    float *l_out, float *O)
{
    float scale = 1.0f / sqrtf((float)s->d); /* d = 16: 1/4 exactly, as round_fp32(1/sqrt(16)) */
    float cc = scale * L2E;                  /* 0.25 * c is exact: round_fp32(0.25 log2 e) */
    float m = -INFINITY, l = 0, S[256], p[256];
    for (int c = 0; c < s->d; c++) O[c] = 0;
    for (size_t t = t0; t < t1; t++) {
        float tmax = -INFINITY;
        for (size_t jj = 0; jj < bc; jj++) {
            size_t j = t * bc + jj;
            int live = j < s->L && j < lim && (!s->mask || s->mask[j]);
            S[jj] = live ? em_dot(q, s->k + (j * s->G + g) * s->d, s->d) : -INFINITY;
            if (live && !s->base2) S[jj] *= scale;
            tmax = fmaxf(tmax, S[jj]);
        }
        if (tmax == -INFINITY) continue;
        float mn = fmaxf(m, tmax);
        float alpha = m == -INFINITY ? 0.0f : (s->base2 ? em_exp((m - mn) * cc, 1) : em_exp(m - mn, 0));
        for (size_t jj = 0; jj < bc; jj++)
            p[jj] =
                S[jj] == -INFINITY ? 0.0f : (s->base2 ? em_exp(fmaf(S[jj], cc, -(mn * cc)), 1) : em_exp(S[jj] - mn, 0));
        float r = p[0];
        for (size_t jj = 1; jj < bc; jj++) r += p[jj];
        l = fmaf(l, alpha, r);
        for (int c = 0; c < s->d; c++) {
            O[c] *= alpha;
            for (size_t jj = 0; jj < bc; jj++) {
                size_t j = t * bc + jj;
                float vj = j < s->L ? s->v[(j * s->G + g) * s->d + c] : 0.0f;
                O[c] = fmaf(bf(p[jj]), vj, O[c]);
            }
        }
        m = mn;
    }
    *m_out = m;
    *l_out = l;
}

enum { K_STANDARD, K_FLASH, K_SPLITN, K_SPLITS };

/* out [H][d] for the query row at position pos. */
static void emulate_row(float *out, const shape_t *s, const float *qrow, size_t pos, int kind, size_t bc, size_t param)
{
    size_t lim = s->causal ? pos + 1 : s->L;
    float scale = 0.25f, cc = scale * L2E;
    for (int h = 0; h < s->H; h++) {
        int g = h / (s->H / s->G);
        const float *q = qrow + h * s->d;
        float *o = out + h * s->d, O[64];
        if (kind == K_FLASH) {
            float m, l;
            em_tiles(s, q, g, lim, bc, 0, (s->L + bc - 1) / bc, &m, &l, O);
            for (int c = 0; c < s->d; c++) o[c] = l == 0 ? 0.0f : bf(O[c] * (1.0f / l));
        } else if (kind == K_STANDARD) {
            float S[256], e[256], m = -INFINITY, sum = 0;
            for (size_t j = 0; j < s->L; j++) {
                int live = j < lim && (!s->mask || s->mask[j]);
                S[j] = live ? bf(em_dot(q, s->k + (j * s->G + g) * s->d, s->d)) : -INFINITY; /* scores in bf16 */
                if (live && !s->base2) S[j] *= scale;
                m = fmaxf(m, S[j]);
            }
            for (size_t j = 0; j < s->L; j++) {
                e[j] = S[j] == -INFINITY || m == -INFINITY
                           ? 0.0f
                           : (s->base2 ? em_exp(fmaf(S[j], cc, -(m * cc)), 1) : em_exp(S[j] - m, 0));
                sum = j ? sum + e[j] : e[j];
            }
            for (int c = 0; c < s->d; c++) {
                float acc = 0;
                for (size_t j = 0; j < s->L; j++) acc = fmaf(bf(e[j] / sum), s->v[(j * s->G + g) * s->d + c], acc);
                o[c] = m == -INFINITY ? 0.0f : bf(acc);
            }
        } else {
            size_t tiles = (s->L + bc - 1) / bc, per = kind == K_SPLITN ? (tiles + param - 1) / param : param / bc;
            size_t ns = (tiles + per - 1) / per;
            float lse[64], Os[64][64], M = -INFINITY;
            for (size_t sp = 0; sp < ns; sp++) {
                float m, l;
                size_t a = sp * per, b = a + per < tiles ? a + per : tiles;
                em_tiles(s, q, g, lim, bc, a, b, &m, &l, O);
                if (l == 0) {
                    lse[sp] = -INFINITY;
                    continue;
                }
                float inv = 1.0f / l;
                for (int c = 0; c < s->d; c++) Os[sp][c] = O[c] * inv;
                lse[sp] = (s->base2 ? m * scale : m) + em_log(l);
                M = fmaxf(M, lse[sp]);
            }
            float Z = 0;
            int first = 1;
            for (size_t sp = 0; sp < ns; sp++)
                if (lse[sp] != -INFINITY) {
                    float e = em_exp(lse[sp] - M, 0);
                    Z = first ? e : Z + e;
                    first = 0;
                }
            float LSE = em_log(Z) + M;
            for (int c = 0; c < s->d; c++) O[c] = 0;
            for (size_t sp = 0; sp < ns; sp++)
                if (lse[sp] != -INFINITY) {
                    float w = em_exp(lse[sp] - LSE, 0);
                    for (int c = 0; c < s->d; c++) O[c] = fmaf(w, Os[sp][c], O[c]);
                }
            for (int c = 0; c < s->d; c++) o[c] = M == -INFINITY ? 0.0f : bf(O[c]);
        }
    }
}

/* ---- inputs ----------------------------------------------------------------------------- */

enum { RANDOM, ALL_EQUAL, ONE_HUGE, PADDED, FULLY_MASKED, NCASES };
static const char *case_name[] = {"random", "all-equal", "one-huge", "padded", "fully-masked"};

typedef struct {
    int H, G, d;
    size_t L;
    double *q, *k, *v;
    float *qf, *kf, *vf;
    unsigned char mask[256];
    int use_mask;
} data_t;

static void make_data(data_t *D, int H, int G, int d, size_t L, int kase, uint64_t seed)
{
    D->H = H, D->G = G, D->d = d, D->L = L;
    size_t nq = L * H * d, nk = L * G * d;
    D->q = malloc(nq * sizeof(double)), D->k = malloc(nk * sizeof(double)), D->v = malloc(nk * sizeof(double));
    D->qf = malloc(nq * sizeof(float)), D->kf = malloc(nk * sizeof(float)), D->vf = malloc(nk * sizeof(float));
    drift_stream_t st;
    drift_stream_init(&st, seed, 10, (uint32_t)kase, (uint32_t)L);
    for (size_t i = 0; i < nq; i++) D->q[i] = kase == ALL_EQUAL ? 0.0 : drift_stream_normal(&st);
    for (size_t i = 0; i < nk; i++) {
        D->k[i] = drift_stream_normal(&st);
        D->v[i] = drift_stream_normal(&st);
    }
    if (kase == ONE_HUGE) /* key 3 aligned with every query's channel 0 at 300x: one dominating score */
        for (int g = 0; g < G; g++) D->k[(3 * G + g) * d] = 300.0;
    D->use_mask = kase == PADDED || kase == FULLY_MASKED;
    for (size_t j = 0; j < L; j++) D->mask[j] = kase == PADDED ? (j % 5 != 2 && j < L - 4) : 0;
    for (size_t i = 0; i < nq; i++) D->qf[i] = bf((float)D->q[i]);
    for (size_t i = 0; i < nk; i++) D->kf[i] = bf((float)D->k[i]), D->vf[i] = bf((float)D->v[i]);
}

static void free_data(data_t *D) { free(D->q), free(D->k), free(D->v), free(D->qf), free(D->kf), free(D->vf); }

static drift_kv_cache_t cache_of(const data_t *D, size_t n)
{
    drift_kv_cache_t kv;
    drift_kv_format_t kf = {DRIFT_KV_FLOAT, DRIFT_FP32};
    char err[DRIFT_ERRMSG_MAX];
    cr_assert_eq(drift_kv_init(&kv, D->G, D->d, D->L, &kf, err, sizeof err), 0, "%s", err);
    cr_assert_eq(drift_kv_append(&kv, D->k, D->v, n, err, sizeof err), 0, "%s", err);
    return kv;
}

static int same(double a, double b) { return (isnan(a) && isnan(b)) || (a == b && signbit(a) == signbit(b)); }

/* Every row of a prefill (all queries, one call) against the emulation. */
static void check_kernel(
    const char *spec, int kind, size_t bc, size_t param, const char *sum_order, const char *dot_order)
{
    for (int kase = 0; kase < NCASES; kase++)
        for (int causal = 0; causal < 2; causal++)
            for (int b2 = 0; b2 < 2; b2++) {
                if (kase == FULLY_MASKED && causal)
                    continue; /* causal rows always see key 0 unmasked... by mask only */
                data_t D;
                make_data(&D, 4, 2, 16, 37, kase, 5);
                drift_attn_opts_t o = drift_attn_opts(4, 2, 16, DRIFT_BF16);
                char err[DRIFT_ERRMSG_MAX];
                cr_assert_eq(drift_attn_kernel_parse(&o.kernel, spec, err, sizeof err), 0, "%s", err);
                o.causal = causal;
                o.exp = b2 ? DRIFT_EXP_EXP2 : DRIFT_EXP_EXPF;
                if (sum_order) cr_assert_eq(drift_order_parse(&o.sum_order, sum_order), 0);
                if (dot_order) {
                    cr_assert_eq(drift_order_parse(&o.qk.order, dot_order), 0);
                    cr_assert_eq(drift_order_parse(&o.pv.order, dot_order), 0);
                }
                drift_kv_cache_t kv = cache_of(&D, D.L);
                double *out = malloc(D.L * 4 * 16 * sizeof(double));
                cr_assert_eq(drift_attention(out, D.q, D.L, 0, &kv, D.use_mask ? D.mask : NULL, &o, err, sizeof err), 0,
                    "%s", err);
                shape_t s = {4, 2, 16, D.L, causal, b2, D.use_mask ? D.mask : NULL, D.kf, D.vf};
                float ref[64];
                for (size_t i = 0; i < D.L; i++) {
                    emulate_row(ref, &s, D.qf + i * 64, i, kind, bc, param);
                    for (int x = 0; x < 64; x++)
                        cr_assert(same(out[i * 64 + x], ref[x]), "%s %s causal=%d %s row %zu elt %d: lib %a emu %a",
                            spec, case_name[kase], causal, b2 ? "exp2" : "expf", i, x, out[i * 64 + x], (double)ref[x]);
                }
                free(out);
                drift_kv_free(&kv);
                free_data(&D);
            }
}

Test(attention, standard_matches_emulation) { check_kernel("standard", K_STANDARD, 0, 0, NULL, NULL); }
Test(attention, flash_matches_emulation) { check_kernel("flash:16,8", K_FLASH, 8, 0, NULL, NULL); }
Test(attention, flash_wide_tile_matches_emulation) { check_kernel("flash:64,64", K_FLASH, 64, 0, NULL, NULL); }
Test(attention, splitkv_n_matches_emulation) { check_kernel("splitkv:3,8", K_SPLITN, 8, 3, NULL, NULL); }
Test(attention, splitkv_size_matches_emulation) { check_kernel("splitkv:size=16,8", K_SPLITS, 8, 16, NULL, NULL); }
/* blocked:65536 over a tile of at most 64 sums is one seq block: the same numbers through
 * the generic path (drift_sum, drift_dot, the kernel arithmetic) instead of the float one.
 * For standard's dot products too: a QK^T dot has no initial value, and a P.V dot starts
 * from +0, where round(+0 + r) = r (r is never -0: see attention.c's note on zeros). */
Test(attention, generic_path_matches_emulation)
{
    check_kernel("flash:16,8", K_FLASH, 8, 0, "blocked:65536", NULL);
    check_kernel("splitkv:size=16,8", K_SPLITS, 8, 16, "blocked:65536", NULL);
    check_kernel("standard", K_STANDARD, 0, 0, "blocked:65536", "blocked:65536");
}

/* flash with Bc >= L equals standard where the orders coincide: scores kept in the
 * accumulator (qk.out = fp32), normalise_after (P unnormalised, rounded to bf16, divided by
 * l at the end), a safe softmax, and seq (or tc:h100) P.V and row sums. There the single
 * tile's extra slots are exact zeros, which a seq sum from +0 and the tc model (it drops
 * zero products) both ignore. With Bc < L the rescaling changes bits. */
Test(attention, flash_single_tile_equals_standard)
{
    const char *pv_orders[] = {"seq", "tc:h100"};
    for (int po = 0; po < 2; po++)
        for (int b2 = 0; b2 < 2; b2++) {
            data_t D;
            make_data(&D, 4, 2, 16, 37, RANDOM, 9);
            drift_attn_opts_t o = drift_attn_opts(4, 2, 16, DRIFT_BF16);
            o.qk.out = DRIFT_FP32;
            o.normalise_after = 1;
            o.exp = b2 ? DRIFT_EXP_EXP2 : DRIFT_EXP_EXPF;
            cr_assert_eq(drift_order_parse(&o.pv.order, pv_orders[po]), 0);
            drift_kv_cache_t kv = cache_of(&D, D.L);
            double a[37 * 64], b[37 * 64], c[37 * 64];
            char err[DRIFT_ERRMSG_MAX];
            cr_assert_eq(drift_attention(a, D.q, D.L, 0, &kv, NULL, &o, err, sizeof err), 0, "%s", err);
            cr_assert_eq(drift_attn_kernel_parse(&o.kernel, "flash:16,64", NULL, 0), 0);
            cr_assert_eq(drift_attention(b, D.q, D.L, 0, &kv, NULL, &o, err, sizeof err), 0, "%s", err);
            cr_assert_eq(drift_attn_kernel_parse(&o.kernel, "flash:16,16", NULL, 0), 0);
            cr_assert_eq(drift_attention(c, D.q, D.L, 0, &kv, NULL, &o, err, sizeof err), 0, "%s", err);
            int differ = 0;
            for (int i = 0; i < 37 * 64; i++) {
                cr_assert(same(a[i], b[i]), "%s %s elt %d: standard %a flash %a", pv_orders[po], b2 ? "exp2" : "expf",
                    i, a[i], b[i]);
                differ += !same(a[i], c[i]);
            }
            cr_assert(differ > 0, "Bc = 16 < L = 37 rescales: some bits must move");
            drift_kv_free(&kv);
            free_data(&D);
        }
}

/* Decode (one query against the cache so far) vs prefill (all queries at once) vs chunked
 * prefill: bit-identical for flash and splitkv:size=S (split boundaries at multiples of S);
 * splitkv:N cuts ceil(tiles/N)-tile splits of the current length, so rows whose decode
 * length cuts differently from the prefill length move. */
static int row_diff[37]; /* per query row: elements that differ, from the last call */

static int decode_vs_prefill_kv(const char *spec, size_t chunk, const char *kvspec)
{
    data_t D;
    make_data(&D, 4, 2, 16, 37, RANDOM, 11);
    drift_attn_opts_t o = drift_attn_opts(4, 2, 16, DRIFT_BF16);
    char err[DRIFT_ERRMSG_MAX];
    cr_assert_eq(drift_attn_kernel_parse(&o.kernel, spec, err, sizeof err), 0, "%s", err);
    drift_kv_format_t kf;
    cr_assert_eq(drift_kv_format_parse(&kf, kvspec, err, sizeof err), 0, "%s", err);
    double pre[37 * 64], dec[37 * 64];
    cr_assert_eq(drift_attention_prefill(pre, D.q, D.k, D.v, D.L, &kf, chunk, &o, err, sizeof err), 0, "%s", err);
    drift_kv_cache_t kv;
    cr_assert_eq(drift_kv_init(&kv, 2, 16, D.L, &kf, err, sizeof err), 0);
    for (size_t i = 0; i < D.L; i++) {
        cr_assert_eq(drift_kv_append(&kv, D.k + i * 32, D.v + i * 32, 1, err, sizeof err), 0);
        cr_assert_eq(drift_attention_decode(dec + i * 64, D.q + i * 64, &kv, &o, err, sizeof err), 0, "%s", err);
    }
    int differ = 0;
    for (int r = 0; r < 37; r++) {
        row_diff[r] = 0;
        for (int x = 0; x < 64; x++) row_diff[r] += !same(pre[r * 64 + x], dec[r * 64 + x]);
        differ += row_diff[r];
    }
    drift_kv_free(&kv);
    free_data(&D);
    return differ;
}

static int decode_vs_prefill(const char *spec, size_t chunk) { return decode_vs_prefill_kv(spec, chunk, "bf16"); }

Test(attention, decode_equals_prefill_for_fixed_split_size)
{
    cr_assert_eq(decode_vs_prefill("splitkv:size=16,8", 0), 0);
    cr_assert_eq(decode_vs_prefill("splitkv:size=8", 5), 0, "chunked prefill too");
    cr_assert_eq(decode_vs_prefill("flash:4,8", 0), 0);
    cr_assert_eq(decode_vs_prefill("flash:4,8", 7), 0);
}

/* Where splitkv:N differs: L = 37, Bc = 4, N = 4. The prefill call sees 10 tiles and cuts
 * splits of ceil(10/4) = 3 tiles (keys 0-11, 12-23, 24-35, 36). Decoding row i sees
 * t = ceil((i+1)/4) tiles cut in splits of ceil(t/4). Where that is 3 tiles too (t = 9 or
 * 10: rows 32..36) the splits coincide and the bits are equal; rows with 1 tile (0..3)
 * have one split in both (the prefill's first split holds them alone). Elsewhere the
 * merge sees other splits, and rows do move. */
Test(attention, decode_differs_from_prefill_for_fixed_split_count)
{
    int d = decode_vs_prefill("splitkv:4,4", 0);
    cr_assert(d > 0, "fixed split count is expected to depend on the length");
    int moved = 0;
    for (int i = 0; i < 37; i++) {
        int t = (i + 1 + 3) / 4, per = (t + 3) / 4;
        if (per == 3 || t == 1)
            cr_assert_eq(row_diff[i], 0, "row %d: the same splits must give the same bits", i);
        else
            moved += row_diff[i] > 0;
    }
    cr_assert_gt(moved, 5, "rows cut differently move (%d did)", moved);
}

/* The reference against long double on a tiny case (heads 2, kv 1, d 3, 4 keys): long double
 * has 64 bits, its error over these few operations is below 2^-58 relative, so it rounds to
 * the same double as the reference or lies within one ulp (a near-midpoint). */
Test(attention, reference_agrees_with_long_double)
{
    double q[4 * 2 * 3], k[4 * 3], v[4 * 3], out[4 * 2 * 3];
    drift_stream_t st;
    drift_stream_init(&st, 3, 10, 99, 0);
    for (int i = 0; i < 24; i++) q[i] = drift_stream_normal(&st);
    for (int i = 0; i < 12; i++) k[i] = drift_stream_normal(&st), v[i] = drift_stream_normal(&st);
    drift_attn_opts_t o = drift_attn_opts(2, 1, 3, DRIFT_FP64);
    char err[DRIFT_ERRMSG_MAX];
    cr_assert_eq(drift_attention_reference(out, q, k, v, 4, 4, 0, NULL, &o, DRIFT_FP64, err, sizeof err), 0, "%s", err);
    for (int i = 0; i < 4; i++)
        for (int h = 0; h < 2; h++) {
            long double S[4], m = -INFINITY, sum = 0;
            for (int j = 0; j <= i; j++) {
                S[j] = 0;
                for (int c = 0; c < 3; c++) S[j] += (long double)q[(i * 2 + h) * 3 + c] * k[j * 3 + c];
                S[j] /= sqrtl(3.0L);
                m = S[j] > m ? S[j] : m;
            }
            for (int j = 0; j <= i; j++) sum += expl(S[j] - m);
            for (int c = 0; c < 3; c++) {
                long double r = 0;
                for (int j = 0; j <= i; j++) r += expl(S[j] - m) * v[j * 3 + c];
                r /= sum;
                double x = out[(i * 2 + h) * 3 + c];
                cr_assert(fabsl(r - x) <= (long double)(nextafter(fabs(x), INFINITY) - fabs(x)),
                    "row %d head %d c %d: %a vs %La", i, h, c, x, r);
            }
        }
    /* a fully masked row gives +0 */
    unsigned char none[4] = {0, 0, 0, 0};
    o.causal = 0;
    cr_assert_eq(drift_attention_reference(out, q, k, v, 1, 4, 0, none, &o, DRIFT_FP64, err, sizeof err), 0);
    for (int c = 0; c < 6; c++) cr_assert(out[c] == 0 && !signbit(out[c]));
}

/* The emulated kernel lands near the reference of the same (bf16-valued) inputs, fp32
 * output: the error is dominated by P rounded to bf16 (relative 2^-9 per weight), so
 * |out - ref| <= 2^-9 sum_j p_j |v_j| (+ fp32 roundings, 2^-20) <= 2^-9 max|v|; with
 * |v| < 5 (37 x 32 normal draws) that is below 0.01; we allow 0.02. */
Test(attention, kernels_near_reference)
{
    data_t D;
    make_data(&D, 4, 2, 16, 37, RANDOM, 13);
    drift_attn_opts_t o = drift_attn_opts(4, 2, 16, DRIFT_BF16);
    o.pv.out = DRIFT_FP32;
    double ref[37 * 64], out[37 * 64];
    char err[DRIFT_ERRMSG_MAX];
    for (size_t i = 0; i < 37 * 32; i++) D.k[i] = D.kf[i], D.v[i] = D.vf[i];
    for (size_t i = 0; i < 37 * 64; i++) D.q[i] = D.qf[i];
    cr_assert_eq(drift_attention_reference(ref, D.q, D.k, D.v, 37, 37, 0, NULL, &o, DRIFT_FP32, err, sizeof err), 0);
    cr_assert_eq(drift_attn_kernel_parse(&o.kernel, "flash:16,8", NULL, 0), 0);
    drift_kv_cache_t kv = cache_of(&D, 37);
    cr_assert_eq(drift_attention(out, D.q, 37, 0, &kv, NULL, &o, err, sizeof err), 0);
    for (int i = 0; i < 37 * 64; i++) cr_assert(fabs(out[i] - ref[i]) <= 0.02, "elt %d: %a vs %a", i, out[i], ref[i]);
    drift_kv_free(&kv);
    free_data(&D);
}

/* int8 caches: per-token scale max|x|/127 in fp32; codes rint(x/s); the kernel reads q*s. */
Test(attention, int8_cache_dequantises_as_documented)
{
    double k[2 * 4] = {1.0, -0.5, 0.25, 127.0, 0.1, 0.2, -0.3, 0.0};
    double v[2 * 4] = {0, 0, 0, 0, 2.0, -4.0, 1.0, 3.0};
    drift_kv_format_t f;
    char err[DRIFT_ERRMSG_MAX];
    cr_assert_eq(drift_kv_format_parse(&f, "int8:token", err, sizeof err), 0);
    drift_kv_cache_t kv;
    cr_assert_eq(drift_kv_init(&kv, 2, 2, 4, &f, err, sizeof err), 0);
    cr_assert_eq(drift_kv_append(&kv, k, v, 2, err, sizeof err), 0);
    cr_assert(kv.kscale[1] == 1.0 && kv.k[3] == 127.0 && kv.k[2] == 0.0, "token 0 head 1: scale 127/127 = 1");
    cr_assert(kv.vscale[0] == 1.0 && kv.v[0] == 0.0, "an all-zero vector keeps scale 1");
    float s = 4.0f / 127.0f; /* token 1 head 0 of v: max 4 */
    cr_assert(kv.vscale[2] == (double)s);
    cr_assert(kv.v[5] == (double)((float)(-127.0 * (double)s)));
    drift_kv_free(&kv);
    cr_assert_eq(drift_kv_format_parse(&f, "int8:head", err, sizeof err), 0);
    cr_assert_eq(drift_kv_init(&kv, 2, 2, 4, &f, err, sizeof err), 0);
    cr_assert_eq(drift_kv_append(&kv, k, v, 2, err, sizeof err), 0);
    cr_assert(kv.kscale[1] == 1.0, "head 1 of k: max 127 over both tokens");
    double big[4] = {1000, 0, 0, 0};
    cr_assert_eq(drift_kv_append(&kv, big, big, 1, err, sizeof err), 0);
    cr_assert(kv.kq[8] == 127, "later values clamp to the calibrated scale");
    drift_kv_free(&kv);
}

/* Bad input: a code and one line naming the option and what it accepts. */
Test(attention, bad_shapes_and_specs)
{
    char err[DRIFT_ERRMSG_MAX];
    drift_attn_opts_t o = drift_attn_opts(6, 4, 16, DRIFT_BF16);
    cr_assert_eq(drift_attn_validate(&o, err, sizeof err), DRIFT_EINVAL);
    cr_assert_str_eq(err, "attention: heads (6) must be a multiple of kv_heads (4)");
    o = drift_attn_opts(0, 1, 16, DRIFT_BF16);
    cr_assert_eq(drift_attn_validate(&o, err, sizeof err), DRIFT_EINVAL);
    cr_assert_str_eq(err, "attention: heads (0) must be an integer 1..65536");
    o = drift_attn_opts(4, 2, -3, DRIFT_BF16);
    cr_assert_eq(drift_attn_validate(&o, err, sizeof err), DRIFT_EINVAL);
    cr_assert_str_eq(err, "attention: head_dim (-3) must be an integer 1..65536");
    drift_attn_kernel_t k;
    cr_assert_eq(drift_attn_kernel_parse(&k, "splitkv:size=0", err, sizeof err), DRIFT_EINVAL);
    cr_assert_str_eq(
        err, "attention kernel 'splitkv:size=0': expected splitkv:size=S[,Bc] with S 1..1073741824 and Bc 1..65536");
    cr_assert_eq(drift_attn_kernel_parse(&k, "flash:64", err, sizeof err), DRIFT_EINVAL);
    cr_assert_str_eq(err, "attention kernel 'flash:64': expected flash:Br,Bc with tiles 1..65536");
    cr_assert_eq(drift_attn_kernel_parse(&k, "splitkv:size=100", err, sizeof err), DRIFT_EINVAL);
    cr_assert_str_eq(err,
        "attention kernel 'splitkv:size=100': the split size 100 must be a multiple of the tile Bc = 64 (write splitkv:size=S,Bc)");
    cr_assert_eq(drift_attn_kernel_parse(&k, "ring", err, sizeof err), DRIFT_EINVAL);
    cr_assert_eq(drift_attn_kernel_parse(&k, "splitkv:size=100,10", err, sizeof err), 0);
    char buf[DRIFT_ATTN_SPEC_MAX];
    drift_attn_kernel_print(buf, sizeof buf, &k);
    cr_assert_str_eq(buf, "splitkv:size=100,10");
    o = drift_attn_opts(4, 2, 16, DRIFT_BF16);
    cr_assert_eq(drift_attn_kernel_parse(&o.kernel, "flash:64,24", NULL, 0), 0);
    cr_assert_eq(drift_order_parse(&o.pv.order, "tc:h100"), 0);
    cr_assert_eq(drift_attn_validate(&o, err, sizeof err), DRIFT_EINVAL);
    cr_assert_str_eq(err,
        "attention kernel 'flash:64,24': the tile Bc = 24 must be a multiple of 16, the tc:h100 block for bf16 P.V");
    drift_kv_format_t f;
    cr_assert_eq(drift_kv_format_parse(&f, "int4", err, sizeof err), DRIFT_EINVAL);
    cr_assert(strstr(err, "int8:token") && !strchr(err, '\n'));
    drift_kv_cache_t kv;
    drift_kv_format_t kf = {DRIFT_KV_FLOAT, DRIFT_BF16};
    cr_assert_eq(drift_kv_init(&kv, 1, 4, (size_t)1 << 62, &kf, err, sizeof err), DRIFT_ENOMEM);
    cr_assert(strstr(err, "cannot fit"), "%s", err);
    cr_assert_eq(drift_kv_init(&kv, 1, 4, 2, &kf, err, sizeof err), 0);
    double x[4] = {0};
    o = drift_attn_opts(2, 1, 4, DRIFT_BF16);
    cr_assert_eq(drift_attention_decode(x, x, &kv, &o, err, sizeof err), DRIFT_EINVAL);
    cr_assert_str_eq(err, "attention decode: the kv cache is empty (append the token first)");
    cr_assert_eq(drift_kv_append(&kv, x, x, 1, err, sizeof err), 0);
    cr_assert_eq(drift_attention(x, x, 2, 0, &kv, NULL, &o, err, sizeof err), DRIFT_EINVAL);
    cr_assert_str_eq(err, "attention: causal queries at positions 0..1 need that many cached keys (the cache has 1)");
    drift_kv_free(&kv);
}

/* Threads split rows, never a sum: 1 and 3 threads give the same bits (law 4). */
Test(attention, thread_count_invariant)
{
#ifdef _OPENMP
    const char *specs[] = {"standard", "flash:16,8", "splitkv:3,8"};
    for (int k = 0; k < 3; k++) {
        data_t D;
        make_data(&D, 4, 2, 16, 37, RANDOM, 17);
        drift_attn_opts_t o = drift_attn_opts(4, 2, 16, DRIFT_BF16);
        cr_assert_eq(drift_attn_kernel_parse(&o.kernel, specs[k], NULL, 0), 0);
        drift_kv_cache_t kv = cache_of(&D, D.L);
        double a[37 * 64], b[37 * 64];
        omp_set_num_threads(1);
        cr_assert_eq(drift_attention(a, D.q, D.L, 0, &kv, NULL, &o, NULL, 0), 0);
        omp_set_num_threads(3);
        cr_assert_eq(drift_attention(b, D.q, D.L, 0, &kv, NULL, &o, NULL, 0), 0);
        for (int i = 0; i < 37 * 64; i++) cr_assert(same(a[i], b[i]), "%s elt %d", specs[k], i);
        drift_kv_free(&kv);
        free_data(&D);
    }
#endif
}

/* KV formats: per-token int8 scales depend on the token alone, so decode = prefill; a
 * per-head scale is calibrated on the first append (token 0 alone when decoding, the whole
 * prompt in a prefill), so the two quantise differently and the outputs move. GQA with
 * 2 query heads per KV head throughout. */
Test(attention, int8_cache_decode_vs_prefill)
{
    cr_assert_eq(decode_vs_prefill_kv("flash:4,8", 0, "int8:token"), 0);
    cr_assert_eq(decode_vs_prefill_kv("splitkv:size=8", 5, "fp8e4m3"), 0);
    cr_assert_gt(decode_vs_prefill_kv("flash:4,8", 0, "int8:head"), 0);
}

/* Padding invariance (non-causal, so that every query sees the padding): 30 tokens alone vs
 * the same 30 followed by 7 masked padding keys (a batch padded to 37). Masked keys inside a
 * live tile add exact zero terms, tiles of padding only are skipped: flash, splitkv:size=S
 * and standard (seq sums) keep every bit. splitkv:N cuts the padded length into other
 * splits, so it moves. */
static int padded_vs_alone(const char *spec)
{
    data_t D;
    make_data(&D, 4, 2, 16, 37, RANDOM, 21);
    drift_attn_opts_t o = drift_attn_opts(4, 2, 16, DRIFT_BF16);
    o.causal = 0;
    char err[DRIFT_ERRMSG_MAX];
    cr_assert_eq(drift_attn_kernel_parse(&o.kernel, spec, err, sizeof err), 0, "%s", err);
    drift_kv_cache_t alone = cache_of(&D, 30), padded = cache_of(&D, 37);
    unsigned char mask[37];
    for (int j = 0; j < 37; j++) mask[j] = j < 30;
    double a[30 * 64], b[30 * 64];
    cr_assert_eq(drift_attention(a, D.q, 30, 0, &alone, NULL, &o, err, sizeof err), 0, "%s", err);
    cr_assert_eq(drift_attention(b, D.q, 30, 0, &padded, mask, &o, err, sizeof err), 0, "%s", err);
    int differ = 0;
    for (int i = 0; i < 30 * 64; i++) differ += !same(a[i], b[i]);
    drift_kv_free(&alone);
    drift_kv_free(&padded);
    free_data(&D);
    return differ;
}

Test(attention, padding_invariance)
{
    cr_assert_eq(padded_vs_alone("flash:16,8"), 0);
    cr_assert_eq(padded_vs_alone("splitkv:size=16,8"), 0);
    cr_assert_eq(padded_vs_alone("standard"), 0);
    /* Bc = 4, N = 3: alone, 8 tiles in splits of 3 tiles; padded, 10 tiles in splits of 4 */
    cr_assert_gt(padded_vs_alone("splitkv:3,4"), 0);
}
