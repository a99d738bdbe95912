/* cluster_rate.c — clustered rates (cluster_rate.h). */
#include "cluster_rate.h"
#include "stats.h"

#include <math.h>

void drift_clustered_rate(double *rate, double *lo, double *hi, const long *ch_row, long R, long draws)
{
    double m = 0, v = 0;
    for (long r = 0; r < R; r++) m += (double)ch_row[r] / draws;
    m /= R;
    for (long r = 0; r < R; r++) {
        double d = (double)ch_row[r] / draws - m;
        v += d * d;
    }
    double se = R > 1 ? sqrt(v / (R - 1) / R) : NAN;
    *rate = m;
    *lo = fmax(0, m - DRIFT_Z95 * se);
    *hi = fmin(1, m + DRIFT_Z95 * se);
    if (v == 0) /* every row alike (all 0, say): Wilson over the R rows, the independent units */
        drift_wilson(lo, hi, (long)llround(m * R), R, DRIFT_Z95);
}
