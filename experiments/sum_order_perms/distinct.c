/* distinct.c — distinct values with counts (distinct.h). */
#include "distinct.h"

#include <string.h>

int drift_distinct(drift_distinct_t *b, const double *x, long n)
{
    int nb = 0;
    for (long r = 0; r < n; r++) {
        double v = x[r];
        int lo = 0, hi = nb;
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (b[mid].v < v)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < nb && b[lo].v == v) {
            b[lo].count++;
        } else {
            memmove(&b[lo + 1], &b[lo], (size_t)(nb - lo) * sizeof *b);
            b[lo] = (drift_distinct_t){v, 1};
            nb++;
        }
    }
    return nb;
}
