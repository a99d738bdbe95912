/* cost_model.c — the bytes-and-FLOPs roofline of cost_model.h. */
#include "cost_model.h"
#include "cards.h"

#include <math.h>
#include <string.h>

#include "drift.h"

static const drift_device_perf_t DEV[] = {
    /* published dense peaks: V100 SXM2 125 TF fp16 TC, 15.7 TF fp32, 900 GB/s; A100 SXM 80GB
     * 312 TF bf16, 156 TF tf32, 19.5 TF fp32, 2039 GB/s; H100 SXM 989 TF bf16, 495 TF tf32,
     * 67 TF fp32, 3350 GB/s; B200 2250 TF bf16, 1100 TF tf32, 80 TF fp32, 8000 GB/s */
    /* sms: 0 here, filled from the card table (cards.h), the lab's one list of SM counts */
    {"v100", 0, 125e12, 0, 15.7e12, 900e9, 0},
    {"a100", 0, 312e12, 156e12, 19.5e12, 2039e9, 0},
    {"h100", 0, 989e12, 495e12, 67e12, 3350e9, 0},
    {"b200", 0, 2250e12, 1100e12, 80e12, 8000e9, 0},
};

int drift_device_perf(drift_device_perf_t *d, const char *name)
{
    drift_card_t c;
    if (!d || !name || drift_card_parse(&c, name) != DRIFT_OK) return DRIFT_EINVAL;
    for (size_t i = 0; i < sizeof DEV / sizeof *DEV; i++)
        if (!strcmp(c.name, DEV[i].name)) {
            *d = DEV[i];
            d->sms = c.sms;
            d->sm_bw = 4 * d->hbm / d->sms; /* the assumption of cost_model.h */
            return DRIFT_OK;
        }
    return DRIFT_EINVAL;
}

static double cdiv(double a, double b) { return ceil(a / b); }

int drift_cost_gemm(drift_cost_t *out, const drift_gemm_kernel_t *k, size_t M, size_t N, size_t K, drift_format_t in,
    int tensor_cores, const drift_device_perf_t *d)
{
    if (!out || !k || !d || !M || !N || !K || d->sms < 1) return DRIFT_EINVAL;
    const drift_format_info_t *fi = drift_format_info(in);
    if (!fi) return DRIFT_EINVAL;
    double bm = 128, bn = 128, S = 1;
    if (k->family == DRIFT_GEMM_TILED) bm = k->bm, bn = k->bn;
    if (k->family == DRIFT_GEMM_SPLITK) S = k->splits;
    double peak = d->fp32;
    if (tensor_cores) {
        peak = fi->p <= 11 ? d->tc16 : in == DRIFT_TF32 ? d->tc32 : 0;
        if (!(peak > 0)) return DRIFT_EINVAL;
    }
    double b_in = in == DRIFT_TF32 ? 4 : fi->bits / 8.0;
    double tm = cdiv((double)M, bm), tn = cdiv((double)N, bn), units = tm * tn * S;
    double active = fmin(units, d->sms), waves = cdiv(units, d->sms);
    double kslice = cdiv((double)K, S);
    memset(out, 0, sizeof *out);
    double bm_eff = fmin(bm, 16 * cdiv((double)M, 16));
    out->flops = units * 2 * bm_eff * bn * kslice;
    out->compute = waves * 2 * bm_eff * bn * kslice / (peak / d->sms);
    out->bytes = tn * (double)M * (double)K * b_in + tm * (double)K * (double)N * b_in + S * (double)M * (double)N * 4;
    if (S > 1) out->bytes += S * (double)M * (double)N * 4 + (double)M * (double)N * 4;
    out->memory = out->bytes / fmin(d->hbm, active * d->sm_bw);
    out->time = fmax(out->compute, out->memory);
    out->active = (int)active;
    out->memory_bound = out->memory >= out->compute;
    return DRIFT_OK;
}
