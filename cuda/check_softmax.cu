// check_softmax.cu — GPU softmax against drift_softmax, bit for bit (law 3), for the subset of
// drift_cuda_softmax.h: variants naive, safe, online, online:32, online:128 (fma and not);
// logits in fp32, bf16, fp16 with the output in the same format and in fp32; scale 1 and
// 1/8 (attention's 1/sqrt(64)); rows of 1, 7, 32, 1000 and 4097 logits (Philox, seed 1:
// normal x 4, one in 20 masked to -inf, row 0 fully masked, row 1 with a +30 spike that
// overflows naive fp16). One row per configuration: PASS, or FAIL with the first mismatch.
// It also reports how many rows the device left to the host (an undecidable exponential).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_common.h"
#include "drift_cuda_softmax.h"

extern "C" {
#include "drift.h"
#include "philox.h"
}

static void fill(double *x, size_t n, size_t batch, uint32_t point)
{
    drift_stream_t s;
    drift_stream_init(&s, 1, drift_fnv1a32("check_softmax"), point, 0);
    for (size_t r = 0; r < batch; r++)
        for (size_t i = 0; i < n; i++) {
            double v = 4 * drift_stream_normal(&s);
            if (r == 0 || drift_stream_below(&s, 20) == 0) v = -INFINITY;
            if (r == 1 && i == n / 2) v = 30;
            x[r * n + i] = v;
        }
}

int main(void)
{
    if (skip_without_device("check_softmax")) return 0;
    char desc[256];
    drift_cuda_describe(desc, sizeof desc);
    printf("check_softmax: %s\n\n", desc);
    static const char *variants[] = {"naive", "safe", "online", "online:32", "online:128"};
    static const drift_format_t ins[] = {DRIFT_FP32, DRIFT_BF16, DRIFT_FP16};
    static const size_t lengths[] = {1, 7, 32, 1000, 4097};
    const size_t batch = 64, nmax = 4097;
    double *x = (double *)malloc(batch * nmax * sizeof(double)), *got = (double *)malloc(batch * nmax * sizeof(double));
    double *want = (double *)malloc(nmax * sizeof(double));
    for (size_t v = 0; v < sizeof variants / sizeof *variants; v++)
        for (size_t f = 0; f < 3; f++)
            for (int out32 = 0; out32 <= 1; out32++)
                for (int fma = 0; fma <= 1; fma++)
                    for (int sc = 0; sc <= 1; sc++) {
                        if (fma == 0 && strncmp(variants[v], "online", 6)) continue; // fma matters for online only
                        drift_softmax_opts_t o = drift_softmax_opts(ins[f], DRIFT_FP32);
                        if (drift_softmax_parse(&o.variant, variants[v], NULL, 0)) {
                            row("FAIL", "softmax %s: variant refused", variants[v]);
                            continue;
                        }
                        o.out = out32 ? DRIFT_FP32 : ins[f];
                        o.acc.fma = fma;
                        o.scale = sc ? 0.125 : 1.0;
                        size_t bad = 0, host = 0;
                        char first[200] = "";
                        int error = 0;
                        for (size_t li = 0; li < 5 && !error; li++) {
                            size_t n = lengths[li], hr = 0;
                            fill(x, n, batch, (uint32_t)li);
                            int rc = drift_cuda_softmax(got, x, n, batch, &o, &hr);
                            if (rc) {
                                snprintf(first, sizeof first, "error %d: %s", rc, drift_cuda_message());
                                error = 1;
                                break;
                            }
                            host += hr;
                            for (size_t r = 0; r < batch; r++) {
                                if (drift_softmax(want, x + r * n, n, &o, NULL, 0)) {
                                    snprintf(first, sizeof first, "CPU softmax refused");
                                    error = 1;
                                    break;
                                }
                                size_t i0 = 0, m = mismatches(got + r * n, want, n, &i0);
                                if (m && !bad)
                                    snprintf(first, sizeof first, "first: n=%zu row %zu [%zu]: gpu %a, cpu %a", n, r,
                                        i0, got[r * n + i0], want[i0]);
                                bad += m;
                            }
                        }
                        row(error || bad ? "FAIL" : "PASS",
                            "softmax %-10s in %-4s out %-4s %-5s scale %-5g host rows %zu %s", variants[v],
                            drift_format_name(ins[f]), drift_format_name(o.out), fma ? "fma" : "nofma", o.scale, host,
                            first);
                    }
    free(x), free(got), free(want);
    return finish("check_softmax");
}
