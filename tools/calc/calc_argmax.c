/* calc_argmax.c — `drift-calc argmax`: probe an LM head by hand. Which token wins exactly,
 * which one wins as computed, and did the choice flip?
 *
 *   drift-calc argmax --format F --order SPEC [--acc A] [--logits L] FILE_H FILE_W
 *
 * FILE_H holds the hidden state: K values, one per line. FILE_W holds the weight matrix as V
 * rows of K values, row-major: line v*K + i (counting values, not blank or '#' lines) is
 * W[v][i], the weight of hidden channel i in token v's row; so token v's logit is
 * sum_i h[i] W[v][i], and V = (values in FILE_W) / K. Both files use calc_input.h's syntax
 * (decimal or C99 hex float, inf, nan; blank lines and '#' lines skipped; '-' is stdin for one
 * of them). Every value is rounded to F (nearest-even). Each logit is a dot product in order
 * SPEC with accumulator A (default F, as `drift-calc dot`; fp32 for tc:ARCH, the tensor core's
 * output format), then stored in L (default A; nearest-even), e.g. --logits bf16 for the logits
 * a bf16 model returns.
 *
 * CSV on stdout, one row:
 *   format,order,acc,logits,K,V,exact_top1,exact_top2,exact_v1_hex,exact_v1,exact_v2_hex,exact_v2,
 *   exact_gap_hex,exact_gap,tie,computed_top1,computed_top2,computed_v1_hex,computed_v1,
 *   computed_v2_hex,computed_v2,flipped
 * Token ids count from 0. exact_*: the exact logits of the rounded inputs (superaccumulator),
 * each rounded once to double; exact_gap = the exact top-1 minus top-2 difference rounded
 * once (0 only for an exact tie); among exactly equal logits the lower id ranks first.
 * computed_*: the configuration's logits; equal computed logits go to the lower id (as
 * torch.argmax). flipped = 1 when computed_top1 != exact_top1 and the exact top two do not
 * tie; an exact tie prints tie = 1, flipped = 0 (a tie is resolved, never flipped).
 * Bad options, unreadable or empty files, unparsable lines (file:line), V < 2 or a FILE_W
 * length that is not a multiple of K, a tensor-core order the format lacks: one line on
 * stderr, exit status 2. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calc.h"
#include "calc_input.h"
#include "cli.h"
#include "drift.h"
#include "format.h"
#include "gen_logits.h"
#include "lmhead.h"
#include "order.h"

#define ORDER_GRAMMAR                                                                                                  \
    "seq, rev, pairwise, blocked:B, splitk:S, splitk:S:tree, warp:W (W a power of two), kahan, neumaier, "         \
    "random:SEED, tc:v100|a100|h100|b200"

static void usage(FILE *to)
{
    fprintf(to, "usage: drift-calc argmax --format F --order SPEC [--acc A] [--logits L] FILE_H FILE_W\n"
                "  FILE_H        the hidden state: K values, one per line\n"
                "  FILE_W        the weights: V rows of K values, row-major (value v*K + i is W[v][i])\n"
                "                (either file may be a NumPy .npy array: float64/32/16, C order, shape (V, K) for W)\n"
                "  --format F    input format: every value is rounded to F (nearest-even)\n"
                "  --order SPEC  %s\n"
                "  --acc A       accumulator format (default F; fp32 for tc:ARCH)\n"
                "  --logits L    format the logits are stored in (default A)\n"
                "prints CSV: format,order,acc,logits,K,V,exact_top1,exact_top2,exact_v1_hex,exact_v1,exact_v2_hex,"
                "exact_v2,exact_gap_hex,exact_gap,tie,computed_top1,computed_top2,computed_v1_hex,computed_v1,"
                "computed_v2_hex,computed_v2,flipped\n",
            ORDER_GRAMMAR);
}

static drift_format_t parse_format(const char *opt, const char *v)
{
    drift_format_t f;
    if (drift_format_parse(&f, v) != DRIFT_OK)
        drift_die("%s: unknown format '%s' (accepted: fp64, fp32, tf32, fp16, bf16, fp8e4m3, fp8e5m2)", opt, v);
    return f;
}

int calc_argmax(int argc, char **argv)
{
    const char *format_s = NULL, *order_s = NULL, *acc_s = NULL, *logits_s = NULL, *files[2] = {NULL, NULL};
    int nfiles = 0;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
            usage(stdout);
            return 0;
        }
        if (s[0] == '-' && s[1] != 0) {
            const char **dest = NULL;
            if (!strcmp(s, "--format")) dest = &format_s;
            else if (!strcmp(s, "--order")) dest = &order_s;
            else if (!strcmp(s, "--acc")) dest = &acc_s;
            else if (!strcmp(s, "--logits")) dest = &logits_s;
            else drift_die("unknown option '%s' (accepted: --format, --order, --acc, --logits)", s);
            if (i + 1 >= argc) drift_die("%s: missing value", s);
            *dest = argv[++i];
            continue;
        }
        if (nfiles == 2) drift_die("too many files: '%s' (usage: argmax ... FILE_H FILE_W)", s);
        files[nfiles++] = s;
    }
    if (!format_s) drift_die("--format: missing (accepted: fp64, fp32, tf32, fp16, bf16, fp8e4m3, fp8e5m2)");
    if (!order_s) drift_die("--order: missing (accepted: %s)", ORDER_GRAMMAR);
    if (nfiles != 2) drift_die("expected two files FILE_H FILE_W, got %d", nfiles);
    if (!strcmp(files[0], "-") && !strcmp(files[1], "-")) drift_die("FILE_H and FILE_W cannot both be stdin");

    drift_lmhead_cfg_t c;
    memset(&c, 0, sizeof c);
    c.in = parse_format("--format", format_s);
    if (drift_order_parse(&c.order, order_s) != DRIFT_OK)
        drift_die("--order: malformed spec '%s' (accepted: %s)", order_s, ORDER_GRAMMAR);
    int tc = drift_order_is_tc(&c.order);
    c.acc = (drift_acc_t){acc_s ? parse_format("--acc", acc_s) : tc ? DRIFT_FP32 : c.in, DRIFT_RNE, 1};
    c.out = logits_s ? parse_format("--logits", logits_s) : c.acc.acc;
    if (tc && c.acc.acc != DRIFT_FP32 && c.acc.acc != DRIFT_FP16)
        drift_die("--acc: '%s' is not a tensor-core output (accepted for tc: fp32, fp16)", drift_format_name(c.acc.acc));
    if (drift_lmhead_cfg_check(&c) != DRIFT_OK)
        drift_die("--order: '%s' has no tensor-core path for %s inputs (accepted: see tc_model.h)", order_s,
                  drift_format_name(c.in));

    double *h = NULL, *W = NULL;
    size_t K = 0, n = 0;
    if (calc_read_values(files[0], &h, &K) != 0) return 2;
    if (calc_read_values(files[1], &W, &n) != 0) {
        free(h);
        return 2;
    }
    if (n % K != 0 || n / K < 2) {
        free(h);
        free(W);
        drift_die("%s has %zu values, which is not V rows of K = %zu (the size of %s) with V >= 2", files[1], n, K,
                  files[0]);
    }
    size_t V = n / K;
    drift_lmhead_result_t r;
    int rc = drift_lmhead_eval_full(&r, h, W, V, K, &c, 1);
    free(h);
    free(W);
    if (rc) drift_die("cannot evaluate the head: %s", drift_strerror(rc));

    char ord[DRIFT_ORDER_SPEC_MAX];
    drift_order_print(ord, sizeof ord, &c.order);
    const drift_top2_t *e = &r.exact, *k = &r.computed[0];
    printf("format,order,acc,logits,K,V,exact_top1,exact_top2,exact_v1_hex,exact_v1,exact_v2_hex,exact_v2,exact_gap_hex,"
           "exact_gap,tie,computed_top1,computed_top2,computed_v1_hex,computed_v1,computed_v2_hex,computed_v2,flipped\n");
    printf("%s,%s,%s,%s,%zu,%zu,%zu,%zu,%a,%.17g,%a,%.17g,%a,%.17g,%d,%zu,%zu,%a,%.17g,%a,%.17g,%d\n",
           drift_format_name(c.in), ord, drift_format_name(c.acc.acc), drift_format_name(c.out), K, V, e->top1, e->top2,
           e->v1, e->v1, e->v2, e->v2, e->gap, e->gap, e->tie, k->top1, k->top2, k->v1, k->v1, k->v2, k->v2, r.flip[0]);
    return 0;
}
