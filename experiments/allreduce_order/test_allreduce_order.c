/* test_allreduce_order.c — the greedy-text part of allreduce_order end to end (stories260K):
 * the table holds one row per (tp, order, prompt), and every parting obeys what greedy decoding
 * forces; the takeaway counts prompts, not runs; bad options exit 2 and write no file.
 *
 * Independent source: a hand derivation. At the parting step both runs computed logits on the
 * same context; tp = 1 chose a (L1[a] >= L1[b]) and tp = P chose b (LP[b] >= LP[a]), so
 *   0 <= L1[a] - L1[b] <= (L1[a] - LP[a]) + (LP[b] - L1[b]) <= 2 spread,
 * and a is tp = 1's top-1 while b is some other token, so top1 - top2 <= L1[a] - L1[b].
 * The per-prompt count is recounted from the CSV by this file. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

#define EXP DRIFT_BIN_DIR "/allreduce_order"
#define CKPT DRIFT_SOURCE_DIR "/models/stories260K.bin"

static char dir[64];
static void make_dir(void) { tmpdir_make(dir, sizeof dir, "drift_allreduce"); }
static void remove_dir(void) { tmpdir_remove(dir); }
TestSuite(allreduce_order, .init = make_dir, .fini = remove_dir, .timeout = 300);

Test(allreduce_order, partings_obey_greedy_and_are_counted_by_prompt)
{
    /* seed 1, 16 prompts x 64 tokens, bf16: the smallest run found with partings at tp 2 and 4 */
    cr_assert_eq(
        sh("%s --profile quick --checkpoint %s --seed 1 --prompts 16 --tokens 64 --recipes bf16/tc:h100/fp32/bf16 "
           "--ranks-max 2 --elements 16 --quiet --out %s/ok",
            EXP, CKPT, dir),
        0);
    char p[256];
    snprintf(p, sizeof p, "%s/ok/allreduce_order_generate.csv", dir);
    char *s = slurp(p);
    int rows = 0, parted = 0;
    int moved[5][16] = {{0}}; /* [tp][prompt] */
    for (char *l = strtok(s, "\n"); l; l = strtok(NULL, "\n")) {
        if (l[0] == '#' || !strncmp(l, "recipe,", 7)) continue;
        char rec[64], ar[16];
        int tp, pr, np, T, fd, same, ta, tb;
        double g12, gab, spread;
        cr_assert_eq(sscanf(l, "%63[^,],%d,%15[^,],%d,%d,%d,%d,%d,%d,%d,%lf,%lf,%lf", rec, &tp, ar, &pr, &np, &T, &fd,
                         &same, &ta, &tb, &g12, &gab, &spread),
            13, "%s", l);
        rows++;
        cr_assert(tp == 2 || tp == 4, "stories260K's 4 KV heads split over 2 or 4 ranks: %s", l);
        cr_assert(pr >= 0 && pr < 16 && np == 2 && T == 64, "%s", l);
        cr_assert_eq(same, fd < 0, "%s", l);
        if (fd < 0) continue;
        parted++, moved[tp][pr] = 1;
        cr_assert(ta != tb, "%s", l);
        cr_assert(g12 >= 0 && g12 <= gab && gab <= 2 * spread, "the derivation above: %s", l);
    }
    cr_assert_eq(rows, 2 * 3 * 16, "2 rank counts x 3 orders x 16 prompts");
    cr_assert_gt(parted, 0, "the case has partings (else the checks above are empty)");
    free(s);
    snprintf(p, sizeof p, "%s/ok/allreduce_order.md", dir);
    s = slurp(p);
    for (int tp = 2; tp <= 4; tp += 2) {
        int k = 0;
        for (int r = 0; r < 16; r++) k += moved[tp][r];
        char want[64];
        snprintf(want, sizeof want, "tp = 1 -> %d: the completion moved for %d/16 ", tp, k);
        cr_assert(k == 0 || strstr(s, want), "the takeaway counts prompts: '%s' missing", want);
    }
    free(s);
}

Test(allreduce_order, bad_options_exit_2_one_line_no_file)
{
    const char *const bad[] = {
        "--recipes junk", "--recipes bf16/seq", "--prompts 0", "--prompt-set /x.txt", "--exact-gaps 2", "--tokens 600"};
    expect_bad_options(EXP " --profile quick --checkpoint " CKPT, bad, sizeof bad / sizeof bad[0], dir,
        "allreduce_order_generate.csv");
}
