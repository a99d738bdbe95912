/* loglog.c — growth exponents (loglog.h). */
#include "loglog.h"

#include <math.h>

double drift_loglog_slope(const double *x, const double *y, int n)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (!(y[i] > 0) || !isfinite(y[i])) continue;
        double lx = log(x[i]), ly = log(y[i]);
        sx += lx, sy += ly, sxx += lx * lx, sxy += lx * ly, m++;
    }
    if (m < 2) return NAN;
    return (m * sxy - sx * sy) / (m * sxx - sx * sx);
}
