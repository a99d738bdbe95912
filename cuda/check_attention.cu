// check_attention.cu — GPU attention against drift_attention, bit for bit (law 3), for the
// subset of drift_cuda_attention.h: kernels standard, flash:64,64, flash:16,32, splitkv:4,
// splitkv:3,16 and splitkv:size=128,64; operands, P and output in fp32, bf16 and fp16 (fp32
// output too); l = l alpha + r with fma and without; head_dim 64 and 7 (GQA: 4 heads over 2
// KV heads); three shapes: decode (1 query over 300 keys), causal prefill (130 queries over
// their 130 keys) and a non-causal chunk of 5 queries over 77 keys with one key in 9 masked.
// Inputs from Philox (seed 1), keys with a few large
// logits so the running max moves between tiles. One row per configuration: PASS, or FAIL
// with the first mismatch. It reports how many calls the host had to decide (an exp or log
// the device could not round with certainty: expected 0).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_common.h"
#include "drift_cuda_attention.h"

extern "C" {
#include "drift.h"
#include "philox.h"
}

static void fill(double *x, size_t n, double sd, uint32_t point)
{
    drift_stream_t s;
    drift_stream_init(&s, 1, drift_fnv1a32("check_attention"), point, 0);
    for (size_t i = 0; i < n; i++) {
        x[i] = sd * drift_stream_normal(&s);
        if (drift_stream_below(&s, 50) == 0) x[i] *= 8; // a few large logits: the max moves
    }
}

struct shape_t {
    const char *name;
    size_t nq, L, q_pos;
    int causal, masked;
};

int main(void)
{
    if (skip_without_device("check_attention")) return 0;
    char desc[256];
    drift_cuda_describe(desc, sizeof desc);
    printf("check_attention: %s\n\n", desc);
    static const char *kernels[] = {
        "standard", "flash:64,64", "flash:16,32", "splitkv:4", "splitkv:3,16", "splitkv:size=128,64"};
    static const drift_format_t fmts[] = {DRIFT_FP32, DRIFT_BF16, DRIFT_FP16};
    static const shape_t shapes[] = {
        {"decode", 1, 300, 299, 1, 0}, {"prefill", 130, 130, 0, 1, 0}, {"chunk", 5, 77, 0, 0, 1}};
    static const int dims[] = {64, 7};
    const int heads = 4, kv_heads = 2;
    size_t host_calls_all = 0;
    for (size_t di = 0; di < 2; di++)
        for (size_t si = 0; si < 3; si++) {
            const shape_t &sh = shapes[si];
            int d = dims[di];
            size_t nqv = sh.nq * heads * d, nkv = sh.L * kv_heads * d;
            double *q = (double *)malloc(nqv * sizeof(double)), *k = (double *)malloc(nkv * sizeof(double));
            double *v = (double *)malloc(nkv * sizeof(double)), *want = (double *)malloc(nqv * sizeof(double));
            double *got = (double *)malloc(nqv * sizeof(double));
            unsigned char *mask = (unsigned char *)malloc(sh.L);
            fill(q, nqv, 1.0, (uint32_t)(10 * di + si));
            fill(k, nkv, 1.0, (uint32_t)(100 + 10 * di + si));
            fill(v, nkv, 1.0, (uint32_t)(200 + 10 * di + si));
            for (size_t j = 0; j < sh.L; j++) mask[j] = j % 9 != 4;
            for (size_t f = 0; f < 3; f++)
                for (int out32 = 0; out32 <= 1; out32++) {
                    if (out32 && fmts[f] == DRIFT_FP32) continue;
                    drift_kv_cache_t kv;
                    drift_kv_format_t kf = {DRIFT_KV_FLOAT, fmts[f]};
                    char err[DRIFT_ERRMSG_MAX];
                    if (drift_kv_init(&kv, kv_heads, d, sh.L, &kf, err, sizeof err) ||
                        drift_kv_append(&kv, k, v, sh.L, err, sizeof err)) {
                        row("FAIL", "cache: %s", err);
                        continue;
                    }
                    for (size_t ki = 0; ki < sizeof kernels / sizeof *kernels; ki++)
                        for (int fma = 0; fma <= 1; fma++) {
                            if (!fma && ki == 0) continue; // l * alpha + r: tiled kernels only
                            drift_attn_opts_t o = drift_attn_opts(heads, kv_heads, d, fmts[f]);
                            if (drift_attn_kernel_parse(&o.kernel, kernels[ki], NULL, 0)) {
                                row("FAIL", "%s: kernel refused", kernels[ki]);
                                continue;
                            }
                            o.causal = sh.causal;
                            o.softmax_acc.fma = fma;
                            if (out32) o.pv.out = DRIFT_FP32;
                            const unsigned char *m = sh.masked ? mask : NULL;
                            char label[160];
                            snprintf(label, sizeof label, "%-20s %-4s out %-4s %-5s d=%-2d %-7s", kernels[ki],
                                drift_format_name(fmts[f]), drift_format_name(o.pv.out), fma ? "fma" : "nofma", d,
                                sh.name);
                            int rc_cpu = drift_attention(want, q, sh.nq, sh.q_pos, &kv, m, &o, err, sizeof err);
                            size_t host_calls = 0;
                            int rc = drift_cuda_attention(got, q, sh.nq, sh.q_pos, &kv, m, &o, 0, &host_calls);
                            host_calls_all += host_calls;
                            size_t first = 0, bad;
                            if (rc_cpu)
                                row("FAIL", "%s  CPU twin refused: %s", label, err);
                            else if (rc == DRIFT_EUNSUPPORTED)
                                row("SKIP", "%s  %s", label, drift_cuda_message());
                            else if (rc)
                                row("FAIL", "%s  %s", label, drift_cuda_message());
                            else if ((bad = mismatches(got, want, nqv, &first)))
                                row("FAIL", "%s  %zu of %zu differ; first [q %zu, h %zu, c %zu]: gpu %a cpu %a", label,
                                    bad, nqv, first / ((size_t)heads * d), first / d % heads, first % d, got[first],
                                    want[first]);
                            else
                                row("PASS", "%s  %zu outputs bit-identical", label, nqv);
                        }
                    drift_kv_free(&kv);
                }
            free(q), free(k), free(v), free(want), free(got), free(mask);
        }
    row("INFO", "calls decided on the host (an undecidable exp or log): %zu", host_calls_all);
    return finish("check_attention");
}
