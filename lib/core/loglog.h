/* loglog.h — growth laws fitted by least squares on log y: the growth exponent of y in x (the
 * slope of log y against log x: y ~ x^p) and the growth factor per unit of x (the slope of
 * log y against x: y ~ a g^x). */
#ifndef DRIFT_LOGLOG_H
#define DRIFT_LOGLOG_H

#ifdef __cplusplus
extern "C" {
#endif

/* Over the points with finite y > 0 (natural logarithms); NaN with fewer than two. */
double drift_loglog_slope(const double *x, const double *y, int n);

/* A least-squares line through (t(x_i), log y_i), t(x) = x (exponential law) or log x (power
 * law), over the points with finite y > 0 (and x > 0 for the power law): log y ~ intercept +
 * slope t(x). rms: the root mean square of the residuals log y_i - (intercept + slope t(x_i))
 * (natural logarithms; exp(rms) is the typical factor between a point and the line); n: the
 * points fitted. */
typedef struct {
    double slope, intercept, rms;
    int n;
} drift_logfit_t;

/* y ~ exp(intercept) g^x with g = exp(slope): the growth factor per unit of x. 0, or -1 (fewer
 * than two points, or all at one x: the fields then NaN, n the points kept). */
int drift_loglin_fit(drift_logfit_t *f, const double *x, const double *y, int n);
/* y ~ exp(intercept) x^slope: the growth exponent. 0 or -1 as drift_loglin_fit. */
int drift_loglog_fit(drift_logfit_t *f, const double *x, const double *y, int n);

#ifdef __cplusplus
}
#endif

#endif
