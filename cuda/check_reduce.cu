// check_reduce.cu — GPU sums and dot products against drift_sum / drift_dot, bit for bit, in
// every deterministic order of order.h (law 3).
//
// For each order x kernel version x accumulator (fp32, fp64) x mode (rne rz ru rd) x operation
// (sum; dot with fma; dot without): batches of rows of lengths 0, 1, 2, 31, 32, 33, 1000 and
// 4097 (empty and short rows, a lane count, a block boundary, a long odd row), random values
// of the accumulator format with exponents spread over [-10, 10] and cancelling pairs. One row
// per configuration: PASS, or FAIL with the first mismatch (length, row, gpu, cpu).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_common.h"
#include "drift_cuda_reduce.h"

extern "C" {
#include "drift.h"
#include "format.h"
#include "order.h"
#include "philox.h"
}

static const size_t LENGTHS[] = {0, 1, 2, 31, 32, 33, 1000, 4097};
static const size_t BATCH = 16;

static void fill(double *x, size_t n, drift_format_t acc, uint32_t point)
{
    drift_stream_t s;
    drift_stream_init(&s, 1, drift_fnv1a32("check_reduce"), point, 0);
    for (size_t i = 0; i < n; i++) {
        double v = drift_stream_normal(&s) * ldexp(1.0, (int)drift_stream_below(&s, 21) - 10);
        if (acc == DRIFT_FP32) v = (float)v; // a value of the accumulator format
        x[i] = v;
        if (drift_stream_below(&s, 16) == 0 && i) x[i] = -x[i - 1];
    }
}

int main(void)
{
    if (skip_without_device("check_reduce")) return 0;
    char desc[256];
    drift_cuda_describe(desc, sizeof desc);
    printf("check_reduce: %s\nlengths 0 1 2 31 32 33 1000 4097, %zu rows each; seed 1\n\n", desc, BATCH);
    static const char *orders[] = {"seq", "rev", "pairwise", "blocked:1", "blocked:7", "blocked:64", "splitk:1",
        "splitk:5", "splitk:16", "splitk:3:tree", "splitk:16:tree", "warp:1", "warp:8", "warp:32", "warp:64",
        "warp:1024", "kahan", "neumaier"};
    static const drift_format_t accs[] = {DRIFT_FP32, DRIFT_FP64};
    static const drift_mode_t modes[] = {DRIFT_RNE, DRIFT_RZ, DRIFT_RU, DRIFT_RD};
    size_t maxn = 4097;
    double *a = (double *)malloc(BATCH * maxn * sizeof(double)), *b = (double *)malloc(BATCH * maxn * sizeof(double));
    double *got = (double *)malloc(BATCH * sizeof(double)), *want = (double *)malloc(BATCH * sizeof(double));
    for (size_t oi = 0; oi < sizeof orders / sizeof *orders; oi++) {
        drift_order_t o;
        if (drift_order_parse(&o, orders[oi])) {
            row("FAIL", "order %s refused", orders[oi]);
            continue;
        }
        int nk = drift_cuda_reduce_kernels(&o);
        for (int kernel = 1; kernel <= nk; kernel++) {
            if (o.kind == DRIFT_ORDER_WARP && kernel == 2 && o.param > 32) continue;
            for (size_t ai = 0; ai < 2; ai++)
                for (size_t mi = 0; mi < 4; mi++)
                    for (int op = 0; op < 3; op++) { // 0 sum, 1 dot fma, 2 dot nofma
                        drift_acc_t acc = {accs[ai], modes[mi], op != 2};
                        size_t bad = 0;
                        char first[200] = "";
                        int error = 0;
                        for (size_t li = 0; li < sizeof LENGTHS / sizeof *LENGTHS && !error; li++) {
                            size_t n = LENGTHS[li];
                            fill(a, BATCH * n, accs[ai], (uint32_t)(li * 2));
                            fill(b, BATCH * n, accs[ai], (uint32_t)(li * 2 + 1));
                            int rc = op == 0 ? drift_cuda_sum(got, a, n, BATCH, &o, &acc, kernel)
                                             : drift_cuda_dot(got, a, b, n, BATCH, &o, &acc, kernel);
                            if (rc) {
                                snprintf(first, sizeof first, "CUDA error %d: %s", rc, drift_cuda_message());
                                error = 1;
                                break;
                            }
                            for (size_t r = 0; r < BATCH; r++) {
                                int rc_cpu = op == 0 ? drift_sum(&want[r], a + r * n, n, &o, &acc)
                                                     : drift_dot(&want[r], a + r * n, b + r * n, n, NULL, &o, &acc);
                                if (rc_cpu && !error) snprintf(first, sizeof first, "CPU error %d", rc_cpu), error = 1;
                            }
                            size_t f = 0, m = mismatches(got, want, BATCH, &f);
                            if (m && !bad)
                                snprintf(
                                    first, sizeof first, "first: n=%zu row %zu: gpu %a, cpu %a", n, f, got[f], want[f]);
                            bad += m;
                        }
                        row(error || bad ? "FAIL" : "PASS", "%-3s %-15s k%d %-4s %-3s %-5s %s%s",
                            op == 0 ? "sum" : "dot", orders[oi], kernel, drift_format_name(accs[ai]),
                            drift_mode_name(modes[mi]),
                            op == 0   ? ""
                            : op == 1 ? "fma"
                                      : "nofma",
                            bad ? "mismatches; " : "", first);
                    }
        }
    }
    free(a), free(b), free(got), free(want);
    return finish("check_reduce");
}
