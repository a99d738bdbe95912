/* allreduce.c — tensor parallelism's all-reduce of P ranks' partial results, in the order of
 * a ring, a tree or rank by rank (model.h's drift_allreduce), each addition rounded to the
 * accumulator. */
#include "model.h"

#include <string.h>

#include "drift.h"
#include "format.h"

static const char *const AR_NAMES[DRIFT_NALLREDUCE] = {"ring", "tree", "rank"};

const char *drift_allreduce_name(drift_allreduce_t a) { return (unsigned)a < DRIFT_NALLREDUCE ? AR_NAMES[a] : "?"; }

int drift_allreduce_parse(drift_allreduce_t *a, const char *name)
{
    for (int i = 0; name && i < DRIFT_NALLREDUCE; i++)
        if (!strcmp(name, AR_NAMES[i])) return *a = (drift_allreduce_t)i, 0;
    return DRIFT_EINVAL;
}

static double ar_add(drift_format_t acc, double a, double b)
{
    return acc == DRIFT_FP32 ? (double)((float)a + (float)b) : drift_add(a, b, acc, DRIFT_RNE);
}

static double ar_tree(drift_format_t acc, const double *part, size_t stride, size_t idx, int lo, int n)
{
    if (n == 1) return part[(size_t)lo * stride + idx];
    int h = n / 2;
    return ar_add(acc, ar_tree(acc, part, stride, idx, lo, h), ar_tree(acc, part, stride, idx, lo + h, n - h));
}

/* Combine P partials (each MN in acc) into Y, rounded to out (model.h). */
int drift_allreduce(double *Y, const double *part, size_t MN, size_t MNv, int P, drift_allreduce_t how,
    drift_format_t acc, drift_format_t out)
{
    if (!Y || !part || P < 1 || MNv < MN || (unsigned)how >= DRIFT_NALLREDUCE) return DRIFT_EINVAL;
    size_t chunk = (MNv + (size_t)P - 1) / (size_t)P; /* the ring cuts the whole batch's buffer */
    for (size_t e = 0; e < MN; e++) {
        double s;
        if (how == DRIFT_ALLREDUCE_TREE) {
            s = ar_tree(acc, part, MN, e, 0, P);
        } else {
            int start = how == DRIFT_ALLREDUCE_RING ? (int)((e / chunk + 1) % (size_t)P) : 0;
            s = part[(size_t)start * MN + e];
            for (int t = 1; t < P; t++) s = ar_add(acc, s, part[(size_t)((start + t) % P) * MN + e]);
        }
        Y[e] = out == acc ? s : drift_rne(s, out);
    }
    return 0;
}
