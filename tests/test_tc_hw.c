/* test_tc_hw.c — the tensor-core model against outputs measured on eight real GPUs (V100,
 * A100, A2, Ada, L40S, H100, H200, B200; Khattak & Mikaitis's validation data, see
 * tests/tc_hw/README.md): every 5th sample of every (GPU, input format, output format)
 * configuration, 1000 of each configuration's 5000, must come out bit for bit (tolerance 0:
 * the model is meant to be the hardware's arithmetic, not an approximation of it).
 * tests/long_tc_hw.c runs all 5000. */
#include <criterion/criterion.h>

#include <string.h>

#include "drift.h"
#include "tc_hw_data.h"

Test(tc_hw, every_fifth_sample_reproduces_bit_for_bit, .timeout = 300)
{
    static drift_tc_hw_count_t cnt[DRIFT_TC_HW_MAXCFG];
    int n = tc_hw_run(cnt, 5);
    tc_hw_check(cnt, n, 1000);
}

/* The reader's failures: each one error code and a reason naming the file, never a count. */
static int run_on(const char *path, const char *bytes, size_t n, char *err, size_t errsz)
{
    static drift_tc_hw_count_t cnt[DRIFT_TC_HW_MAXCFG];
    if (bytes) {
        FILE *fp = fopen(path, "wb");
        cr_assert(fp);
        cr_assert_eq(fwrite(bytes, 1, n, fp), n);
        fclose(fp);
    }
    int rc = drift_tc_hw_run(cnt, DRIFT_TC_HW_MAXCFG, path, 1, err, errsz);
    if (bytes) remove(path);
    return rc;
}

Test(tc_hw, bad_files_are_one_error)
{
    char why[512];
    cr_assert_eq(run_on("/nonexistent/tc_hw.bin.xz", NULL, 0, why, sizeof why), DRIFT_EIO);
    cr_assert(strstr(why, "cannot open"), "%s", why);
    /* one V100 fp16 record is 2*4*2 + 8 + 2 = 26 bytes; this section promises 2 and holds 1 */
    char rec[128] = "drift-tc-hw 1 V100 fp16 4 2 fp32+fp16 c\n";
    size_t h = strlen(rec);
    memset(rec + h, 0, 26);
    cr_assert_eq(run_on("/tmp/test_tc_hw_trunc.bin", rec, h + 26, why, sizeof why), DRIFT_EIO);
    cr_assert(strstr(why, "truncated"), "%s", why);
    cr_assert_eq(run_on("/tmp/test_tc_hw_bad.bin", "drift-tc-hw 2 V100\n", 19, why, sizeof why), DRIFT_EINVAL);
    cr_assert(strstr(why, "malformed"), "%s", why);
    cr_assert_eq(run_on("/tmp/test_tc_hw_empty.bin", "", 0, why, sizeof why), DRIFT_EIO);
    cr_assert_eq(run_on("/tmp/test_tc_hw_notxz.xz", "not xz", 6, why, sizeof why), DRIFT_EIO);
    /* one complete record: read, counted (all-zero inputs, c = 0: the model gives +0, as stored) */
    static drift_tc_hw_count_t cnt[DRIFT_TC_HW_MAXCFG];
    FILE *fp = fopen("/tmp/test_tc_hw_one.bin", "wb");
    cr_assert(fp);
    fprintf(fp, "drift-tc-hw 1 V100 fp16 4 1 fp32+fp16 c\n");
    fwrite(rec + h, 1, 26, fp);
    fclose(fp);
    int n = drift_tc_hw_run(cnt, DRIFT_TC_HW_MAXCFG, "/tmp/test_tc_hw_one.bin", 1, why, sizeof why);
    remove("/tmp/test_tc_hw_one.bin");
    cr_assert_eq(n, 2, "%s", why);
    cr_assert_eq(cnt[0].samples, 1);
    cr_assert_eq(cnt[0].mismatches, 0);
    cr_assert_eq(cnt[1].out, DRIFT_FP16);
}
