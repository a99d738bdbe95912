// check_convert.cu — the GPU's format conversions against the CPU model, value by value.
//
// For every (format, mode) with a GPU conversion (see drift_cuda.h) and every kernel
// version, converts a few million doubles on the GPU and compares each result bit for bit
// with the CPU reference drift_round (lib/core/format.c, default options: subnormals kept,
// IEEE overflow). NaN equals NaN; +0 and -0 differ. Prints a pass/fail table; exit status
// 0 when every row passes (or when there is no device: "no CUDA device: skipped"), 1 when
// a row fails, 2 when CUDA itself fails.
//
// Inputs: specials; each format's boundary neighbourhoods (half the smallest subnormal,
// the smallest subnormal, the smallest normal, the largest finite, the overflow threshold,
// 2^(emax+1)) in steps of an eighth of the local spacing and runs of adjacent doubles;
// every fp16 and bf16 value with its midpoints and the doubles next to them (every tie
// for those two formats); random fp32 words (what tensor cores see: tf32 conversion of
// fp32 data); random doubles across the exponent range with near-tie fraction patterns.
// All random numbers come from Philox (seed 1), so every run checks the same values.
//
// Kernel 3 (the fp32-input instructions: __float2half_r?, __float2bfloat16_r?,
// cvt.rna.tf32.f32, __nv_cvt_float_to_fp8) runs on a stratified sample of the fp32 words:
// every one of the 65536 upper halves (sign, exponent, top 7 fraction bits: every binade and
// every fp8 rounding position) combined with 256 lower halves: the 18 patterns around the
// rounding positions of fp16/tf32 (bit 12) and bf16 (bit 15) — 0000 0001 0fff 1000 1001 17ff
// 1800 1fff 2000 7fff 8000 8001 bfff c000 efff f000 f001 ffff — and 238 Philox words.
// That is 16,777,216 words (1/256 of all), NaNs and infinities included. fp8 saturation
// (__NV_SATFINITE) is checked against drift_round with saturate = 1.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_common.h"
#include "drift_cuda.h"

extern "C" {
#include "drift.h"
#include "philox.h"
}

// ---- CPU reference --------------------------------------------------------------------

static void convert_cpu(double *out, const double *in, size_t n, drift_format_t f, const drift_round_opts_t *o)
{
    for (size_t i = 0; i < n; i++) out[i] = drift_round(in[i], f, o, 0);
}

// ---- inputs ---------------------------------------------------------------------------

typedef struct {
    double *v;
    size_t n, cap;
} vec_t;

static void push(vec_t *s, double x)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 1 << 16;
        double *p = (double *)realloc(s->v, s->cap * sizeof *p);
        if (!p) {
            fprintf(stderr, "check_convert: out of memory\n");
            exit(2);
        }
        s->v = p;
    }
    s->v[s->n++] = x;
}

static void push_pm(vec_t *s, double x)
{
    push(s, x);
    push(s, -x);
}

static void push_near(vec_t *s, double x)
{
    push_pm(s, x);
    push_pm(s, nextafter(x, 0));
    push_pm(s, nextafter(x, INFINITY));
}

static void build_inputs(vec_t *s)
{
    double specials[] = {0.0, INFINITY, NAN, 1.0, 0.1, 1.0 / 3, 65504, 65520, 448, 464, 57344, 61440, 1e-8, 0x1p-24,
        1 + 0x1p-11 + 0x1p-40, 0x1.002p+0, 3.4028234663852886e38, 1e300, 1e-300, 0x1p-1074, 0x1p-1022};
    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++) push_near(s, specials[i]);

    for (int f = 0; f < DRIFT_NFORMATS; f++) {
        const drift_format_info_t *fi = drift_format_info((drift_format_t)f);
        double top_gap = ldexp(1.0, fi->emax - fi->p + 1);
        double b[] = {fi->min_subnormal / 2, fi->min_subnormal, fi->min_normal, fi->max_finite,
            fi->max_finite + top_gap / 2, ldexp(1.0, fi->emax) * 2};
        for (size_t i = 0; i < sizeof b / sizeof b[0]; i++) {
            if (!isfinite(b[i])) continue;
            double g = (i < 3 ? fi->min_subnormal : top_gap) / 8;
            for (int j = -40; j <= 40; j++)
                if (b[i] + j * g > 0 && isfinite(b[i] + j * g)) push_near(s, b[i] + j * g);
        }
    }

    // every fp16 and bf16 value, its midpoint with the next value, and their neighbours
    drift_format_t small[2] = {DRIFT_FP16, DRIFT_BF16};
    for (int k = 0; k < 2; k++)
        for (uint64_t bits = 0; bits < 0x8000; bits++) {
            double v = drift_decode(bits, small[k]), w = drift_decode(bits + 1, small[k]);
            if (!isfinite(v)) continue;
            push_pm(s, v);
            if (isfinite(w)) push_near(s, (v + w) / 2); // exact: p + 1 bits
        }

    drift_stream_t st;
    drift_stream_init(&st, 1, drift_fnv1a32("check_convert"), 0, 0);
    for (int i = 0; i < 1 << 20; i++) { // random fp32 words
        uint32_t w = drift_stream_u32(&st);
        float x;
        memcpy(&x, &w, sizeof x);
        push(s, (double)x);
    }
    for (int i = 0; i < 1 << 20; i++) { // random doubles, exponents -160 .. 140, near-ties
        uint64_t frac = ((uint64_t)drift_stream_u32(&st) << 32 | drift_stream_u32(&st)) & 0x000fffffffffffffull;
        uint32_t kind = drift_stream_u32(&st) & 7;
        static const int cuts[4] = {29, 42, 45, 49}; // dropped bits for fp32, fp16/tf32, bf16, fp8e4m3
        int cut = cuts[kind & 3];
        if (kind < 4) frac = (frac & ~((1ull << cut) - 1)) | (1ull << (cut - 1)); // an exact tie at that cut
        int e = -160 + (int)drift_stream_below(&st, 301);
        uint64_t word = (uint64_t)(drift_stream_u32(&st) & 1) << 63 | (uint64_t)(e + 1023) << 52 | frac;
        double x;
        memcpy(&x, &word, sizeof x);
        push(s, x);
    }
}

// The stratified fp32 sample of kernel 3 (see the header comment).
static void build_f32_sample(vec_t *s)
{
    static const uint16_t fixed[18] = {0x0000, 0x0001, 0x0fff, 0x1000, 0x1001, 0x17ff, 0x1800, 0x1fff, 0x2000, 0x7fff,
        0x8000, 0x8001, 0xbfff, 0xc000, 0xefff, 0xf000, 0xf001, 0xffff};
    uint16_t lo[256];
    drift_stream_t st;
    drift_stream_init(&st, 1, drift_fnv1a32("check_convert.f32"), 0, 0);
    for (int i = 0; i < 256; i++) lo[i] = i < 18 ? fixed[i] : (uint16_t)drift_stream_u32(&st);
    for (uint32_t hi = 0; hi < 65536; hi++)
        for (int j = 0; j < 256; j++) {
            uint32_t w = hi << 16 | lo[j];
            float x;
            memcpy(&x, &w, sizeof x);
            push(s, (double)x);
        }
}

// ---- main -----------------------------------------------------------------------------

int main(void)
{
    if (skip_without_device("check_convert")) return 0;
    char desc[256];
    drift_cuda_describe(desc, sizeof desc);
    printf("check_convert: GPU conversions vs the CPU model (drift_round)\n%s\n", desc);

    vec_t in = {NULL, 0, 0}, f32 = {NULL, 0, 0};
    build_inputs(&in);
    build_f32_sample(&f32);
    size_t nmax = in.n > f32.n ? in.n : f32.n;
    double *gpu = (double *)malloc(nmax * sizeof(double)), *cpu = (double *)malloc(nmax * sizeof(double));
    if (!gpu || !cpu) {
        fprintf(stderr, "check_convert: out of memory\n");
        return 2;
    }
    printf("kernels 1, 2: %zu double inputs; kernel 3: %zu fp32 words (stratified)\n\n", in.n, f32.n);
    printf("%-8s %-8s %-4s %-3s %-6s %-38s %10s  %s\n", "verdict", "format", "mode", "sat", "kernel", "method",
        "mismatches", "first mismatch (input: gpu, cpu)");

    for (int f = 0; f < DRIFT_NFORMATS; f++)
        for (int m = 0; m < DRIFT_NMODES; m++)
            for (int sat = 0; sat <= 1; sat++)
                for (int k = 1; k <= DRIFT_CUDA_ROUND_KERNELS; k++) {
                    drift_format_t ff = (drift_format_t)f;
                    drift_round_opts_t o = {(drift_mode_t)m, 0, sat};
                    if (drift_cuda_check_round(NULL, NULL, 0, ff, &o, k)) continue; // no instruction anywhere
                    const vec_t *v = k == 3 ? &f32 : &in;
                    char label[96];
                    snprintf(label, sizeof label, "%-8s %-4s %-3s %-6d %-38s", drift_format_name(ff),
                        drift_mode_name(o.mode), sat ? "yes" : "no", k, drift_cuda_round_opts_method(ff, &o, k));
                    int sup = drift_cuda_round_opts_supported(ff, &o, k);
                    if (sup <= 0) {
                        row(sup < 0 ? "FAIL" : "SKIP", "%s %s", label, drift_cuda_message());
                        continue;
                    }
                    int rc = drift_cuda_round_opts(gpu, v->v, v->n, ff, &o, k);
                    if (rc) {
                        row("FAIL", "%s CUDA error %d: %s", label, rc, drift_cuda_message());
                        continue;
                    }
                    convert_cpu(cpu, v->v, v->n, ff, &o);
                    size_t first = 0, bad = mismatches(gpu, cpu, v->n, &first);
                    char example[160] = "";
                    if (bad) snprintf(example, sizeof example, "%a: %a, %a", v->v[first], gpu[first], cpu[first]);
                    row(bad ? "FAIL" : "PASS", "%s %10zu  %s", label, bad, example);
                }
    free(gpu);
    free(cpu);
    free(in.v);
    free(f32.v);
    return finish("check_convert");
}
