/* format_probe.h — a format's constants and spacing measured through the rounder (format.h's
 * drift_round in directed modes) and checked against format.h's table: two independent
 * descriptions of a format that must agree before a program prints either. */
#ifndef DRIFT_FORMAT_PROBE_H
#define DRIFT_FORMAT_PROBE_H

#include "drift.h"
#include "format.h"

typedef struct {
    int bits, p, emin, emax, has_inf;
    double u, eps, min_sub, min_norm, max_fin, digits; /* digits: p log10(2) */
} drift_format_consts_t;

typedef struct {
    int e;                    /* the binade [2^e, 2^(e+1)) (its top end x_end) */
    double x, x_end, spacing; /* spacing: (next member above x) - x */
    int subnormal;
} drift_binade_t;

/* The constants of f; 0, or DRIFT_ERANGE when a measured constant disagrees with format.h. */
DRIFT_MUST_CHECK int drift_format_probe_constants(drift_format_consts_t *k, drift_format_t f);
/* How many binades drift_format_probe_spacing fills for f at most. */
int drift_format_nbinades(drift_format_t f);
/* One entry per binade, from the smallest subnormal's to the top one; the count, or
 * DRIFT_ERANGE when a measured spacing disagrees with drift_ulp. */
DRIFT_MUST_CHECK int drift_format_probe_spacing(drift_binade_t *s, drift_format_t f);

#endif
