/* calc_forecast.c — `drift-calc forecast` (./lab forecast --logits): rank the texts of a logits
 * dump by the risk that another deployment's greedy text parts from them.
 *
 *   drift-calc forecast (--pair ID [--data DIR] | --law L --scale S --pi P) [--tokens T] DUMP
 *
 * DUMP holds, for each text deployment A generated greedily, the top-k logits (k >= 2, any
 * order; more than two change nothing) of each step:
 *   - a NumPy .npy array of shape (P, T, K): P texts, T steps, K logits per step; a text that
 *     ended before T fills its remaining steps with NaN (every K of them); shape (T, K) is one
 *     text. `./lab run forecast --dump-logits FILE.npy` writes this layout.
 *   - a CSV of rows "text,step,logit_1,...,logit_K" (numbers only; '#' lines skipped): texts
 *     numbered in increasing order, the rows of one text together, its steps 0, 1, 2, ...
 * The law of the pair (lib/llm/forecast.h): --pair ID takes law, sigma or b, and pi of the row
 * ID of DIR/forecast_pairs.csv (a forecast run's output; DIR default data), or give them:
 * --law gauss|laplace, --scale (sigma for gauss, b for laplace, in logits), --pi (the share of
 * steps at which the two deployments' gaps differ at all). Per text: the top-2 gap of each of its
 * first T steps (all by default), the step risk pi P(delta < -gap), and
 * P(part within T) = 1 - prod (1 - risk). A dump carries no row counts, so the kernel classes of
 * a card pair are not used (pi of the same-kernel class).
 *
 * CSV on stdout, the riskiest first (ties in the dump's order):
 *   rank,text,steps,p_part,risk_step,risk_gap,risk_p,min_gap
 * Bad input (a shape other than (P, T, K) or (T, K), K < 2, a step with some but not all logits
 * NaN, a text that resumes after its end, CSV steps out of order, a pair not in the file, a
 * missing or invalid law): one line on stderr, exit 2. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calc.h"
#include "calc_input.h"
#include "calc_npy.h"
#include "cli.h"
#include "drift.h"
#include "forecast.h"
#include "output.h"

static void usage(FILE *to)
{
    fprintf(to, "usage: drift-calc forecast (--pair ID [--data DIR] | --law L --scale S --pi P) [--tokens T] DUMP\n"
                "  DUMP         deployment A's per-step top-k logits (k >= 2): a .npy array (P, T, K) (NaN past a\n"
                "               text's end; (T, K) for one text), or a CSV of rows text,step,logit_1,...,logit_K\n"
                "  --pair ID    the law of pair ID in DIR/forecast_pairs.csv (./lab run forecast; DIR default data)\n"
                "  --law L      gauss or laplace; --scale S its sd (gauss) or scale b (laplace), in logits;\n"
                "  --pi P       the share of steps at which the two deployments' gaps differ at all (0 < P <= 1)\n"
                "  --tokens T   forecast the first T steps of each text (default: all)\n"
                "prints CSV, riskiest first: rank,text,steps,p_part,risk_step,risk_gap,risk_p,min_gap\n"
                "  p_part = P(the other deployment's greedy text parts within the steps) = 1 - prod(1 - risk),\n"
                "  risk = pi P(delta < -gap) at each step, gap = A's top-1 minus top-2 logit there\n");
}

/* field k (0-based) of a CSV line, quotes ("" inside) removed, into buf; 0 or -1 when absent */
static int csv_field(char *buf, size_t size, const char *line, int k)
{
    int f = 0;
    const char *p = line;
    for (;;) {
        size_t n = 0;
        int q = *p == '"';
        if (q) p++;
        while (*p && (q ? !(*p == '"' && p[1] != '"') : *p != ',' && *p != '\n' && *p != '\r')) {
            if (q && *p == '"') p++; /* "" -> " */
            if (f == k && n + 1 < size) buf[n++] = *p;
            p++;
        }
        if (q && *p == '"') p++;
        if (f == k) {
            buf[n] = 0;
            return 0;
        }
        if (*p != ',') return -1;
        p++, f++;
    }
}

static int column_of(const char *header, const char *name)
{
    char b[64];
    for (int k = 0; !csv_field(b, sizeof b, header, k); k++)
        if (!strcmp(b, name)) return k;
    return -1;
}

static void read_pair(drift_delta_fit_t *f, const char *dir, const char *id)
{
    char path[4096], line[8192], hdr[8192] = "";
    snprintf(path, sizeof path, "%s/forecast_pairs.csv", dir);
    FILE *fp = fopen(path, "r");
    if (!fp)
        drift_die(
            "--pair: cannot read %s (run ./lab run forecast, or give --data DIR, or --law, --scale and --pi)", path);
    int found = 0;
    char ids[1024] = "";
    while (fgets(line, sizeof line, fp)) {
        if (line[0] == '#') continue;
        if (!hdr[0]) {
            snprintf(hdr, sizeof hdr, "%s", line);
            continue;
        }
        char v[256];
        if (csv_field(v, sizeof v, line, 0)) continue;
        size_t l = strlen(ids);
        snprintf(ids + l, sizeof ids - l, "%s%s", l ? ", " : "", v);
        if (strcmp(v, id)) continue;
        int cl = column_of(hdr, "law"), cs = column_of(hdr, "sigma"), cb = column_of(hdr, "b"),
            cp = column_of(hdr, "pi");
        char ls[32], ss[64], bs[64], psv[64];
        if (cl < 0 || cs < 0 || cb < 0 || cp < 0 || csv_field(ls, sizeof ls, line, cl) ||
            csv_field(ss, sizeof ss, line, cs) || csv_field(bs, sizeof bs, line, cb) ||
            csv_field(psv, sizeof psv, line, cp) || drift_parse_double(&f->sigma, ss) ||
            drift_parse_double(&f->b, bs) || drift_parse_double(&f->pi[0], psv))
            drift_die("--pair: %s: the row of %s lacks law, sigma, b or pi", path, id);
        if (!strcmp(ls, "gauss"))
            f->law = DRIFT_DELTA_GAUSS;
        else if (!strcmp(ls, "laplace"))
            f->law = DRIFT_DELTA_LAPLACE;
        else
            drift_die("--pair: %s: the row of %s has law '%s' (accepted: gauss, laplace)", path, id, ls);
        found = 1;
    }
    fclose(fp);
    if (!found)
        drift_die("--pair: no pair '%s' in %s (accepted: %s)", id, path, ids[0] ? ids : "none: the file has no rows");
}

typedef struct {
    long text;
    size_t order; /* in the dump */
    int steps;
    drift_forecast_t fc;
    double min_gap;
} text_t;

static int by_risk(const void *a, const void *b)
{
    const text_t *x = a, *y = b;
    if (x->fc.p != y->fc.p) return x->fc.p < y->fc.p ? 1 : -1;
    return (x->order > y->order) - (x->order < y->order);
}

/* the top-2 gap of K logits (NaN when they are all NaN; -1 when only some are) */
static double top2_gap(const double *l, size_t K)
{
    size_t nan = 0;
    double a = -INFINITY, b = -INFINITY;
    for (size_t k = 0; k < K; k++) {
        if (isnan(l[k])) {
            nan++;
            continue;
        }
        if (l[k] > a)
            b = a, a = l[k];
        else if (l[k] > b)
            b = l[k];
    }
    if (nan == K) return NAN;
    if (nan || !isfinite(a) || !isfinite(b)) return -1;
    return a - b;
}

/* The dump's buffers, kept reachable from here while it is read: a malformed row ends the
 * program from inside the reading loop (drift_die), and a buffer only a dead frame points to
 * reads as a leak to LeakSanitizer. */
static struct {
    double *x, *gap;
    text_t *tx;
} held;

int calc_forecast(int argc, char **argv)
{
    const char *pair = NULL, *dir = NULL, *law_s = NULL, *scale_s = NULL, *pi_s = NULL, *tok_s = NULL, *file = NULL;
    const drift_arg_opt_t opts[] = {{"pair", &pair, NULL, 0, "ID"}, {"data", &dir, NULL, 0, "DIR"},
        {"law", &law_s, NULL, 0, "L"}, {"scale", &scale_s, NULL, 0, "S"}, {"pi", &pi_s, NULL, 0, "P"},
        {"tokens", &tok_s, NULL, 0, "T"}};
    if (drift_args_parse(opts, 6, &file, 1, argc, argv, usage) != 1)
        drift_die("expected one DUMP file (usage: forecast (--pair ID | --law L --scale S --pi P) DUMP)");
    drift_delta_fit_t f;
    memset(&f, 0, sizeof f);
    if (pair && (law_s || scale_s || pi_s))
        drift_die("--pair takes the law from the file: give --pair, or --law, --scale and --pi");
    if (dir && !pair) drift_die("--data: only with --pair (the directory of its forecast_pairs.csv)");
    if (pair)
        read_pair(&f, dir ? dir : "data", pair);
    else {
        if (!law_s || !scale_s || !pi_s) drift_die("the law: give --pair ID, or all of --law, --scale and --pi");
        if (!strcmp(law_s, "gauss"))
            f.law = DRIFT_DELTA_GAUSS;
        else if (!strcmp(law_s, "laplace"))
            f.law = DRIFT_DELTA_LAPLACE;
        else
            drift_die("--law: unknown law '%s' (accepted: gauss, laplace)", law_s);
        double s, p;
        if (drift_parse_double(&s, scale_s) || !(s > 0) || !isfinite(s))
            drift_die("--scale: '%s' is not a positive number of logits", scale_s);
        if (drift_parse_double(&p, pi_s) || !(p > 0 && p <= 1)) drift_die("--pi: '%s' is not a share in (0, 1]", pi_s);
        f.sigma = f.b = s, f.pi[0] = p;
    }
    long tmax = 0;
    if (tok_s && (drift_parse_long(&tmax, tok_s) || tmax < 1))
        drift_die("--tokens: '%s' is not a positive count", tok_s);

    double *x;
    size_t n;
    calc_shape_t sh;
    if (calc_read_array(file, DRIFT_FP64, &x, &n, &sh) != 0) return 2;
    held.x = x;
    char shape[96];
    calc_shape_print(shape, sizeof shape, &sh);
    text_t *tx = NULL;
    size_t ntext = 0;
    double *gap = NULL;
    if (calc_is_npy(file)) {
        size_t P, T, K;
        if (sh.ndim == 3)
            P = sh.dim[0], T = sh.dim[1], K = sh.dim[2];
        else if (sh.ndim == 2)
            P = 1, T = sh.dim[0], K = sh.dim[1];
        else
            drift_die("DUMP: %s has shape %s (accepted: (P, T, K) texts x steps x top-k logits, or (T, K) one text)",
                file, shape);
        if (K < 2)
            drift_die("DUMP: %s has shape %s: K = %zu logits per step (accepted: K >= 2, the top two at least)", file,
                shape, K);
        held.tx = tx = calloc(P, sizeof *tx), held.gap = gap = malloc(T * sizeof *gap);
        if (!tx || !gap) drift_die("out of memory for %zu texts", P);
        for (size_t i = 0; i < P; i++) {
            int steps = 0;
            for (size_t t = 0; t < T; t++) {
                double g = top2_gap(x + (i * T + t) * K, K);
                if (g == -1)
                    drift_die(
                        "DUMP: %s: text %zu, step %zu: some logits are NaN or infinite, not all (a step is all finite, or all NaN past the text's end)",
                        file, i, t);
                if (isnan(g)) continue;
                if ((size_t)steps != t)
                    drift_die("DUMP: %s: text %zu resumes at step %zu after it ended at step %d", file, i, t, steps);
                gap[steps++] = g;
            }
            int use = tmax && steps > tmax ? (int)tmax : steps;
            tx[ntext].text = (long)i, tx[ntext].steps = use;
            tx[ntext].min_gap = INFINITY;
            for (int t = 0; t < use; t++) tx[ntext].min_gap = gap[t] < tx[ntext].min_gap ? gap[t] : tx[ntext].min_gap;
            if (drift_forecast_text(&tx[ntext].fc, &f, -1, gap, NULL, use))
                drift_die("DUMP: %s: text %zu: a forecast failed", file, i);
            ntext++;
        }
    } else {
        if (sh.ndim != 2 || sh.dim[1] < 4)
            drift_die("DUMP: %s has shape %s (accepted: a CSV of rows text,step,logit_1,...,logit_K with K >= 2)", file,
                shape);
        size_t R = sh.dim[0], K = sh.dim[1] - 2;
        held.tx = tx = calloc(R, sizeof *tx), held.gap = gap = malloc(R * sizeof *gap);
        if (!tx || !gap) drift_die("out of memory for %zu rows", R);
        for (size_t r = 0; r < R;) {
            const double *row = x + r * (K + 2);
            double id = row[0];
            if (!(id >= 0 && id == floor(id) && id < 1e15))
                drift_die("DUMP: %s: row %zu: text '%g' is not a count", file, r + 1, id);
            if (ntext && (long)id <= tx[ntext - 1].text)
                drift_die(
                    "DUMP: %s: row %zu: text %ld after text %ld (texts in increasing order, each text's rows together)",
                    file, r + 1, (long)id, tx[ntext - 1].text);
            int steps = 0;
            for (; r < R && x[r * (K + 2)] == id; r++) {
                const double *w = x + r * (K + 2);
                if (w[1] != steps)
                    drift_die("DUMP: %s: row %zu: text %ld has step %g where step %d comes next", file, r + 1, (long)id,
                        w[1], steps);
                double g = top2_gap(w + 2, K);
                if (!(g >= 0)) drift_die("DUMP: %s: row %zu: the logits must be finite numbers", file, r + 1);
                gap[steps++] = g;
            }
            int use = tmax && steps > tmax ? (int)tmax : steps;
            tx[ntext].text = (long)id, tx[ntext].steps = use, tx[ntext].min_gap = INFINITY;
            for (int t = 0; t < use; t++) tx[ntext].min_gap = gap[t] < tx[ntext].min_gap ? gap[t] : tx[ntext].min_gap;
            if (drift_forecast_text(&tx[ntext].fc, &f, -1, gap, NULL, use))
                drift_die("DUMP: %s: a forecast failed", file);
            ntext++;
        }
    }
    /* riskiest first; a stable order for ties: the dump's */
    for (size_t i = 0; i < ntext; i++) tx[i].order = i;
    qsort(tx, ntext, sizeof *tx, by_risk);
    printf("rank,text,steps,p_part,risk_step,risk_gap,risk_p,min_gap\n");
    for (size_t i = 0; i < ntext; i++)
        printf("%zu,%ld,%d,%.9g,%d,%.9g,%.9g,%.9g\n", i + 1, tx[i].text, tx[i].steps, tx[i].fc.p, tx[i].fc.step,
            calc_nan(tx[i].fc.step_gap), tx[i].fc.step_p, tx[i].min_gap);
    free(x), free(tx), free(gap);
    memset(&held, 0, sizeof held);
    return drift_stdout_close_check();
}
