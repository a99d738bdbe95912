/* ggml_cpu_fattn.c — flash attention as ggml-cpu computes it for fp16 K and V (AVX2 build).
 * See ggml_cpu.h for the contract. */
#include "ggml_cpu.h"

#include <math.h>
#include <stdlib.h>

#define FA_MAX_D 256

/* ggml-cpu/ops.cpp: ggml_compute_forward_flash_attn_ext_f16_one_chunk, V of type F16, no
 * softcap, no ALiBi (slope 1), no sinks, the whole KV range in one chunk:
 * Q is converted to fp16 (K's vec_dot_type, ggml_cpu_fp32_to_fp16: nearest even); for each
 * key in order, s = ggml_vec_dot_f16(k, q) * scale (+ mask 0); online softmax with the fp16
 * accumulator VKQ16: on a new maximum M, ms = expf(Mold - M) and VKQ16 = fp16(VKQ16 * ms)
 * (ggml_vec_scale_f16), vs = 1; otherwise vs = expf(s - M); then
 * VKQ16 = fp16(fma(v, vs, VKQ16)) (ggml_vec_mad_f16) and S = S*ms + vs (which GCC contracts
 * into fma(S, ms, vs)); finally out = float(VKQ16) * (1/S) (ggml_vec_scale_f32). */
void drift_ggml_flash_attn_row(float *out, const float *q, const uint16_t *k, const uint16_t *v,
                               size_t ld, size_t d, const int *kv_idx, size_t nkv, float scale) {
    uint16_t qh[FA_MAX_D];
    uint16_t acc[FA_MAX_D];
    if (d > FA_MAX_D) {
        abort(); /* the contract caps the head size; a llama head is 64 or 128 */
    }
    drift_ggml_fp32_to_fp16_row(qh, q, d);
    for (size_t i = 0; i < d; i++) {
        acc[i] = 0;
    }
    float S = 0.0f, M = -INFINITY;
    for (size_t t = 0; t < nkv; t++) {
        const size_t ic = (size_t)kv_idx[t];
        float s = drift_ggml_vec_dot_f16(d, k + ic * ld, qh);
        s = s * scale;
        s += 0.0f; /* the mask value of an admitted key */
        const float Mold = M;
        float ms = 1.0f, vs = 1.0f;
        if (s > M) {
            M = s;
            ms = expf(Mold - M);
            for (size_t i = 0; i < d; i++) {
                acc[i] = drift_ggml_fp32_to_fp16(drift_ggml_fp16_to_fp32(acc[i]) * ms);
            }
        } else {
            vs = expf(s - M);
        }
        const uint16_t *vr = v + ic * ld;
        for (size_t i = 0; i < d; i++) {
            acc[i] = drift_ggml_fp32_to_fp16(fmaf(drift_ggml_fp16_to_fp32(vr[i]), vs, drift_ggml_fp16_to_fp32(acc[i])));
        }
        S = fmaf(S, ms, vs);
    }
    const float S_inv = S == 0.0f ? 0.0f : 1.0f / S;
    for (size_t i = 0; i < d; i++) {
        out[i] = drift_ggml_fp16_to_fp32(acc[i]) * S_inv;
    }
}
