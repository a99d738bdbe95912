/* calc_sum.c — `drift-calc sum` and `drift-calc dot`: run any reduction order on your own
 * numbers and see how far it lands from the exact answer.
 *
 *   drift-calc sum --format F --order SPEC [--acc A] FILE|-
 *   drift-calc dot --format F --order SPEC [--acc A] [--fma|--nofma] [--c C] FILE_A FILE_B
 *
 * FILE has one value per line (calc_input.h: decimal or C99 hex float, inf, nan; blank
 * lines and '#' lines skipped; '-' is stdin). Every input's exact value is rounded once
 * to F (nearest-even; decimal.h);
 * the reduction runs in order SPEC (order.h) with every step rounded to the accumulator
 * format A (default F; for tc:ARCH the tensor core's fp32 accumulator), nearest-even.
 * dot: --fma (default) rounds acc + a*b once, --nofma rounds the product first; --c C is
 * an initial accumulator value (a GEMM's C operand), rounded to A (RNE) and added first
 * (order.h says where each order puts it). tc:ARCH runs the tensor-core model
 * (drift_tc_dot, input format F, output A = fp32 or fp16); --fma/--nofma do not apply,
 * and C is rounded as the model rounds it (drift_tc_round_c: toward zero for fp32).
 *
 * CSV on stdout, one row:
 *   order,format,acc,n,result_hex,result,exact_hex,exact,abs_err,rel_err,ulp_err
 * exact is the exact real sum (dot: c + sum a_i b_i) of the ROUNDED inputs, rounded once
 * to double (RNE); abs_err = |result - exact sum| computed exactly and rounded up;
 * rel_err = abs_err / |exact| (rounded up); ulp_err = abs_err in units of A's spacing at
 * exact (drift_ulp). Hex columns are C99 %a, decimal ones %.17g (they read back exactly), but
 * ulp_err, a ratio derived from abs_err, has the %.6g of the ulp_err column of every experiment
 * (sum_order_perms_classroom.csv): one quantity is spelled one way wherever a user meets it.
 * Bad options, unreadable or empty files, unparsable lines (file:line), mismatched
 * lengths: one line on stderr, exit status 2. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calc.h"
#include "calc_input.h"
#include "cli.h"
#include "decimal.h"
#include "drift.h"
#include "exact.h"
#include "format.h"
#include "metrics.h"
#include "dispatch.h"
#include "order.h"
#include "cards.h"

#define ORDER_GRAMMAR drift_order_grammar()

typedef struct {
    int dot;
    const char *format_s, *order_s, *acc_s, *c_s;
    int fma;
    const char *files[2];
    int nfiles;
} args_t;

static void usage(FILE *to, int dot)
{
    if (dot)
        fprintf(to, "usage: drift-calc dot --format F --order SPEC [--acc A] [--fma|--nofma] [--c C] FILE_A FILE_B\n");
    else
        fprintf(to, "usage: drift-calc sum --format F --order SPEC [--acc A] FILE|-\n");
    fprintf(to,
        "  --format F    input format: every value is rounded to F (nearest-even)\n"
        "  --order SPEC  %s\n"
        "  --acc A       accumulator format (default F; fp32 for tc:ARCH)\n",
        ORDER_GRAMMAR);
    if (dot)
        fprintf(to, "  --fma         acc + a*b rounded once (default)\n"
                    "  --nofma       the product rounded to A first\n"
                    "  --c C         initial accumulator value, like a GEMM's C: rounded to A to nearest-even,\n"
                    "                but for tc:ARCH as the tensor-core model rounds C (the published GEMM):\n"
                    "                toward zero for fp32 output, nearest-even for fp16\n");
    if (dot)
        fprintf(to, "tc:ARCH: NVIDIA V100, A100/A2/A30 (Ampere), Ada/L40S, H100/H200 (Hopper), B200/RTX PRO 6000\n"
                    "  (Blackwell): inputs fp16, bf16, tf32, fp8e4m3, fp8e5m2 (what each has), A = fp32 or fp16;\n"
                    "  AMD MI100 (CDNA1: fp16, bf16), MI250 (CDNA2: fp16, bf16), MI300X (CDNA3: fp16, bf16,\n"
                    "  tf32), A = fp32. Example: drift-calc dot --format fp16 --order tc:ada a.txt b.txt\n");
    fprintf(to, "prints CSV: order,format,acc,n,result_hex,result,exact_hex,exact,abs_err,rel_err,ulp_err\n"
                "  (decimals %%.17g, which read back exactly; ulp_err %%.6g, as in sum_order's CSV)\n");
}

static drift_format_t parse_format(const char *opt, const char *v) { return drift_format_arg(opt, v); }

static void usage_sum(FILE *to) { usage(to, 0); }
static void usage_dot(FILE *to) { usage(to, 1); }

static void parse_args(args_t *a, int argc, char **argv)
{
    const drift_arg_opt_t opts[] = {
        {"format", &a->format_s, NULL, 0, "F"},
        {"order", &a->order_s, NULL, 0, "SPEC"},
        {"acc", &a->acc_s, NULL, 0, "A"},
        {"c", &a->c_s, NULL, 0, "C"},
        {"fma", NULL, &a->fma, 1, NULL},
        {"nofma", NULL, &a->fma, 0, NULL},
    };
    /* --fma, --nofma and --c are dot's: sum does not offer them */
    a->nfiles =
        drift_args_parse(opts, a->dot ? 6 : 3, a->files, a->dot ? 2 : 1, argc, argv, a->dot ? usage_dot : usage_sum);
    if (!a->format_s) drift_die("--format: missing (accepted: see --help)");
    if (!a->order_s) drift_die("--order: missing (accepted: %s)", ORDER_GRAMMAR);
    if (a->nfiles != (a->dot ? 2 : 1))
        drift_die("expected %s, got %d file%s", a->dot ? "two files FILE_A FILE_B" : "one FILE (or - for stdin)",
            a->nfiles, a->nfiles == 1 ? "" : "s");
    if (a->dot && !strcmp(a->files[0], "-") && !strcmp(a->files[1], "-"))
        drift_die("FILE_A and FILE_B cannot both be stdin");
}

/* |result - S| for the exact value S held in x, rounded up; and S rounded to double. */
static void errors(const drift_xacc_t *x, double result, drift_format_t acc, double *exact, double *abs_err,
    double *rel_err, double *ulp_err)
{
    *exact = drift_xacc_round(x, DRIFT_FP64, DRIFT_RNE);
    if (x->nan || x->inf) { /* an infinite or NaN input: the exact sum is that infinity or NaN */
        *abs_err = drift_abs_err(result, *exact);
    } else if (!isfinite(result)) { /* a finite exact sum (even one beyond the double range) */
        *abs_err = isnan(result) ? NAN : INFINITY;
    } else if (!isfinite(*exact)) { /* |S| beyond the double range, result finite: |S - result| exactly */
        drift_xacc_t d = *x;
        drift_xacc_add(&d, -result);
        int sg = drift_xacc_sign(&d);
        *abs_err = sg > 0 ? drift_xacc_round(&d, DRIFT_FP64, DRIFT_RU) : -drift_xacc_round(&d, DRIFT_FP64, DRIFT_RD);
    } else {
        drift_xacc_t d = *x;
        drift_xacc_add(&d, -result); /* exact: S - result */
        int sg = drift_xacc_sign(&d);
        *abs_err = sg > 0   ? drift_xacc_round(&d, DRIFT_FP64, DRIFT_RU)
                   : sg < 0 ? -drift_xacc_round(&d, DRIFT_FP64, DRIFT_RD)
                            : 0.0;
    }
    if (isnan(*abs_err)) {
        *rel_err = *ulp_err = NAN;
    } else if (*abs_err == 0) {
        *rel_err = *ulp_err = 0;
    } else if (!isfinite(*exact) && !x->inf && isfinite(*abs_err)) {
        /* |S| > DBL_MAX: divide by DBL_MAX instead, an upper bound (rounded up) */
        double q = *abs_err / DBL_MAX;
        *rel_err = nextafter(q, INFINITY);
        *ulp_err = *abs_err / drift_ulp(DBL_MAX, acc);
    } else if (*exact == 0 || !isfinite(*exact)) {
        *rel_err = *ulp_err = INFINITY;
    } else {
        double q = *abs_err / fabs(*exact);
        if (isfinite(q) && fma(-q, fabs(*exact), *abs_err) > 0) q = nextafter(q, INFINITY); /* rounded up */
        *rel_err = q;
        *ulp_err = *abs_err / drift_ulp(*exact, acc); /* a power of two: exact unless it overflows */
    }
}

static int run(int dot, int argc, char **argv)
{
    args_t a = {dot, NULL, NULL, NULL, NULL, 1, {NULL, NULL}, 0};
    parse_args(&a, argc, argv);
    drift_format_t f = parse_format("--format", a.format_s);
    drift_order_t o;
    if (drift_order_parse_card(&o, a.order_s) != DRIFT_OK) {
        if (!strncmp(a.order_s, "tc:", 3)) drift_die_tc("--order", a.order_s + 3, a.order_s);
        drift_die("--order: malformed spec '%s' (accepted: %s)", a.order_s, ORDER_GRAMMAR);
    }
    int tc = drift_order_is_tc(&o);
    if (tc && !dot) drift_die("--order: '%s' is a tensor-core dot product, not a sum (use drift-calc dot)", a.order_s);
    drift_format_t acc = a.acc_s ? parse_format("--acc", a.acc_s) : tc ? DRIFT_FP32 : f;
    if (tc && acc != DRIFT_FP32 && acc != DRIFT_FP16)
        drift_die("--acc: '%s' is not a tensor-core output (accepted for tc: fp32, fp16)", drift_format_name(acc));
    double c = 0;
    if (a.c_s) {
        /* C is rounded once, from its exact decimal value, as the model rounds it
         * (drift_tc_round_c): toward zero for a tensor core's fp32 output, where the model
         * gives inf from 2^128 on; to nearest-even otherwise. */
        const drift_round_opts_t rz = {DRIFT_RZ, 0, 0};
        int tc_rz = tc && acc == DRIFT_FP32;
        if (drift_decimal_round(&c, a.c_s, acc, tc_rz ? &rz : NULL, 0) != DRIFT_OK)
            drift_die("--c: '%s' is not a number (accepted: decimal or hex float, inf, nan)", a.c_s);
        double toward_zero; /* RZ to fp64 reaches 2^128 exactly when the exact value does */
        if (tc_rz && drift_decimal_round(&toward_zero, a.c_s, DRIFT_FP64, &rz, 0) == DRIFT_OK &&
            fabs(toward_zero) >= 0x1p128)
            c = copysign(INFINITY, toward_zero);
    }

    { /* the combination is checked before any file is read, and the refusal lists what works */
        drift_recipe_t r = drift_recipe(f, &o, acc, acc);
        char why[256];
        if (drift_recipe_check(&r, why, sizeof why) != DRIFT_OK) {
            char ok[128] = "";
            for (int i = 0; i < DRIFT_NFORMATS; i++) {
                drift_recipe_t t = drift_recipe((drift_format_t)i, &o, acc, acc);
                if (drift_recipe_check(&t, why, sizeof why) == DRIFT_OK)
                    snprintf(ok + strlen(ok), sizeof ok - strlen(ok), "%s%s", *ok ? ", " : "",
                        drift_format_name((drift_format_t)i));
            }
            drift_die("--format: %s has no %s path (accepted with --order %s --acc %s: %s)", drift_format_name(f),
                a.order_s, a.order_s, drift_format_name(acc), *ok ? ok : "none");
        }
    }
    double *x = NULL, *y = NULL;
    size_t n = 0, ny = 0;
    /* each value rounded once from its exact decimal to F (not via double) */
    if (calc_read_values_as(a.files[0], f, &x, &n) != 0) return 2;
    if (dot) {
        if (calc_read_values_as(a.files[1], f, &y, &ny) != 0) {
            free(x);
            return 2;
        }
        if (ny != n) {
            free(x);
            free(y);
            drift_die(
                "%s has %zu values but %s has %zu (a dot product needs equal lengths)", a.files[0], n, a.files[1], ny);
        }
    }
    drift_xacc_t ex;
    drift_xacc_init(&ex);
    if (dot && a.c_s) drift_xacc_add(&ex, c);
    for (size_t i = 0; i < n; i++) {
        if (dot) {
            drift_xacc_add_prod(&ex, x[i], y[i]);
        } else {
            drift_xacc_add(&ex, x[i]);
        }
    }

    double r;
    int rc;
    drift_recipe_t recipe = drift_recipe(f, &o, acc, acc);
    recipe.acc.fma = a.fma;
    if (dot)
        rc = drift_recipe_dot_acc(&r, x, y, n, a.c_s ? &c : NULL, &recipe);
    else
        rc = drift_recipe_sum(&r, x, n, &recipe);
    free(x);
    free(y);
    if (rc != DRIFT_OK)
        drift_die("--order %s with --format %s --acc %s: %s", a.order_s, drift_format_name(f), drift_format_name(acc),
            drift_strerror(rc));

    double exact, abs_err, rel_err, ulp_err;
    errors(&ex, r, acc, &exact, &abs_err, &rel_err, &ulp_err);
    char spec[DRIFT_ORDER_SPEC_MAX];
    drift_order_print(spec, sizeof spec, &o);
    printf("order,format,acc,n,result_hex,result,exact_hex,exact,abs_err,rel_err,ulp_err\n");
    printf("%s,%s,%s,%zu,%a,%.17g,%a,%.17g,%.17g,%.17g,%.6g\n", spec, drift_format_name(f), drift_format_name(acc), n,
        calc_nan(r), calc_nan(r), calc_nan(exact), calc_nan(exact), calc_nan(abs_err), calc_nan(rel_err),
        calc_nan(ulp_err));
    return 0;
}

int calc_sum(int argc, char **argv) { return run(0, argc, argv); }
int calc_dot(int argc, char **argv) { return run(1, argc, argv); }
