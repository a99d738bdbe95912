/* test_calc_gaps.c — `drift-calc gaps LOGITS`: the top-2 gap of each row, in ulps of fp32,
 * bf16 and fp16 at the top-1 logit, and whether storing the row in each format flips the
 * argmax. The dump is written here; every expected number is derived by hand below (p = 24,
 * 8, 11 significant bits: in the binade [2^e, 2^(e+1)) the ulp is 2^(e-p+1)).
 *
 * Row 0: 1, 1 + 2^-20, 0.5. top1 = 1, top2 = 0, gap 2^-20.
 *   fp32 ulp at [1,2) 2^-23: gap 8 ulps, cannot flip, does not.
 *   bf16 ulp 2^-7: gap 2^-13 ulps, can; 1 + 2^-20 rounds to 1: a tie, argmax goes to id 0: flips.
 *   fp16 ulp 2^-10: gap 2^-10 ulps, can; rounds to 1 too: flips.
 * Row 1: 0, 257, 256. top1 = 1, top2 = 2, gap 1.
 *   fp32 ulp at [256,512) 2^-15: 32768 ulps. fp16 ulp 2^-2: 4 ulps, cannot.
 *   bf16 ulp 2^1: 0.5 ulps, can; 257 is the tie between 256 (significand 1.0000000, even)
 *   and 258 (odd): 256, a tie with token 2, which argmax gives to id 1 = top1: no flip.
 *   (can_flip = 1, flips = 0: the rule says may, the numbers say no.)
 * Row 2: 1.5 - 2^-8, 1.5 + 2^-8, 0. top1 = 1, top2 = 0, gap 2^-7.
 *   bf16 ulp 2^-7: gap exactly 1 ulp, can (g <= u); both are ties around 1.5 (significand
 *   1.1000000, even), both round to 1.5: a tie given to id 0: flips. The closed interval of
 *   an even member is why the rule is g <= u, not g < u.
 *   fp32: 2^16 ulps; fp16 ulp 2^-10: 8 ulps; neither can. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "support.h"

#define CALC DRIFT_BIN_DIR "/drift-calc"

static char dir[64];
static void setup(void) { tmpdir_make(dir, sizeof dir, "drift_gaps"); }
static void teardown(void) { tmpdir_remove(dir); }

#define HEADER                                                                                                      \
    "row,V,tie,top1,top2,v1_hex,v1,v2_hex,v2,gap_hex,gap,ulp_fp32,gap_ulps_fp32,can_flip_fp32,flips_fp32,ulp_bf16," \
    "gap_ulps_bf16,can_flip_bf16,flips_bf16,ulp_fp16,gap_ulps_fp16,can_flip_fp16,flips_fp16\n"
#define ROWS                                                                                               \
    "0,3,0,1,0,0x1.00001p+0,1.0000009536743164,0x1p+0,1,0x1p-20,9.5367431640625e-07,"                      \
    "0x1p-23,8,0,0,0x1p-7,0.0001220703125,1,1,0x1p-10,0.0009765625,1,1\n"                                  \
    "1,3,0,1,2,0x1.01p+8,257,0x1p+8,256,0x1p+0,1,0x1p-15,32768,0,0,0x1p+1,0.5,1,0,0x1p-2,4,0,0\n"          \
    "2,3,0,1,0,0x1.81p+0,1.50390625,0x1.7fp+0,1.49609375,0x1p-7,0.0078125,0x1p-23,65536,0,0,0x1p-7,1,1,1," \
    "0x1p-10,8,0,0\n"

Test(calc_gaps, csv_dump_by_hand, .init = setup, .fini = teardown)
{
    char path[128], cmd[512];
    static char out[4096];
    snprintf(path, sizeof path, "%s/logits.csv", dir);
    FILE *fp = fopen(path, "w");
    cr_assert(fp);
    fputs("# three rows of V = 3 logits\n1, 0x1.00001p+0, 0.5\n0,257,256\n0x1.7fp+0,0x1.81p+0,0\n", fp);
    fclose(fp);
    snprintf(cmd, sizeof cmd, CALC " gaps '%s'", path);
    cr_assert_eq(run_stdout(cmd, out, sizeof out), 0);
    cr_expect_str_eq(out, HEADER ROWS);
}

/* The same rows as a float32 .npy of shape (3, 3) (every value above is a float32): the same
 * output; and a 3-D array is refused with its shape. */
Test(calc_gaps, npy_dump_and_shapes, .init = setup, .fini = teardown)
{
    const float v[9] = {1.0f, 0x1.00001p+0f, 0.5f, 0.0f, 257.0f, 256.0f, 0x1.7fp+0f, 0x1.81p+0f, 0.0f};
    const char *shapes[2] = {"(3, 3)", "(3, 3, 1)"};
    for (int k = 0; k < 2; k++) {
        char path[128], hdr[128], cmd[512];
        static char out[4096], err[1024];
        snprintf(path, sizeof path, "%s/l%d.npy", dir, k);
        size_t len =
            (size_t)snprintf(hdr, sizeof hdr, "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }", shapes[k]);
        while ((10 + len + 1) % 64) hdr[len++] = ' ';
        hdr[len++] = '\n';
        FILE *fp = fopen(path, "wb");
        cr_assert(fp);
        fwrite("\x93NUMPY\x01\x00", 1, 8, fp);
        fputc((int)len, fp);
        fputc(0, fp);
        fwrite(hdr, 1, len, fp);
        fwrite(v, sizeof v, 1, fp);
        fclose(fp);
        snprintf(cmd, sizeof cmd, CALC " gaps '%s'", path);
        int rc = run_capture(cmd, out, sizeof out, err, sizeof err);
        if (k == 0) {
            cr_expect_eq(rc, 0, "%s", err);
            cr_expect_str_eq(out, HEADER ROWS);
        } else {
            cr_expect_eq(rc, 2);
            cr_expect(strstr(err, "has shape (3, 3, 1) (accepted: (N, V)"), "%s", err);
            cr_expect_str_empty(out);
        }
    }
}

/* Refusals: a row of one logit, a ragged CSV (the line named), a NaN logit. */
Test(calc_gaps, bad_dumps, .init = setup, .fini = teardown)
{
    static const char *const BAD[][2] = {{"1\n", "V = 1"}, {"1,2,3\n4,5\n", ":2: 2 values on this line, 3 on line 1"},
        {"1,nan\n", "is nan (accepted: finite logits)"}};
    for (size_t i = 0; i < sizeof BAD / sizeof *BAD; i++) {
        char path[128], cmd[512], out[256], err[1024];
        snprintf(path, sizeof path, "%s/bad%zu.csv", dir, i);
        FILE *fp = fopen(path, "w");
        cr_assert(fp);
        fputs(BAD[i][0], fp);
        fclose(fp);
        snprintf(cmd, sizeof cmd, CALC " gaps '%s'", path);
        cr_expect_eq(run_capture(cmd, out, sizeof out, err, sizeof err), 2, "case %zu", i);
        cr_expect(strstr(err, BAD[i][1]), "case %zu: '%s' not in %s", i, BAD[i][1], err);
        cr_expect(strchr(err, '\n') == err + strlen(err) - 1, "case %zu: not one line: %s", i, err);
    }
}

/* calc gaps on a dump the lab wrote itself: argmax_flip's planted trials (--trials, fp32 rows:
 * the master values are fp32) give each pair's top logit l1 and its exact gap (gap_hex). The
 * two-logit row (l1, l2 = l1 - gap rounded to double) goes to calc. l1 and l2 are within a
 * factor 2, so l1 - l2 is exact (Sterbenz) and calc's gap must be it; it differs from
 * argmax_flip's gap only by the rounding of l2, at most half an ulp of double at l2,
 * 2^(e2 - 54) for l2 = m 2^e2, 0.5 <= m < 1: the tolerance, derived, not chosen. calc's fp32
 * ulp is derived independently with frexp (2^(e - 24) for l1 = m 2^e, l1 a normal fp32
 * value), and can_flip_fp32 is calc's gap <= that ulp. */
Test(calc_gaps, agrees_with_argmax_flip_trials, .init = setup, .fini = teardown, .timeout = 120)
{
    cr_assert_eq(
        sh("'%s/argmax_flip' --profile quick --K 64 --ties 0 --reps 2 --formats fp32 --orders seq --trials --quiet "
           "--out '%s/af' >/dev/null",
            DRIFT_BIN_DIR, dir),
        0);
    char path[256];
    snprintf(path, sizeof path, "%s/af/argmax_flip_trials.csv", dir);
    FILE *in = fopen(path, "r");
    cr_assert_not_null(in);
    snprintf(path, sizeof path, "%s/pairs.csv", dir);
    FILE *out = fopen(path, "w");
    static double want_gap[4096], want_ulp[4096], want_tol[4096], want_diff[4096];
    int n = 0, header = 0;
    char line[1024];
    while (fgets(line, sizeof line, in) && n < 4096) {
        if (line[0] == '#') continue;
        if (!header++) {
            cr_assert(
                strncmp(line, "K,format,trial,target_rel,gap_hex,gap,rel_gap,s,l1,", 51) == 0, "columns: %s", line);
            continue;
        }
        char fmt[16], gap_hex[64];
        double l1;
        int K, trial;
        cr_assert_eq(
            sscanf(line, "%d,%15[^,],%d,%*[^,],%63[^,],%*[^,],%*[^,],%*[^,],%lf", &K, fmt, &trial, gap_hex, &l1), 5,
            "%s", line);
        double gap = strtod(gap_hex, NULL), l2 = l1 - gap;
        if (strcmp(fmt, "fp32") || !(gap > 0)) continue;
        int e, e2;
        frexp(l1, &e);
        frexp(l2, &e2);
        want_gap[n] = gap;
        want_tol[n] = ldexp(1.0, e2 - 54);
        want_diff[n] = l1 - l2;
        want_ulp[n] = ldexp(1.0, e - 24);
        fprintf(out, "%a,%a\n", l1, l2);
        n++;
    }
    fclose(in);
    fclose(out);
    cr_assert_geq(n, 20, "too few exact pairs (%d) from argmax_flip's trials", n);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "'%s' gaps '%s' > '%s/gaps.csv'", CALC, path, dir);
    cr_assert_eq(sh("%s", cmd), 0);
    snprintf(path, sizeof path, "%s/gaps.csv", dir);
    in = fopen(path, "r");
    cr_assert(fgets(line, sizeof line, in) != NULL); /* header */
    int r = 0;
    while (fgets(line, sizeof line, in)) {
        int row, V, tie, top1, top2, can;
        char gap_hex[64], ulp_hex[64];
        cr_assert_eq(sscanf(line, "%d,%d,%d,%d,%d,%*[^,],%*[^,],%*[^,],%*[^,],%63[^,],%*[^,],%63[^,],%*[^,],%d", &row,
                         &V, &tie, &top1, &top2, gap_hex, ulp_hex, &can),
            8, "%s", line);
        cr_assert_lt(r, n);
        cr_expect(row == r && V == 2 && tie == 0 && top1 == 0 && top2 == 1, "row %d: %s", r, line);
        double g = strtod(gap_hex, NULL);
        cr_expect_eq(g, want_diff[r], "row %d: calc's gap %s, l1 - l2 = %a", r, gap_hex, want_diff[r]);
        cr_expect_leq(
            fabs(g - want_gap[r]), want_tol[r], "row %d: calc's gap %s, argmax_flip's %a", r, gap_hex, want_gap[r]);
        cr_expect_eq(strtod(ulp_hex, NULL), want_ulp[r], "row %d: ulp_fp32 %s, by frexp %a", r, ulp_hex, want_ulp[r]);
        cr_expect_eq(can, g <= want_ulp[r], "row %d: can_flip_fp32 %d", r, can);
        r++;
    }
    fclose(in);
    cr_expect_eq(r, n, "calc printed %d rows for %d", r, n);
}
