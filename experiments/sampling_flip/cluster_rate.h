/* cluster_rate.h — a rate with a 95% interval clustered by unit: when the events of one unit
 * (the draws of one hidden state, which share its logits) are not independent, the units' own
 * fractions are the independent samples. */
#ifndef DRIFT_CLUSTER_RATE_H
#define DRIFT_CLUSTER_RATE_H

/* R units of `per` events each, count[r] of them positive: rate = mean of the fractions x_r,
 * interval = Wilson's score interval for that mean over the R units (n = R, the independent
 * samples; a conservative choice when the events of one unit are nearly independent). */
void drift_clustered_rate(double *rate, double *lo, double *hi, const long *count, long R, long per);

#endif
