/* test_attention_exp.c — the softmax_drift, attention_drift and kv_cache(_chunked) experiments end to
 * end: bad options stop each program with exit status 2 and write nothing; a quick run writes
 * every declared file with its fragment; and the bitwise facts the experiments report hold
 * where attention.h says they must (derivations next to each case). Law 4 across thread
 * counts is tests/test_reproducible.c's, which runs every registered experiment. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "support.h"

static char dir[64];

static void make_dir(void) { tmpdir_make(dir, sizeof dir, "drift_attnexp"); }

static void remove_dir(void) { tmpdir_remove(dir); }

TestSuite(attention_exp, .init = make_dir, .fini = remove_dir, .timeout = 300);

typedef struct {
    const char *exp, *args, *file;
} bad_t;

/* Each: the program, a bad option (what it breaks), and a file a run would write. */
static const bad_t BAD[] = {
    {"softmax_drift", "--N 0", "softmax_drift.csv"},       /* vocabulary size below 2 */
    {"softmax_drift", "--N 1024,-5", "softmax_drift.csv"}, /* negative */
    {"softmax_drift", "--rows 0", "softmax_drift.csv"},
    {"softmax_drift", "--block 0", "softmax_drift.csv"}, /* online:0 */
    {"softmax_drift", "--sigma 0", "softmax_drift.csv"},
    {"softmax_drift", "--formats fp99", "softmax_drift.csv"},
    {"softmax_drift", "--formats tf32", "softmax_drift.csv"},
    {"softmax_drift", "--N 33554432", "softmax_drift.csv"}, /* above 2^24 logits per row */
    {"attention_drift", "--L 0", "attention_drift.csv"},
    {"attention_drift", "--L -3", "attention_drift.csv"},
    {"attention_drift", "--heads 3 --kv-heads 2", "attention_drift.csv"}, /* not a multiple */
    {"attention_drift", "--heads 0", "attention_drift.csv"},
    {"attention_drift", "--kv-heads -1", "attention_drift.csv"},
    {"attention_drift", "--dim 0", "attention_drift.csv"},
    {"attention_drift", "--bc 0", "attention_drift.csv"},
    {"attention_drift", "--splits 0", "attention_drift.csv"},
    {"attention_drift", "--split-size 0", "attention_drift.csv"},
    {"attention_drift", "--split-size 100", "attention_drift.csv"}, /* not a multiple of the tile 64 */
    {"attention_drift", "--check-rows 0", "attention_drift.csv"},
    {"attention_drift", "--L 1048576 --dim 4096", "attention_drift.csv"}, /* a cache of 2^33 values */
    {"attention_drift", "--formats fp64", "attention_drift.csv"},
    {"kv_cache", "--L 0", "kv_cache.csv"},
    {"kv_cache", "--heads 6 --kv-heads 4", "kv_cache.csv"},
    {"kv_cache", "--kv-formats int9", "kv_cache.csv"},
    {"kv_cache", "--kv-formats int8:tok", "kv_cache.csv"},
    {"kv_cache", "--kv-formats ''", "kv_cache.csv"},
    {"kv_cache_chunked", "--chunks 0", "kv_cache_chunked.csv"},
    {"kv_cache_chunked", "--chunks 100000 --prefill-len 64", "kv_cache_chunked.csv"}, /* longer than the prefill */
    {"kv_cache", "--queries 0", "kv_cache.csv"},
    {"kv_cache", "--vocab 1", "kv_cache.csv"},
    {"kv_cache", "--vocab 1048576 --dim 4096", "kv_cache.csv"}, /* a 2^34-value projection */
    {"kv_cache", "--L 1048576 --dim 4096", "kv_cache.csv"},
};

Test(attention_exp, bad_options_exit_2_one_line_and_write_nothing)
{
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        char err[256];
        snprintf(err, sizeof err, "%s/err.txt", dir);
        cr_assert_eq(sh("%s/%s %s --quiet --out %s/bad 2>%s", DRIFT_BIN_DIR, BAD[i].exp, BAD[i].args, dir, err), 2,
            "%s %s", BAD[i].exp, BAD[i].args);
        char *msg = slurp(err);
        size_t n = strlen(msg);
        cr_assert(n > 0 && msg[n - 1] == '\n' && strchr(msg, '\n') == msg + n - 1, "%s %s: not one line: %s",
            BAD[i].exp, BAD[i].args, msg);
        cr_assert(strstr(msg, "--"), "%s %s: the message names no option: %s", BAD[i].exp, BAD[i].args, msg);
        free(msg);
        char p[256];
        struct stat st;
        snprintf(p, sizeof p, "%s/bad/%s", dir, BAD[i].file);
        cr_assert_neq(stat(p, &st), 0, "%s %s wrote a file", BAD[i].exp, BAD[i].args);
    }
}

/* 1 when a row of the CSV text starts with the cells `prefix` */
static int row_has(const char *text, const char *prefix)
{
    char want[256];
    snprintf(want, sizeof want, "\n%s", prefix);
    return strstr(text, want) != NULL;
}

/* Quick runs: every declared file, the fragment's parts, and the bitwise facts.
 * attention.h: standard materialises every key's score with masked keys at -inf, which add
 * exact zeros (p = +0, and +0 * v added to a sum leaves it unchanged), so the sequence alone
 * and right-padded give the same bits, and so do prefill and decode (the same keys, the same
 * seq order). flash tiles from key 0, so prefill and decode (whose caches hold the same keys
 * at the same positions) cut the same tiles: identical. */
Test(attention_exp, quick_runs_write_their_files_and_the_bitwise_facts_hold)
{
    cr_assert_eq(sh("%s/softmax_drift --profile quick --quiet --out %s/q", DRIFT_BIN_DIR, dir), 0);
    cr_assert_eq(sh("%s/attention_drift --profile quick --quiet --out %s/q", DRIFT_BIN_DIR, dir), 0);
    cr_assert_eq(sh("%s/kv_cache --profile quick --quiet --out %s/q", DRIFT_BIN_DIR, dir), 0);
    cr_assert_eq(sh("%s/kv_cache_chunked --profile quick --quiet --out %s/q", DRIFT_BIN_DIR, dir), 0);
    const char *files[] = {"softmax_drift.csv", "softmax_drift_cliff.csv", "softmax_drift.md", "attention_drift.csv",
        "attention_drift_padding.csv", "attention_drift_decode.csv", "attention_drift.md", "kv_cache.csv",
        "kv_cache_chunked.csv", "kv_cache.md", "kv_cache_chunked.md"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char p[256];
        snprintf(p, sizeof p, "%s/q/%s", dir, files[i]);
        char *t = slurp(p);
        if (strstr(files[i], ".md"))
            cr_assert(strstr(t, "**Question.**") && strstr(t, "**Takeaway.**"), "%s", files[i]);
        free(t);
    }
    char p[256];
    snprintf(p, sizeof p, "%s/q/attention_drift_decode.csv", dir);
    char *t = slurp(p);
    cr_assert(row_has(t, "bf16,standard,96,1,0,"), "standard: prefill = decode");
    cr_assert(row_has(t, "bf16,flash:64x64,96,1,0,"), "flash: prefill = decode");
    free(t);
    snprintf(p, sizeof p, "%s/q/attention_drift_padding.csv", dir);
    t = slurp(p);
    cr_assert(row_has(t, "bf16,standard,left,96,37,1,0,") && row_has(t, "bf16,standard,right,96,37,1,0,"),
        "standard: padding");
    free(t);
    /* The fp16 overflow cliff: naive computed in fp16 with a peak of 12 (rounds to 12 in fp16)
     * overflows exp (e^12 = 162755 > 65504), so p_0 = inf / inf = NaN; a peak of 8 (e^8 = 2981, plus
     * 1023 terms e^x with x ~ N(0,1), each below e^4.5 ~ 90 for |x| < 4.5, a sum below 65504)
     * stays finite. The quick profile's peaks hold 8 and 12. */
    snprintf(p, sizeof p, "%s/q/softmax_drift_cliff.csv", dir);
    t = slurp(p);
    cr_assert(row_has(t, "fp16,naive,12,12,") && !row_has(t, "fp16,naive,12,12,0,"), "fp16 naive at 12: NaN");
    cr_assert(row_has(t, "fp16,naive,8,8,0,"), "fp16 naive at 8: finite");
    cr_assert(row_has(t, "fp16,safe,12,12,0,"), "fp16 safe at 12: finite");
    free(t);
}

/* Field i (0-based) of the first row of CSV text that starts with the cells `prefix`, into out
 * (the fields asked for come before the quoted kernel column, so a comma ends each). */
static int field(char *out, size_t size, const char *text, const char *prefix, int i)
{
    char want[256];
    snprintf(want, sizeof want, "\n%s", prefix);
    const char *p = strstr(text, want);
    if (!p) return 0;
    p++;
    for (int k = 0; k < i; k++) {
        p = strpbrk(p, ",\n");
        if (!p || *p == '\n') return 0;
        p++;
    }
    size_t n = strcspn(p, ",\n");
    if (n >= size) return 0;
    memcpy(out, p, n), out[n] = 0;
    return 1;
}

/* The control (standard with its scores stored in fp32). With fp32 inputs standard's score
 * S_j = round_fp32(q.k_j) rounds a dot product accumulated in fp32, already an fp32 number, so
 * the control computes standard's bits on the same rows against the same reference: the same
 * three errors, as text, and a ratio of exactly 1. flash_to_control_* is flash's relerr_round
 * over the control's: recomputed here from the two files' printed values (7 significant
 * digits each, the ratio printed with 6), so it agrees to within 1e-5 relative. */
Test(attention_exp, the_control_is_standard_in_fp32_and_its_ratios_follow_from_the_errors)
{
    cr_assert_eq(
        sh("%s/attention_drift --L 24,40 --bc 8,16 --heads 2 --kv-heads 1 --dim 8 --check-rows 2 --decode-len 24 --pad 3 "
           "--formats fp32,bf16 --quiet --out %s/c",
            DRIFT_BIN_DIR, dir),
        0);
    char p[256];
    snprintf(p, sizeof p, "%s/c/attention_drift.csv", dir);
    char *m = slurp(p);
    snprintf(p, sizeof p, "%s/c/attention_drift_control.csv", dir);
    char *c = slurp(p);
    cr_assert(strstr(c,
        "\nformat,L,rows_checked,relerr_round,relerr_true,max_abs_err_round,ratio_to_standard,flash_to_control_min,flash_to_control_max\n"));
    const char *Ls[] = {"24", "40"}, *fmts[] = {"fp32", "bf16"};
    int rows = 0;
    for (const char *q = strchr(c, '\n'); q && q[1]; q = strchr(q + 1, '\n')) rows += q[1] != '#';
    cr_assert_eq(rows, 1 + 2 * 2, "a header and one row per (format, L)");
    for (int f = 0; f < 2; f++)
        for (int l = 0; l < 2; l++) {
            char sp[64], cp[64], a[64], b[64];
            snprintf(sp, sizeof sp, "%s,standard,standard,0,%s,", fmts[f], Ls[l]);
            snprintf(cp, sizeof cp, "%s,%s,", fmts[f], Ls[l]);
            cr_assert(field(a, sizeof a, c, cp, 2) && !strcmp(a, "2"), "%s: rows_checked", cp);
            for (int k = 0; k < 3; k++) { /* relerr_round, relerr_true, max_abs_err_round */
                cr_assert(field(a, sizeof a, m, sp, 6 + k) && field(b, sizeof b, c, cp, 3 + k), "%s", cp);
                if (f == 0) cr_assert_str_eq(b, a, "fp32 L=%s: the control's column %d is standard's", Ls[l], k);
            }
            cr_assert(field(a, sizeof a, c, cp, 6));
            if (f == 0) cr_assert_str_eq(a, "1", "fp32: control / standard");
            cr_assert(field(a, sizeof a, c, cp, 3));
            double ctl = strtod(a, NULL), lo = INFINITY, hi = 0;
            for (int bc = 8; bc <= 16; bc *= 2) {
                char fp[64];
                snprintf(fp, sizeof fp, "%s,flash:64x%d,flash,%d,%s,", fmts[f], bc, bc, Ls[l]);
                cr_assert(field(a, sizeof a, m, fp, 6), "%s", fp);
                double r = strtod(a, NULL) / ctl;
                lo = r < lo ? r : lo, hi = r > hi ? r : hi;
            }
            cr_assert(field(a, sizeof a, c, cp, 7) && field(b, sizeof b, c, cp, 8));
            cr_assert(fabs(strtod(a, NULL) / lo - 1) < 1e-5 && fabs(strtod(b, NULL) / hi - 1) < 1e-5,
                "%s: flash / control %s %s vs %g %g", cp, a, b, lo, hi);
        }
    free(m), free(c);
    /* the takeaway names the control in the formats where it is not standard, fp32 not among them */
    snprintf(p, sizeof p, "%s/c/attention_drift.md", dir);
    char *md = slurp(p), *b = strstr(md, "- Control, standard with fp32 scores: in bf16 ");
    cr_assert(b, "the control's bullet");
    char *e = strchr(b, '\n');
    *e = 0;
    cr_assert(strstr(b, ". The score rounding is ") && !strstr(b, "in fp32"), "%s", b);
    free(md);
}
