/* format_probe.c — constants and spacing through the rounder (format_probe.h). */
#include "format_probe.h"
#include "drift.h"

#include <float.h>
#include <math.h>

int drift_format_probe_constants(drift_format_consts_t *k, drift_format_t f)
{
    const drift_format_info_t *fi = drift_format_info(f);
    const drift_round_opts_t ru = {DRIFT_RU, 0, 0}, rd = {DRIFT_RD, 0, 0};
    k->bits = fi->bits;
    k->p = fi->p;
    k->emin = fi->emin;
    k->emax = fi->emax;
    k->has_inf = fi->has_inf;
    k->eps = drift_round(nextafter(1.0, 2.0), f, &ru, 0) - 1.0; /* the next member above 1 */
    k->u = k->eps / 2;
    k->min_sub = drift_round(DBL_TRUE_MIN, f, &ru, 0);
    k->max_fin = drift_round(DBL_MAX, f, &rd, 0); /* RD never overflows upward */
    k->min_norm = fi->min_normal;
    /* p log10(2): the number of decimal digits p bits are worth (log10(2) to 17 digits). */
    k->digits = fi->p * 0.30102999566398120;
    int ok = k->eps == fi->epsilon && k->u == fi->unit_roundoff && k->min_sub == fi->min_subnormal &&
             k->max_fin == fi->max_finite &&
             /* u is the half-way point: 1 + u ties back to 1, anything above goes to 1 + eps */
             drift_rne(1.0 + k->u, f) == 1.0 && drift_rne(nextafter(1.0 + k->u, 2.0), f) == 1.0 + k->eps &&
             drift_classify(k->min_norm, f) == DRIFT_CLASS_NORMAL &&
             drift_classify(drift_round(nextafter(k->min_norm, 0.0), f, &rd, 0), f) == DRIFT_CLASS_SUBNORMAL;
    return ok ? 0 : DRIFT_ERANGE;
}

int drift_format_nbinades(drift_format_t f)
{
    const drift_format_info_t *fi = drift_format_info(f);
    return fi->emax - fi->emin + fi->p + 1;
}

int drift_format_probe_spacing(drift_binade_t *s, drift_format_t f)
{
    const drift_format_info_t *fi = drift_format_info(f);
    const drift_round_opts_t ru = {DRIFT_RU, 0, 0};
    int n = 0;
    for (int e = fi->emin - (fi->p - 1); e <= fi->emax; e++, n++) {
        double x = ldexp(1.0, e);
        double next = drift_round(nextafter(x, INFINITY), f, &ru, 0);
        s[n].e = e;
        s[n].x = x;
        s[n].x_end = e == fi->emax ? fi->max_finite : ldexp(1.0, e + 1);
        s[n].spacing = next - x; /* exact: two neighbours of f, one spacing apart */
        s[n].subnormal = e < fi->emin;
        if (s[n].spacing != drift_ulp(x, f)) return DRIFT_ERANGE;
    }
    return n;
}
