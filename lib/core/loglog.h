/* loglog.h — the growth exponent of y in x: the least-squares slope of log y against log x. */
#ifndef DRIFT_LOGLOG_H
#define DRIFT_LOGLOG_H

/* Over the points with finite y > 0 (natural logarithms); NaN with fewer than two. */
double drift_loglog_slope(const double *x, const double *y, int n);

#endif
