/* calc_argmax.c — `drift-calc argmax`: probe an LM head by hand. Which token wins exactly,
 * which one wins as computed, and did the choice flip?
 *
 *   drift-calc argmax --format F --order SPEC [--acc A] [--logits L] FILE_H FILE_W
 *
 * FILE_H holds the hidden state, shape (K,), or N hidden states, shape (N, K); FILE_W holds the
 * weight matrix, shape (V, K): row v is token v's weights, so token v's logit is
 * sum_i h[i] W[v][i]. A file is a NumPy .npy array (its shape is its own), a CSV of rows (one
 * row per line, values comma-separated: shape (rows, values per row)), or one value per line
 * (shape (n,); for FILE_W the old flat layout, V rows of K values row-major, V = n / K). Any
 * other shape is refused, both shapes named (check_shapes). The values use calc_input.h's syntax
 * (decimal or C99 hex float, inf, nan; blank lines and '#' lines skipped; '-' is stdin for one
 * of them). Every value is rounded to F (nearest-even). Each logit is a dot product in order
 * SPEC with accumulator A (default F, as `drift-calc dot`; fp32 for tc:ARCH, the tensor core's
 * output format), then stored in L (default A; nearest-even), e.g. --logits bf16 for the logits
 * a bf16 model returns.
 *
 * CSV on stdout, one row per hidden state (in FILE_H's order):
 *   format,order,acc,logits,K,V,exact_top1,exact_top2,exact_v1_hex,exact_v1,exact_v2_hex,exact_v2,
 *   exact_gap_hex,exact_gap,tie,computed_top1,computed_top2,computed_v1_hex,computed_v1,
 *   computed_v2_hex,computed_v2,flipped
 * Token ids count from 0. exact_*: the exact logits of the rounded inputs (superaccumulator),
 * each rounded once to double; exact_gap = the exact top-1 minus top-2 difference rounded
 * once (0 only for an exact tie); among exactly equal logits the lower id ranks first.
 * computed_*: the configuration's logits; equal computed logits go to the lower id (as
 * torch.argmax). flipped = 1 when computed_top1 != exact_top1 and the exact top two do not
 * tie; an exact tie prints tie = 1, flipped = 0 (a tie is resolved, never flipped).
 * Bad options, unreadable or empty files, unparsable lines (file:line), V < 2, shapes that do
 * not fit, a tensor-core order the format lacks: one line on
 * stderr, exit status 2. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calc.h"
#include "calc_input.h"
#include "calc_npy.h"
#include "cards.h"
#include "cli.h"
#include "dispatch.h"
#include "drift.h"
#include "format.h"
#include "gen_logits.h"
#include "lmhead.h"
#include "order.h"

#define ORDER_GRAMMAR drift_order_grammar()

static void usage(FILE *to)
{
    fprintf(to,
        "usage: drift-calc argmax --format F --order SPEC [--acc A] [--logits L] FILE_H FILE_W\n"
        "  FILE_H        the hidden state, shape (K,), or N of them, shape (N, K): one CSV row per state\n"
        "                (or one value per line for a single state), or a NumPy .npy array\n"
        "  FILE_W        the weights, shape (V, K): one row of K per token, as a CSV of V rows or a .npy\n"
        "                array (float64/32/16, C order); a column of V*K values is read row-major\n"
        "                (value v*K + i is W[v][i]). Any other shape is refused, both shapes named\n"
        "  --format F    input format: every value is rounded to F (nearest-even)\n"
        "  --order SPEC  %s\n"
        "  --acc A       accumulator format (default F; fp32 for tc:ARCH)\n"
        "  --logits L    format the logits are stored in (default A)\n"
        "prints CSV: format,order,acc,logits,K,V,exact_top1,exact_top2,exact_v1_hex,exact_v1,exact_v2_hex,"
        "exact_v2,exact_gap_hex,exact_gap,tie,computed_top1,computed_top2,computed_v1_hex,computed_v1,"
        "computed_v2_hex,computed_v2,flipped\n"
        "  one row per hidden state, in FILE_H's order\n",
        ORDER_GRAMMAR);
}

static drift_format_t parse_format(const char *opt, const char *v) { return drift_format_arg(opt, v); }

/* The shapes the head accepts, checked before any arithmetic: H is one hidden state (K,) or a
 * batch (N, K); W is (V, K), one row of K weights per token (PyTorch's nn.Linear.weight and
 * the GGUF/llama2.c output matrix are stored so). A text column W (one value per line, no
 * shape of its own) is read as V rows of K, row-major, as before. Anything else is refused with
 * both shapes named: a (K, V) W, transposed by mistake, would otherwise give K = 128, V = 50
 * of nonsense whenever the counts happen to divide. */
static void check_shapes(size_t *N, size_t *K, size_t *V, const calc_shape_t *hs, const calc_shape_t *ws, size_t nw,
    const char *fh, const char *fw, int w_is_text)
{
    char hsh[96], wsh[96];
    calc_shape_print(hsh, sizeof hsh, hs);
    calc_shape_print(wsh, sizeof wsh, ws);
    if (hs->ndim == 1)
        *N = 1, *K = hs->dim[0];
    else if (hs->ndim == 2)
        *N = hs->dim[0], *K = hs->dim[1];
    else
        drift_die("FILE_H: %s has shape %s (accepted: (K,) one hidden state, or (N, K) N of them; W %s is %s)", fh, hsh,
            fw, wsh);
    if (*N == 0 || *K == 0) drift_die("FILE_H: %s has shape %s: no values", fh, hsh);
    if (ws->ndim == 2) {
        if (ws->dim[1] != *K) {
            if (ws->dim[0] == *K)
                drift_die(
                    "FILE_W: %s has shape %s, H %s has shape %s: W must be (V, %zu), one row per token (this one is "
                    "(K, V): save its transpose, W.T)",
                    fw, wsh, fh, hsh, *K);
            drift_die(
                "FILE_W: %s has shape %s, H %s has shape %s: W must be (V, K) with K = %zu", fw, wsh, fh, hsh, *K);
        }
        *V = ws->dim[0];
    } else if (ws->ndim == 1 && w_is_text) {
        if (nw % *K != 0)
            drift_die(
                "FILE_W: %s has %zu values, which is not V rows of K = %zu (H %s has shape %s)", fw, nw, *K, fh, hsh);
        *V = nw / *K;
    } else {
        drift_die("FILE_W: %s has shape %s, H %s has shape %s (accepted: W of shape (V, K) with K = %zu)", fw, wsh, fh,
            hsh, *K);
    }
    if (*V < 2)
        drift_die("FILE_W: %s has shape %s: V = %zu token%s (accepted: V >= 2, one row per token)", fw, wsh, *V,
            *V == 1 ? "" : "s");
}

int calc_argmax(int argc, char **argv)
{
    const char *format_s = NULL, *order_s = NULL, *acc_s = NULL, *logits_s = NULL, *files[2] = {NULL, NULL};
    const drift_arg_opt_t opts[] = {{"format", &format_s, NULL, 0, "F"}, {"order", &order_s, NULL, 0, "SPEC"},
        {"acc", &acc_s, NULL, 0, "A"}, {"logits", &logits_s, NULL, 0, "L"}};
    int nfiles = drift_args_parse(opts, 4, files, 2, argc, argv, usage);
    if (!format_s) drift_die("--format: missing (accepted: fp64, fp32, tf32, fp16, bf16, fp8e4m3, fp8e5m2)");
    if (!order_s) drift_die("--order: missing (accepted: %s)", ORDER_GRAMMAR);
    if (nfiles != 2) drift_die("expected two files FILE_H FILE_W, got %d", nfiles);
    if (!strcmp(files[0], "-") && !strcmp(files[1], "-")) drift_die("FILE_H and FILE_W cannot both be stdin");

    drift_recipe_t c;
    memset(&c, 0, sizeof c);
    c.in = parse_format("--format", format_s);
    if (drift_order_parse_card(&c.order, order_s) != DRIFT_OK) {
        if (!strncmp(order_s, "tc:", 3)) drift_die_tc("--order", order_s + 3, order_s);
        drift_die("--order: malformed spec '%s' (accepted: %s)", order_s, ORDER_GRAMMAR);
    }
    int tc = drift_order_is_tc(&c.order);
    c.acc = (drift_acc_t){acc_s ? parse_format("--acc", acc_s) : tc ? DRIFT_FP32 : c.in, DRIFT_RNE, 1};
    c.out = logits_s ? parse_format("--logits", logits_s) : c.acc.acc;
    if (tc && c.acc.acc != DRIFT_FP32 && c.acc.acc != DRIFT_FP16)
        drift_die(
            "--acc: '%s' is not a tensor-core output (accepted for tc: fp32, fp16)", drift_format_name(c.acc.acc));
    if (drift_recipe_check(&c, NULL, 0) != DRIFT_OK)
        drift_die("--order: '%s' has no tensor-core path for %s inputs (accepted: see tc_model.h)", order_s,
            drift_format_name(c.in));

    double *h = NULL, *W = NULL;
    size_t nh = 0, nw = 0, N, K, V;
    calc_shape_t hs, ws;
    if (calc_read_array(files[0], DRIFT_FP64, &h, &nh, &hs) != 0) return 2;
    if (calc_read_array(files[1], DRIFT_FP64, &W, &nw, &ws) != 0) {
        free(h);
        return 2;
    }
    check_shapes(&N, &K, &V, &hs, &ws, nw, files[0], files[1], !calc_is_npy(files[1]));
    char ord[DRIFT_ORDER_SPEC_MAX];
    drift_order_print(ord, sizeof ord, &c.order);
    /* Every row is computed before anything is printed: a failure never leaves a partial table. */
    drift_lmhead_result_t *r = malloc(N * sizeof *r);
    if (!r) drift_die_oom((double)N * sizeof *r, "the results of %zu rows of FILE_H", (size_t)N);
    for (size_t row = 0; row < N; row++) {
        int rc = drift_lmhead_eval_full(&r[row], h + row * K, W, V, K, &c, 1);
        if (rc) drift_die("cannot evaluate the head: %s", drift_strerror(rc));
    }
    free(h);
    free(W);
    printf(
        "format,order,acc,logits,K,V,exact_top1,exact_top2,exact_v1_hex,exact_v1,exact_v2_hex,exact_v2,exact_gap_hex,"
        "exact_gap,tie,computed_top1,computed_top2,computed_v1_hex,computed_v1,computed_v2_hex,computed_v2,flipped\n");
    for (size_t row = 0; row < N; row++) {
        const drift_top2_t *e = &r[row].exact, *k = &r[row].computed[0];
        printf("%s,%s,%s,%s,%zu,%zu,%zu,%zu,%a,%.17g,%a,%.17g,%a,%.17g,%d,%zu,%zu,%a,%.17g,%a,%.17g,%d\n",
            drift_format_name(c.in), ord, drift_format_name(c.acc.acc), drift_format_name(c.out), K, V, e->top1,
            e->top2, calc_nan(e->v1), calc_nan(e->v1), calc_nan(e->v2), calc_nan(e->v2), calc_nan(e->gap),
            calc_nan(e->gap), e->tie, k->top1, k->top2, calc_nan(k->v1), calc_nan(k->v1), calc_nan(k->v2),
            calc_nan(k->v2), r[row].flip[0]);
    }
    free(r);
    return 0;
}
