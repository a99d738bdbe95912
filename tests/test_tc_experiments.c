/* test_tc_experiments.c — tc_conformance and gpu_generations (the LM head) end to end (quick profile): the
 * shipped hardware data reproduce with 0 mismatches on every modelled configuration (the
 * expected count is the data's, tests/tc_hw/README.md), a bad, truncated or missing data
 * file and every bad option exit 2 and write no file. Byte-reproducibility at 1 and 2
 * threads is test_reproducible's (both are registered). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "support.h"

#define CONF DRIFT_BIN_DIR "/tc_conformance"
#define GEN DRIFT_BIN_DIR "/gpu_generations"

static char dir[64];
static void make_dir(void) { tmpdir_make(dir, sizeof dir, "drift_tcexp"); }
static void remove_dir(void) { tmpdir_remove(dir); }
TestSuite(tc_experiments, .init = make_dir, .fini = remove_dir, .timeout = 300);

static int exists(const char *fmt, const char *name)
{
    char p[512];
    struct stat st;
    snprintf(p, sizeof p, fmt, dir, name);
    return stat(p, &st) == 0;
}

Test(tc_experiments, conformance_counts)
{
    cr_assert_eq(sh("%s --profile quick --quiet --out %s/ok", CONF, dir), 0);
    char p[512];
    snprintf(p, sizeof p, "%s/ok/tc_conformance.csv", dir);
    char *t = slurp_len(p, NULL);
    /* 48 configurations, all bit-exact (fp8 -> fp16 on H100, H200, B200 included since
     * DRIFT_TC_FP8_VIA_HMMA), none not modelled, no MISMATCH */
    int exact = 0, unmod = 0;
    for (const char *q = t; (q = strstr(q, ",bit-exact,")); q++) exact++;
    for (const char *q = t; (q = strstr(q, ",not-modelled,")); q++) unmod++;
    cr_assert_eq(exact, 48);
    cr_assert_eq(unmod, 0);
    cr_assert_null(strstr(t, ",MISMATCH,"));
    free(t);
    snprintf(p, sizeof p, "%s/ok/tc_conformance.md", dir);
    t = slurp_len(p, NULL);
    cr_assert(strstr(t, "**Question.**") && strstr(t, "**Takeaway.**") && !strstr(t, "not modelled"));
    free(t);
}

Test(tc_experiments, bad_data_files_exit_2_and_write_nothing)
{
    char p[512];
    snprintf(p, sizeof p, "%s/trunc.bin", dir);
    FILE *fp = fopen(p, "wb");
    cr_assert(fp);
    fprintf(fp, "drift-tc-hw 1 V100 fp16 4 5000 fp32+fp16 c\n0123456789");
    fclose(fp);
    snprintf(p, sizeof p, "%s/bad.xz", dir);
    fp = fopen(p, "wb");
    cr_assert(fp);
    fprintf(fp, "not an xz stream");
    fclose(fp);
    const char *files[] = {"/nonexistent/tc_hw.bin.xz", "trunc.bin", "bad.xz"};
    for (int i = 0; i < 3; i++) {
        char arg[600];
        if (files[i][0] == '/')
            snprintf(arg, sizeof arg, "%s", files[i]);
        else
            snprintf(arg, sizeof arg, "%s/%s", dir, files[i]);
        cr_assert_eq(
            sh("%s --profile quick --data '%s' --quiet --out %s/bad 2>/dev/null", CONF, arg, dir), 2, "%s", files[i]);
        cr_assert(!exists("%s/bad/%s", "tc_conformance.csv"), "%s wrote a file", files[i]);
        cr_assert(!exists("%s/bad/%s", "tc_conformance.md"), "%s wrote a file", files[i]);
    }
}

Test(tc_experiments, bad_options_exit_2_and_write_nothing)
{
    const char *conf_bad[] = {
        "--stride 0", "--stride x", "--formats fp32", "--orders seq", "--profile huge", "--backend cuda"};
    for (int i = 0; i < 6; i++) {
        cr_assert_eq(sh("%s %s --quiet --out %s/bad 2>/dev/null", CONF, conf_bad[i], dir), 2, "%s", conf_bad[i]);
        cr_assert(!exists("%s/bad/%s", "tc_conformance.csv"), "%s wrote a file", conf_bad[i]);
    }
    const char *gen_bad[] = {"--archs h100", "--archs h100,x999", "--archs a100,a100", "--formats fp8e4m3", "--gaps 0",
        "--gaps 2", "--K 4", "--V 1", "--seeds 0", "--seeds 99", "--rows 0", "--orders seq", "--backend cuda",
        "--V 1048576 --K 65536", "--rows 4096 --V 65536", "--formats bf16,bf16"};
    for (int i = 0; i < 16; i++) {
        cr_assert_eq(
            sh("%s --profile quick %s --quiet --out %s/bad 2>/dev/null", GEN, gen_bad[i], dir), 2, "%s", gen_bad[i]);
        cr_assert(!exists("%s/bad/%s", "gpu_generations_argmax.csv"), "%s wrote a file", gen_bad[i]);
        cr_assert(!exists("%s/bad/%s", "gpu_generations.md"), "%s wrote a file", gen_bad[i]);
    }
}

Test(tc_experiments, generations_fragment_and_v100_bf16)
{
    cr_assert_eq(sh("%s --profile quick --quiet --out %s/gen", GEN, dir), 0);
    char p[512];
    snprintf(p, sizeof p, "%s/gen/gpu_generations.md", dir);
    char *t = slurp_len(p, NULL);
    cr_assert(strstr(t, "**Question.**") && strstr(t, "**Takeaway.**"));
    cr_assert(strstr(t, "no bf16"), "V100 lacks bf16: the fragment says so");
    free(t);
    snprintf(p, sizeof p, "%s/gen/gpu_generations_argmax.csv", dir);
    t = slurp_len(p, NULL);
    cr_assert_null(strstr(t, ",bf16,fp32,v100,"), "no bf16 row for V100");
    free(t);
}
