/* ggml_twin_check.c — compares each twin of lib/ops/ggml_cpu.h with ggml's own kernel, bit for
 * bit, on random inputs, by linking the static ggml libraries of the llama.cpp AVX2 build.
 *
 * Not part of the project's build (it needs ggml's headers and libraries). Build and run:
 *   G=/work/peers/build/src/llama_cpp_python-0.3.36/vendor/llama.cpp/ggml
 *   B=/work/peers/build/llamacpp-avx2/ggml/src
 *   gcc -O2 -std=gnu11 -mavx2 -mfma -mf16c -ffp-contract=off -I lib/ops -I $G/include \
 *       tools/peers/ggml_twin_check.c lib/ops/ggml_cpu_*.c \
 *       $B/libggml.a $B/libggml-cpu.a $B/libggml-base.a -fopenmp -lstdc++ -lm -o /tmp/twin_check
 *   /tmp/twin_check [--write FILE]   # --write: a small record of ggml's outputs (hex) for tests
 * Prints, per kernel, how many cases were compared and how many differ (0 is the claim).
 * ggml's internal kernels (quantize_row_q8_1, ggml_vec_dot_*) are declared here with the
 * prototypes of ggml-cpu/quants.h and vec.h; the graph ops go through ggml's public API with
 * one thread, as the witness runs llama.cpp.
 * For the AVX-512 build of ggml (GGML_AVX512 + VBMI + VNNI + BF16), add -DTWIN_AVX512 and link
 * that build's libraries (compile with -mavx512f too, or drop the F16C checks): the kernels
 * that differ on that build are then compared through their _512 twins. */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml-cpu.h"
#include "ggml.h"
#include "ggml_cpu.h"

#ifdef TWIN_AVX512
#define TW_DOT_F16 drift_ggml_vec_dot_f16_512
#define TW_SWIGLU drift_ggml_swiglu512
#define TW_FA_ROW drift_ggml_flash_attn_row512
#define TW_FA_TILED drift_ggml_flash_attn_tiled_row512
#define TW_FA_SPLIT drift_ggml_flash_attn_split_row512
#else
#define TW_DOT_F16 drift_ggml_vec_dot_f16
#define TW_SWIGLU drift_ggml_swiglu
#define TW_FA_ROW drift_ggml_flash_attn_row
#define TW_FA_TILED drift_ggml_flash_attn_tiled_row
#define TW_FA_SPLIT drift_ggml_flash_attn_split_row
#endif

void quantize_row_q8_0(const float *x, void *y, int64_t k);
void quantize_row_q8_1(const float *x, void *y, int64_t k);
void ggml_vec_dot_q4_1_q8_1(int n, float *s, size_t bs, const void *vx, size_t bx, const void *vy, size_t by, int nrc);
void ggml_vec_dot_q8_0_q8_0(int n, float *s, size_t bs, const void *vx, size_t bx, const void *vy, size_t by, int nrc);
void ggml_vec_dot_f16(int n, float *s, size_t bs, uint16_t *x, size_t bx, uint16_t *y, size_t by, int nrc);

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}
static float urand(void) { return (float)(rnd() & 0xffffff) / 16777216.0f; }
static float nrand(void)
{ /* roughly normal, heavy enough tails */
    float s = 0;
    for (int i = 0; i < 4; i++) s += urand();
    return (s - 2.0f) * 1.7f;
}
static uint32_t bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
}
static int same(float a, float b) { return bits(a) == bits(b); }

static int report(const char *name, long n, long bad)
{
    printf("%-28s %8ld cases  %6ld differ\n", name, n, bad);
    return bad != 0;
}

static FILE *rec; /* optional record of ggml outputs */

static int check_fp16(void)
{
    long bad = 0, n = 0;
    for (uint64_t u = 0; u < (1ull << 32); u += 509) { /* a stride prime to every power of 2 */
        float x;
        uint32_t w = (uint32_t)u;
        memcpy(&x, &w, 4);
        uint16_t h = _cvtss_sh(x, 0);
        uint16_t m = drift_ggml_fp32_to_fp16(x);
        n++;
        if (h != m && !(isnan(x))) bad++;
        if (!isnan(x) && (w & 0x7c00) == 0) { /* fp16 -> fp32 of the low half as a pattern */
            uint16_t hh = (uint16_t)w;
            if (!same(_cvtsh_ss(hh), drift_ggml_fp16_to_fp32(hh)) && !isnan(_cvtsh_ss(hh))) bad++;
        }
    }
    return report("fp32->fp16 (F16C)", n, bad);
}

static void rand_row(float *x, int n)
{
    const float sc = ldexpf(1.0f, (int)(rnd() % 20) - 10);
    for (int i = 0; i < n; i++) x[i] = nrand() * sc;
    if (rnd() % 4 == 0) { /* plant exact halves: values whose x*id lands on k + 0.5 */
        float amax = 0;
        for (int i = 0; i < n; i++) amax = fmaxf(amax, fabsf(x[i]));
        for (int i = 0; i < n; i += 3) x[i] = amax * ((float)((int)(rnd() % 254) - 127) + 0.5f) / 127.0f;
    }
}

static int check_quant(void)
{
    enum { N = 576 };
    float x[N];
    drift_ggml_q8_1_t a[N / 32], b[N / 32];
    drift_ggml_q8_0_t c[N / 32], d[N / 32];
    long bad1 = 0, bad0 = 0, n = 0;
    for (int t = 0; t < 20000; t++) {
        rand_row(x, N);
        quantize_row_q8_1(x, a, N);
        drift_ggml_quantize_row_q8_1(b, x, N);
        quantize_row_q8_0(x, c, N);
        drift_ggml_quantize_row_q8_0(d, x, N);
        n++;
        bad1 += memcmp(a, b, sizeof a) != 0;
        bad0 += memcmp(c, d, sizeof c) != 0;
    }
    return report("quantize_row_q8_1", n, bad1) | report("quantize_row_q8_0", n, bad0);
}

static void rand_q4_1(drift_ggml_q4_1_t *w, int nb)
{
    for (int i = 0; i < nb; i++) {
        w[i].d = drift_ggml_fp32_to_fp16(urand() * 0.02f + 1e-4f);
        w[i].m = drift_ggml_fp32_to_fp16(-urand() * 0.15f);
        for (int j = 0; j < 16; j++) w[i].qs[j] = (uint8_t)rnd();
    }
}

static int check_dots(void)
{
    enum { N = 1536 };
    float x[N];
    drift_ggml_q4_1_t w[N / 32];
    drift_ggml_q8_1_t a[N / 32];
    drift_ggml_q8_0_t e[N / 32], f[N / 32];
    long bad41 = 0, bad80 = 0, badf = 0, n = 0;
    for (int t = 0; t < 20000; t++) {
        const int n_el = (t % 2) ? 1536 : 576;
        rand_row(x, n_el);
        drift_ggml_quantize_row_q8_1(a, x, n_el);
        rand_q4_1(w, n_el / 32);
        float s1, s2;
        ggml_vec_dot_q4_1_q8_1(n_el, &s1, 0, w, 0, a, 0, 1);
        s2 = drift_ggml_vec_dot_q4_1_q8_1((size_t)n_el, w, a);
        bad41 += !same(s1, s2);
        rand_row(x, n_el);
        drift_ggml_quantize_row_q8_0(e, x, n_el);
        for (int i = 0; i < n_el / 32; i++) {
            f[i].d = drift_ggml_fp32_to_fp16(urand() * 0.01f);
            for (int j = 0; j < 32; j++) f[i].qs[j] = (int8_t)((int)(rnd() % 255) - 127);
        }
        ggml_vec_dot_q8_0_q8_0(n_el, &s1, 0, f, 0, e, 0, 1);
        s2 = drift_ggml_vec_dot_q8_0_q8_0((size_t)n_el, f, e);
        bad80 += !same(s1, s2);
        uint16_t hx[64], hy[64];
        for (int i = 0; i < 64; i++) {
            hx[i] = drift_ggml_fp32_to_fp16(nrand());
            hy[i] = drift_ggml_fp32_to_fp16(nrand() * 3.0f);
        }
        ggml_vec_dot_f16(64, &s1, 0, hx, 0, hy, 0, 1);
        s2 = TW_DOT_F16(64, hx, hy);
        badf += !same(s1, s2);
        n++;
    }
    return report("vec_dot_q4_1_q8_1", n, bad41) | report("vec_dot_q8_0_q8_0", n, bad80) |
           report("vec_dot_f16 (64)", n, badf);
}

static struct ggml_context *new_ctx(void)
{
    struct ggml_init_params ip = {256 * 1024 * 1024, NULL, false};
    return ggml_init(ip);
}

static int check_graph_ops(void)
{
    long bad_rms = 0, bad_rope = 0, bad_glu = 0, n = 0;
    for (int t = 0; t < 200; t++) {
        struct ggml_context *ctx = new_ctx();
        const int T = 1 + (int)(rnd() % 40);
        /* rms_norm + mul over [576, T] */
        struct ggml_tensor *xa = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 576, T);
        struct ggml_tensor *wa = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 576);
        for (int i = 0; i < 576 * T; i++) ((float *)xa->data)[i] = nrand() * (1 + (float)(t % 7));
        for (int i = 0; i < 576; i++) ((float *)wa->data)[i] = nrand();
        struct ggml_tensor *rn = ggml_mul(ctx, ggml_rms_norm(ctx, xa, 1e-5f), wa);
        /* rope on [64, 9, T] with positions p0 .. p0+T-1 */
        struct ggml_tensor *xq = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 64, 9, T);
        struct ggml_tensor *pos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, T);
        const int p0 = (int)(rnd() % 400);
        for (int i = 0; i < 64 * 9 * T; i++) ((float *)xq->data)[i] = nrand() * 3;
        for (int i = 0; i < T; i++) ((int32_t *)pos->data)[i] = p0 + i;
        struct ggml_tensor *ro =
            ggml_rope_ext(ctx, xq, pos, NULL, 64, 0, 8192, 100000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f);
        /* swiglu over [1536, T] */
        struct ggml_tensor *ga = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 1536, T);
        struct ggml_tensor *ua = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 1536, T);
        for (int i = 0; i < 1536 * T; i++) {
            ((float *)ga->data)[i] = nrand() * 4;
            ((float *)ua->data)[i] = nrand();
        }
        if (t == 0) ((float *)ga->data)[5] = -95.0f; /* out-of-range lanes of v_expf */
        if (t == 0) ((float *)ga->data)[9] = -130.0f;
        struct ggml_tensor *gl = ggml_swiglu_split(ctx, ga, ua);
        struct ggml_cgraph *gf = ggml_new_graph(ctx);
        ggml_build_forward_expand(gf, rn);
        ggml_build_forward_expand(gf, ro);
        ggml_build_forward_expand(gf, gl);
        ggml_graph_compute_with_ctx(ctx, gf, 1);
        float buf[1536], cache[64];
        for (int r = 0; r < T; r++) {
            drift_ggml_rms_norm_mul(buf, (float *)xa->data + 576 * r, (float *)wa->data, 576, 1e-5f);
            for (int i = 0; i < 576; i++) bad_rms += !same(buf[i], ((float *)rn->data)[576 * r + i]);
            drift_ggml_rope_cache(cache, p0 + r, 64, 100000.0f);
            for (int h = 0; h < 9; h++) {
                drift_ggml_rope_norm(buf, (float *)xq->data + 64 * (9 * r + h), cache, 64);
                for (int i = 0; i < 64; i++) bad_rope += !same(buf[i], ((float *)ro->data)[64 * (9 * r + h) + i]);
            }
            TW_SWIGLU(buf, (float *)ga->data + 1536 * r, (float *)ua->data + 1536 * r, 1536);
            for (int i = 0; i < 1536; i++) bad_glu += !same(buf[i], ((float *)gl->data)[1536 * r + i]);
        }
        n++;
        ggml_free(ctx);
    }
    return report("rms_norm+mul (values)", n * 576, bad_rms) | report("rope_ext NORMAL (values)", n, bad_rope) |
           report("swiglu_split (values)", n, bad_glu);
}

/* flash_attn_ext, f16 K and V, causal mask over a KV cache of nkv cells of which the first
 * p0 + T are filled; T queries at positions p0 .. p0+T-1 (T < 64: the one_chunk path). */
static int check_fattn(int tiled)
{
    long bad = 0, n = 0;
    for (int t = 0; t < 30; t++) {
        struct ggml_context *ctx = new_ctx();
        /* tiled 0: one_chunk; 1: tiled (64+ queries); 2: one query over 512 cells (split-KV) */
        const int T = tiled == 1 ? 64 + (int)(rnd() % 100) : tiled == 2 ? 1 : 1 + (int)(rnd() % 63);
        const int p0 = tiled == 2 ? 250 + (int)(rnd() % 260) : (int)(rnd() % 90), nkv = tiled == 2 ? 512 : 256;
        struct ggml_tensor *q = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 64, T, 9);
        struct ggml_tensor *k = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, 64, nkv, 3);
        struct ggml_tensor *v = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, 64, nkv, 3);
        struct ggml_tensor *m = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, nkv, T);
        for (int i = 0; i < 64 * T * 9; i++) ((float *)q->data)[i] = nrand() * 2;
        for (int i = 0; i < 64 * nkv * 3; i++) {
            ((uint16_t *)k->data)[i] = drift_ggml_fp32_to_fp16(nrand() * 2);
            ((uint16_t *)v->data)[i] = drift_ggml_fp32_to_fp16(nrand());
        }
        for (int r = 0; r < T; r++)
            for (int c = 0; c < nkv; c++) ((uint16_t *)m->data)[r * nkv + c] = c <= p0 + r ? 0 : 0xfc00; /* 0 / -inf */
        struct ggml_tensor *o = ggml_flash_attn_ext(ctx, q, k, v, m, 0.125f, 0.0f, 0.0f);
        struct ggml_cgraph *gf = ggml_new_graph(ctx);
        ggml_build_forward_expand(gf, o);
        ggml_graph_compute_with_ctx(ctx, gf, 1);
        int idx[1024];
        float out[64];
        for (int r = 0; r < T; r++) {
            for (int c = 0; c <= p0 + r; c++) idx[c] = c;
            for (int h = 0; h < 9; h++) {
                const uint16_t *kh = (uint16_t *)k->data + (size_t)64 * nkv * (h / 3);
                const uint16_t *vh = (uint16_t *)v->data + (size_t)64 * nkv * (h / 3);
                if (tiled == 1)
                    TW_FA_TILED(out, (float *)q->data + 64 * (r + T * h), kh, vh, 64, 64, (size_t)(p0 + r + 1), 0.125f);
                else
                    TW_FA_ROW(
                        out, (float *)q->data + 64 * (r + T * h), kh, vh, 64, 64, idx, (size_t)(p0 + r + 1), 0.125f);
                const float *g = (float *)o->data + 64 * (h + 9 * r);
                for (int i = 0; i < 64; i++) bad += !same(out[i], g[i]);
            }
        }
        n++;
        ggml_free(ctx);
    }
    return report(tiled == 1   ? "flash_attn_ext tiled"
                  : tiled == 2 ? "flash_attn_ext split-KV (1 thr)"
                               : "flash_attn_ext one_chunk",
        n, bad);
}

/* mul_mat of a Q4_1 matrix [K, M] by f32 activations [K, T]: the activations are quantized to
 * q8_1 and each output is one vec_dot (no llamafile/tiled/repack path takes Q4_1 on AVX2). */
static int check_mul_mat(void)
{
    long bad = 0, n = 0;
    for (int t = 0; t < 12; t++) {
        struct ggml_context *ctx = new_ctx();
        const int K = (t % 2) ? 1536 : 576, M = 64, T = 1 + t;
        struct ggml_tensor *w = ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_1, K, M);
        struct ggml_tensor *x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, T);
        rand_q4_1((drift_ggml_q4_1_t *)w->data, K * M / 32);
        for (int r = 0; r < T; r++) rand_row((float *)x->data + (size_t)K * r, K);
        struct ggml_tensor *y = ggml_mul_mat(ctx, w, x);
        struct ggml_cgraph *gf = ggml_new_graph(ctx);
        ggml_build_forward_expand(gf, y);
        ggml_graph_compute_with_ctx(ctx, gf, 1);
        drift_ggml_q8_1_t a[1536 / 32];
        for (int r = 0; r < T; r++) {
            drift_ggml_quantize_row_q8_1(a, (float *)x->data + (size_t)K * r, (size_t)K);
            for (int i = 0; i < M; i++) {
                const float s =
                    drift_ggml_vec_dot_q4_1_q8_1((size_t)K, (drift_ggml_q4_1_t *)w->data + (size_t)i * (K / 32), a);
                bad += !same(s, ((float *)y->data)[(size_t)M * r + i]);
            }
        }
        n++;
        ggml_free(ctx);
    }
    return report("mul_mat q4_1 x f32", n, bad);
}

/* The record (--write): ggml's outputs on inputs a test can rebuild without ggml, written as C99
 * hex floats. The inputs are small rationals from integer formulas (no libm), so the record
 * holds on any machine; the outputs are ggml's, an independent witness of each twin. */
static float rat(int a, int m, int den) { return (float)(a % m - m / 2) / (float)den; }

static void write_record(FILE *f)
{
#ifdef TWIN_AVX512
    fprintf(f, "# ggml_cpu record: outputs of ggml-cpu (llama.cpp AVX-512 build) on rebuildable inputs\n");
#else
    fprintf(f, "# ggml_cpu record: outputs of ggml-cpu (llama.cpp AVX2 build) on rebuildable inputs\n");
#endif
    fprintf(f, "# written by tools/peers/ggml_twin_check.c --write; see tests/test_ggml_cpu.c\n");
    struct ggml_context *ctx = new_ctx();
    /* swiglu over 24 lanes: x_i = rat(37 i + 5, 61, 4) (includes large negatives), g_i = rat(11 i + 3, 17, 8) */
    struct ggml_tensor *ga = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 24),
                       *ua = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 24);
    for (int i = 0; i < 24; i++) {
        ((float *)ga->data)[i] = rat(37 * i + 5, 61, 4) * (i == 7 ? 16.0f : 1.0f);
        ((float *)ua->data)[i] = rat(11 * i + 3, 17, 8);
    }
    struct ggml_tensor *gl = ggml_swiglu_split(ctx, ga, ua);
    /* rope: one head of 64, x_i = rat(13 i + 1, 23, 4), positions 7 and 300 */
    struct ggml_tensor *xq = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 64, 1, 2),
                       *pos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 2);
    for (int i = 0; i < 128; i++) ((float *)xq->data)[i] = rat(13 * (i % 64) + 1, 23, 4);
    ((int32_t *)pos->data)[0] = 7;
    ((int32_t *)pos->data)[1] = 300;
    struct ggml_tensor *ro = ggml_rope_ext(ctx, xq, pos, NULL, 64, 0, 8192, 100000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f);
    /* rms_norm * w over 64: x_i = rat(29 i + 3, 31, 2), w_i = rat(7 i + 2, 13, 4) */
    struct ggml_tensor *xa = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 64),
                       *wa = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 64);
    for (int i = 0; i < 64; i++) {
        ((float *)xa->data)[i] = rat(29 * i + 3, 31, 2);
        ((float *)wa->data)[i] = rat(7 * i + 2, 13, 4);
    }
    struct ggml_tensor *rn = ggml_mul(ctx, ggml_rms_norm(ctx, xa, 1e-5f), wa);
    /* flash attention: 1 kv head, 3 q heads, 64 dims, 256 cells; T queries at p0 .. p0+T-1;
     * q = rat(5 i + 7 r + 11 h, 19, 4), k = fp16(rat(3 d + 17 c, 23, 8)), v = fp16(rat(7 d + 5 c, 29, 16)) */
    struct ggml_tensor *fo[2];
    const int fT[2] = {5, 70}, fp0[2] = {60, 3};
    for (int w = 0; w < 2; w++) {
        const int T = fT[w], p0 = fp0[w];
        struct ggml_tensor *q = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 64, T, 3);
        struct ggml_tensor *k = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, 64, 256, 1);
        struct ggml_tensor *v = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, 64, 256, 1);
        struct ggml_tensor *m = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 256, T);
        for (int h = 0; h < 3; h++)
            for (int r = 0; r < T; r++)
                for (int i = 0; i < 64; i++)
                    ((float *)q->data)[i + 64 * (r + T * h)] = rat(5 * i + 7 * r + 11 * h, 19, 4);
        for (int c = 0; c < 256; c++)
            for (int d = 0; d < 64; d++) {
                ((uint16_t *)k->data)[64 * c + d] = drift_ggml_fp32_to_fp16(rat(3 * d + 17 * c, 23, 8));
                ((uint16_t *)v->data)[64 * c + d] = drift_ggml_fp32_to_fp16(rat(7 * d + 5 * c, 29, 16));
            }
        for (int r = 0; r < T; r++)
            for (int c = 0; c < 256; c++) ((uint16_t *)m->data)[r * 256 + c] = c <= p0 + r ? 0 : 0xfc00;
        fo[w] = ggml_flash_attn_ext(ctx, q, k, v, m, 0.125f, 0.0f, 0.0f);
    }
    struct ggml_cgraph *gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, gl);
    ggml_build_forward_expand(gf, ro);
    ggml_build_forward_expand(gf, rn);
    ggml_build_forward_expand(gf, fo[0]);
    ggml_build_forward_expand(gf, fo[1]);
    ggml_graph_compute_with_ctx(ctx, gf, 1);
    fprintf(f, "swiglu");
    for (int i = 0; i < 24; i++) fprintf(f, " %a", (double)((float *)gl->data)[i]);
    fprintf(f, "\nrope7");
    for (int i = 0; i < 64; i++) fprintf(f, " %a", (double)((float *)ro->data)[i]);
    fprintf(f, "\nrope300");
    for (int i = 0; i < 64; i++) fprintf(f, " %a", (double)((float *)ro->data)[64 + i]);
    fprintf(f, "\nrms_norm_mul");
    for (int i = 0; i < 64; i++) fprintf(f, " %a", (double)((float *)rn->data)[i]);
    /* the last query row of head 2 of each call: one_chunk (T 5) and tiled (T 70) */
    for (int w = 0; w < 2; w++) {
        fprintf(f, "\nfattn_T%d_p%d", fT[w], fp0[w]);
        for (int i = 0; i < 64; i++) fprintf(f, " %a", (double)((float *)fo[w]->data)[64 * (2 + 3 * (fT[w] - 1)) + i]);
    }
    /* q4_1 x q8_1 over 64: block b, element e: nibble (5 e + 3 b) % 16, d = fp16(rat(...)) */
    drift_ggml_q4_1_t wq[2];
    drift_ggml_q8_1_t aq[2];
    float xr[64];
    for (int b = 0; b < 2; b++) {
        wq[b].d = drift_ggml_fp32_to_fp16(0.0123f + 0.01f * (float)b);
        wq[b].m = drift_ggml_fp32_to_fp16(-0.0456f * (float)(b + 1));
        for (int j = 0; j < 16; j++) wq[b].qs[j] = (uint8_t)(((5 * j + 3 * b) % 16) | (((7 * j + b) % 16) << 4));
    }
    for (int i = 0; i < 64; i++) xr[i] = rat(41 * i + 9, 53, 8);
    quantize_row_q8_1(xr, aq, 64);
    float s;
    ggml_vec_dot_q4_1_q8_1(64, &s, 0, wq, 0, aq, 0, 1);
    fprintf(f, "\nq8_1_of_x d=%04x s=%04x d=%04x s=%04x", aq[0].d, aq[0].s, aq[1].d, aq[1].s);
    fprintf(f, "\nq8_1_qs");
    for (int b = 0; b < 2; b++)
        for (int j = 0; j < 32; j++) fprintf(f, " %d", aq[b].qs[j]);
    fprintf(f, "\nvec_dot_q4_1_q8_1 %a\n", (double)s);
    ggml_free(ctx);
}

/* The split-KV path as n threads run it: one query over 512 cells, ggml computed with nth
 * threads, the twin told the same nth. */
static int check_fattn_split(int nth)
{
    long bad = 0, n = 0;
    for (int t = 0; t < 20; t++) {
        struct ggml_context *ctx = new_ctx();
        const int nkv = 512, p0 = 250 + (int)(rnd() % 260);
        struct ggml_tensor *q = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 64, 1, 9);
        struct ggml_tensor *k = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, 64, nkv, 3);
        struct ggml_tensor *v = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, 64, nkv, 3);
        struct ggml_tensor *m = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, nkv, 1);
        for (int i = 0; i < 64 * 9; i++) ((float *)q->data)[i] = nrand() * 2;
        for (int i = 0; i < 64 * nkv * 3; i++) {
            ((uint16_t *)k->data)[i] = drift_ggml_fp32_to_fp16(nrand() * 2);
            ((uint16_t *)v->data)[i] = drift_ggml_fp32_to_fp16(nrand());
        }
        for (int c = 0; c < nkv; c++) ((uint16_t *)m->data)[c] = c <= p0 ? 0 : 0xfc00;
        struct ggml_tensor *o = ggml_flash_attn_ext(ctx, q, k, v, m, 0.125f, 0.0f, 0.0f);
        struct ggml_cgraph *gf = ggml_new_graph(ctx);
        ggml_build_forward_expand(gf, o);
        ggml_graph_compute_with_ctx(ctx, gf, nth);
        float out[64];
        for (int h = 0; h < 9; h++) {
            const uint16_t *kh = (uint16_t *)k->data + (size_t)64 * nkv * (h / 3);
            const uint16_t *vh = (uint16_t *)v->data + (size_t)64 * nkv * (h / 3);
            TW_FA_SPLIT(out, (float *)q->data + 64 * h, kh, vh, 64, 64, (size_t)(p0 + 1), (size_t)nkv, nth, 0.125f);
            for (int i = 0; i < 64; i++) bad += !same(out[i], ((float *)o->data)[64 * h + i]);
        }
        n++;
        ggml_free(ctx);
    }
    char name[64];
    snprintf(name, sizeof name, "flash_attn_ext split-KV (%d thr)", nth);
    return report(name, n, bad);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--write")) rec = fopen(argv[2], "w");
    ggml_cpu_init(); /* fills the fp16 -> fp32 table GGML_CPU_FP16_TO_FP32 reads */
    int fail = 0;
    fail |= check_fp16();
    fail |= check_quant();
    fail |= check_dots();
    fail |= check_graph_ops();
    fail |= check_fattn(0);
    fail |= check_fattn(1);
    fail |= check_fattn(2);
    fail |= check_mul_mat();
    for (int nth = 2; nth <= 8; nth += 3) fail |= check_fattn_split(nth);
    if (rec) {
        write_record(rec);
        fclose(rec);
    }
    return fail;
}
