/* test_kv_cache_real_exp.c — kv_cache's real-model part end to end: its bad options are one
 * line, exit 2 and no file; without the model file the synthetic part still runs (exit 0) and
 * the fragment says the real part was not run; with it, a cache that stores the preset's bf16
 * K and V exactly never parts the text, and the summary's counts and Wilson bounds follow from
 * the per-prompt rows (derivations next to each case). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "support.h"

#define EXP DRIFT_BIN_DIR "/kv_cache"
#define SMOLLM2 DRIFT_SOURCE_DIR "/models/SmolLM2-135M-Instruct.Q4_1.gguf"
/* a synthetic part as small as the options allow: the real part is what is tested */
#define SMALL "--profile quick --L 16 --queries 1 --vocab 2 --kv-formats fp32 --threads 1"

static char dir[64];
static void make_dir(void) { tmpdir_make(dir, sizeof dir, "drift_kvreal"); }
static void remove_dir(void) { tmpdir_remove(dir); }

TestSuite(kv_cache_real_exp, .init = make_dir, .fini = remove_dir, .timeout = 300);

static int have_model(void)
{
    struct stat st;
    return stat(SMOLLM2, &st) == 0;
}

Test(kv_cache_real_exp, bad_options_exit_2_one_line_no_file)
{
    const char *const bad[] = {
        "--real-prompts 1 --real-kv bf16",      /* the baseline itself */
        "--real-prompts 1 --real-kv int9",      /* no such format */
        "--real-prompts 1 --real-kv fp16,fp16", /* a format twice */
        "--real-prompts 1 --real-kv int8:tok",
        "--real-prompts -1",
        "--real-tokens 0",
        "--real-prompts 1 --checkpoint /nonexistent/model.gguf",
    };
    expect_bad_options(EXP " " SMALL, bad, sizeof bad / sizeof bad[0], dir, "kv_cache_real_summary.csv");
    if (!have_model()) return;
    const char *const bad_model[] = {
        "--real-prompts 1 --prompt-set /nonexistent/prompts.txt",
    };
    expect_bad_options(
        EXP " " SMALL, bad_model, sizeof bad_model / sizeof bad_model[0], dir, "kv_cache_real_summary.csv");
}

Test(kv_cache_real_exp, off_says_so_and_writes_the_synthetic_part)
{
    cr_assert_eq(sh("%s %s --real-prompts 0 --quiet --out %s/off", EXP, SMALL, dir), 0);
    char p[256];
    snprintf(p, sizeof p, "%s/off/kv_cache.md", dir);
    char *md = slurp(p);
    cr_assert(strstr(md, "The real-model part") && strstr(md, "was not run"), "%s", md);
    free(md);
    snprintf(p, sizeof p, "%s/off/kv_cache.csv", dir);
    struct stat st;
    cr_assert_eq(stat(p, &st), 0, "the synthetic part's CSV");
}

/* Field i (0-based) of a CSV line without quoted fields before it. */
static double fieldd(const char *line, int i)
{
    const char *p = line;
    for (int k = 0; k < i && p; k++) p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL;
    cr_assert(p, "no field %d in %s", i, line);
    return strtod(p, NULL);
}

/* The preset (hf-eager: act=bf16, compute=bf16) rounds V to bf16 as its GEMM stores it and K
 * to bf16 after RoPE (model.c's act()), so every cached value is a bf16 number. fp32 has
 * bf16's 8 exponent bits and 24 >= 8 significand bits: it holds each of them exactly, so the
 * kv=fp32 cache holds the same values as the kv=bf16 baseline, attention reads the same bits,
 * and the two greedy texts agree token for token: parted 0, step -1, at every prompt.
 * Wilson's upper bound at k = 0 is z^2 / (n + z^2): n = 3, z = 1.959964 gives
 * 3.841459 / 6.841459 = 0.561497. */
Test(kv_cache_real_exp, an_exact_cache_never_parts_and_the_summary_follows_the_rows)
{
    if (!have_model()) {
        cr_skip_test("no %s", SMOLLM2);
        return;
    }
    cr_assert_eq(sh("%s %s --real-prompts 3 --real-tokens 4 --real-kv fp32,fp8e5m2 --seed 2 --quiet --out %s/on", EXP,
                     SMALL, dir),
        0);
    char p[256];
    snprintf(p, sizeof p, "%s/on/kv_cache_real.csv", dir);
    char *t = slurp(p);
    int rows = 0, parted8 = 0;
    for (char *l = strtok(t, "\n"); l; l = strtok(NULL, "\n")) {
        if (l[0] == '#' || !strncmp(l, "prompt,", 7)) continue;
        rows++;
        /* prompt,kind,prompt_tokens,kv_format,parted,step,... */
        const char *fmt = strchr(strchr(strchr(l, ',') + 1, ',') + 1, ',') + 1;
        if (!strncmp(fmt, "fp32,", 5)) {
            cr_assert(fieldd(l, 4) == 0 && fieldd(l, 5) == -1, "fp32 parted: %s", l);
        } else {
            cr_assert(!strncmp(fmt, "fp8e5m2,", 8), "%s", l);
            parted8 += fieldd(l, 4) == 1;
            cr_assert((fieldd(l, 4) == 1) == (fieldd(l, 5) >= 0 && fieldd(l, 5) < 4), "step within the tokens: %s", l);
        }
    }
    cr_assert_eq(rows, 3 * 2, "a row per (prompt, format)");
    free(t);
    snprintf(p, sizeof p, "%s/on/kv_cache_real_summary.csv", dir);
    t = slurp(p);
    char *f32 = strstr(t, "\nfp32,"), *f8 = strstr(t, "\nfp8e5m2,");
    cr_assert(f32 && f8, "%s", t);
    /* kv_format,"deployment",prompts,tokens,parted,rate,wilson_lo,wilson_hi: past the quoted field */
    const char *a = strstr(f32, "\","), *b = strstr(f8, "\",");
    cr_assert(a && b);
    a += 2, b += 2;
    cr_assert(fieldd(a, 0) == 3 && fieldd(a, 1) == 4 && fieldd(a, 2) == 0 && fieldd(a, 3) == 0 && fieldd(a, 4) == 0,
        "%s", f32);
    cr_assert(fabs(fieldd(a, 5) - 0.561497) < 1e-6, "Wilson hi at 0 of 3: %s", f32); /* printed with 6 digits */
    cr_assert(
        fieldd(b, 2) == parted8 && fabs(fieldd(b, 3) - parted8 / 3.0) < 1e-6, "fp8e5m2's count is its rows': %s", f8);
    free(t);
    snprintf(p, sizeof p, "%s/on/kv_cache.md", dir);
    t = slurp(p);
    cr_assert(strstr(t, "- Real model (") && strstr(t, "never under fp32"), "the takeaway's line: %s", t);
    free(t);
}
