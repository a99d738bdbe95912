/* cluster_rate.c — clustered rates (cluster_rate.h). */
#include "cluster_rate.h"
#include "stats.h"

#include <math.h>

void drift_clustered_rate(double *rate, double *lo, double *hi, const long *ch_row, long R, long draws)
{
    double m = 0;
    for (long r = 0; r < R; r++) m += (double)ch_row[r] / draws;
    m = R > 0 ? m / R : NAN;
    *rate = m;
    *lo = *hi = NAN;
    if (!(R > 0)) return;
    /* Wilson's score interval for the mean fraction m over the R units, the independent
     * samples: n = R, p = m (k = m R need not be an integer). Unlike mean +- z sd / sqrt(R) it
     * stays inside [0, 1] and never gives one event a narrower interval than none. */
    const double z = DRIFT_Z95, n = (double)R, z2 = z * z;
    const double den = 1 + z2 / n, ctr = (m + z2 / (2 * n)) / den;
    const double half = z * sqrt(m * (1 - m) / n + z2 / (4 * n * n)) / den;
    *lo = fmax(0, ctr - half);
    *hi = fmin(1, ctr + half);
    if (m == 0) *lo = 0; /* exactly, not ctr - half rounded */
}
