/* loglog.c — growth laws fitted on log y (loglog.h). */
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

/* The line through (t_i, log y_i), centred (two passes: the means, then the centred sums), so
 * that t far from 0 loses no digits. */
static int logfit(drift_logfit_t *f, const double *x, const double *y, int n, int logx)
{
    double st = 0, sl = 0;
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (!(y[i] > 0) || !isfinite(y[i]) || !isfinite(x[i]) || (logx && !(x[i] > 0))) continue;
        st += logx ? log(x[i]) : x[i], sl += log(y[i]), m++;
    }
    f->n = m, f->slope = f->intercept = f->rms = NAN;
    if (m < 2) return -1;
    const double mt = st / m, ml = sl / m;
    double stt = 0, stl = 0;
    for (int i = 0; i < n; i++) {
        if (!(y[i] > 0) || !isfinite(y[i]) || !isfinite(x[i]) || (logx && !(x[i] > 0))) continue;
        double dt = (logx ? log(x[i]) : x[i]) - mt;
        stt += dt * dt, stl += dt * (log(y[i]) - ml);
    }
    if (!(stt > 0)) return -1;
    f->slope = stl / stt, f->intercept = ml - f->slope * mt;
    double ss = 0;
    for (int i = 0; i < n; i++) {
        if (!(y[i] > 0) || !isfinite(y[i]) || !isfinite(x[i]) || (logx && !(x[i] > 0))) continue;
        double r = log(y[i]) - (f->intercept + f->slope * (logx ? log(x[i]) : x[i]));
        ss += r * r;
    }
    f->rms = sqrt(ss / m);
    return 0;
}

int drift_loglin_fit(drift_logfit_t *f, const double *x, const double *y, int n) { return logfit(f, x, y, n, 0); }

int drift_loglog_fit(drift_logfit_t *f, const double *x, const double *y, int n) { return logfit(f, x, y, n, 1); }
