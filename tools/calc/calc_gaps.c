/* calc_gaps.c — `drift-calc gaps LOGITS`: for each row of a logits dump, the top-2 gap, its
 * size in ulps of fp32, bf16 and fp16 at the top-1 logit, and whether storing the logits in
 * that format (the output rounding of a kernel that returns F) can flip the argmax.
 *
 * The rule. Let a >= b be the row's two largest logits (top-1, top-2; among equal values the
 * lower token id ranks first, as torch.argmax), g = a - b, and u = ulp_F(a), the spacing of F
 * in a's binade (drift_ulp). Rounding to nearest is monotone, so rnd(a) >= rnd(b): storing in F
 * never reverses the two, it can only merge them, rnd(a) == rnd(b), a tie that argmax gives to
 * the lower id. Two reals round to one member m of F only if both lie in m's rounding
 * interval; in a's binade that interval is u wide (closed, exactly u, when m is even, since a
 * tie goes to the even neighbour; narrower at a binade's lower edge). Hence:
 *   g >  u   rounding to F cannot merge them: can_flip = 0;
 *   g <= u   it can, depending on where the two lie: can_flip = 1;
 * and beyond F's range both may round to inf, so can_flip is also 1 when b rounds to inf.
 * Whether it does for these numbers is flips_F: every logit of the row rounded to F
 * (nearest-even), then argmax with ties to the lowest id; flips_F = 1 when that is not the
 * top-1 (a third token with a lower id can win a tie too). The gap test is exact: g is
 * compared with u as the exact difference of two doubles (TwoSum), never a rounded one.
 *
 * LOGITS: shape (N, V) as a .npy array or a CSV of N rows of V values, or (V,) for one row
 * (one value per line); V >= 2, every logit finite. CSV on stdout, one row per input row:
 *   row,V,tie,top1,top2,v1_hex,v1,v2_hex,v2,gap_hex,gap,
 *   then for F = fp32, bf16, fp16: ulp_F (%a), gap_ulps_F (g / u), can_flip_F, flips_F
 * tie = 1 when the two largest are equal (g = 0). Bad input: one line on stderr, exit 2. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calc.h"
#include "calc_input.h"
#include "cli.h"
#include "output.h"
#include "drift.h"
#include "format.h"

static const drift_format_t GAP_FORMATS[] = {DRIFT_FP32, DRIFT_BF16, DRIFT_FP16};
#define NGAP (int)(sizeof GAP_FORMATS / sizeof GAP_FORMATS[0])

static void usage(FILE *to)
{
    fprintf(to, "usage: drift-calc gaps LOGITS\n"
                "  LOGITS   a logits dump, shape (N, V): a NumPy .npy array (float64/32/16) or a CSV of N rows of V\n"
                "           values (or one value per line: one row); '-' reads stdin\n"
                "prints CSV, one row per row of LOGITS:\n"
                "  row,V,tie,top1,top2,v1_hex,v1,v2_hex,v2,gap_hex,gap, and for F = fp32, bf16, fp16:\n"
                "  ulp_F,gap_ulps_F,can_flip_F,flips_F\n"
                "top1, top2: the two largest logits (ties to the lower id), v1 >= v2 their values, gap = v1 - v2;\n"
                "ulp_F: the spacing of F at |v1|; gap_ulps_F = gap / ulp_F.\n"
                "can_flip_F = 1 when gap <= ulp_F (or v2 overflows F): storing the logits in F can round both to one\n"
                "  value, a tie that argmax gives to the lower id. Rounding to nearest is monotone, so it never\n"
                "  reverses them; two values merge only inside one rounding interval, at most ulp_F wide (exactly\n"
                "  ulp_F, closed, around an even member), so a gap above ulp_F is safe and one at or below it is not.\n"
                "flips_F = 1 when it does for these numbers: the argmax of the row rounded to F is not top1.\n");
}

/* g = a - b (a >= b) compared with u exactly: 1 when a - b <= u. TwoSum gives s + t = a - b
 * exactly (Knuth; no overflow for finite logits of one row below 2^1023). */
static int gap_at_most(double a, double b, double u)
{
    double s = a - b, bb = s - a, t = (a - (s - bb)) + (-b - bb);
    return s < u || (s == u && t <= 0);
}

int calc_gaps(int argc, char **argv)
{
    const char *file = NULL;
    if (drift_args_parse(NULL, 0, &file, 1, argc, argv, usage) != 1)
        drift_die("expected one LOGITS file (or - for stdin), got none (usage: gaps LOGITS)");
    double *x;
    size_t n;
    calc_shape_t sh;
    if (calc_read_array(file, DRIFT_FP64, &x, &n, &sh) != 0) return 2;
    char shape[96];
    calc_shape_print(shape, sizeof shape, &sh);
    size_t N, V;
    if (sh.ndim == 1)
        N = 1, V = sh.dim[0];
    else if (sh.ndim == 2)
        N = sh.dim[0], V = sh.dim[1];
    else
        drift_die("LOGITS: %s has shape %s (accepted: (N, V), N rows of V logits, or (V,))", file, shape);
    if (V < 2) drift_die("LOGITS: %s has shape %s: V = %zu (accepted: V >= 2 logits per row)", file, shape, V);
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            drift_die("LOGITS: %s: row %zu, token %zu is %g (accepted: finite logits)", file, i / V, i % V, x[i]);

    printf("row,V,tie,top1,top2,v1_hex,v1,v2_hex,v2,gap_hex,gap");
    for (int k = 0; k < NGAP; k++) {
        const char *f = drift_format_name(GAP_FORMATS[k]);
        printf(",ulp_%s,gap_ulps_%s,can_flip_%s,flips_%s", f, f, f, f);
    }
    printf("\n");
    for (size_t r = 0; r < N; r++) {
        const double *l = x + r * V;
        size_t t1 = 0, t2 = 1;
        if (l[1] > l[0]) t1 = 1, t2 = 0;
        for (size_t i = 2; i < V; i++) {
            if (l[i] > l[t1])
                t2 = t1, t1 = i;
            else if (l[i] > l[t2])
                t2 = i;
        }
        double a = l[t1], b = l[t2], gap = a - b;
        printf("%zu,%zu,%d,%zu,%zu,%a,%.17g,%a,%.17g,%a,%.17g", r, V, a == b, t1, t2, a, a, b, b, gap, gap);
        for (int k = 0; k < NGAP; k++) {
            drift_format_t f = GAP_FORMATS[k];
            double u = drift_ulp(a, f), rb = drift_rne(b, f);
            int can = gap_at_most(a, b, u) || isinf(rb);
            size_t best = 0; /* argmax of the row stored in F, ties to the lowest id */
            double bv = drift_rne(l[0], f);
            for (size_t i = 1; i < V; i++) {
                double v = drift_rne(l[i], f);
                if (v > bv) bv = v, best = i;
            }
            printf(",%a,%.17g,%d,%d", u, gap / u, can, best != t1);
        }
        printf("\n");
    }
    free(x);
    return drift_stdout_close_check(); /* a failed write is one line naming its cause, status 2 */
}
