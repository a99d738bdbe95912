/* test_calc_npy.c — `drift-calc argmax` (and every calc FILE) reads NumPy .npy arrays: the
 * same numbers as text give the same row; a truncated or malformed file gives one line on
 * stderr and exit 2. The .npy files are built here byte by byte from the format's spec
 * (numpy/lib/format.py: magic, version, little-endian header length, dict, 64-byte padding). */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "support.h"

#define CALC DRIFT_BIN_DIR "/drift-calc"

static char dir[64];

static void setup(void) { tmpdir_make(dir, sizeof dir, "npy"); }
static void teardown(void) { tmpdir_remove(dir); }

/* Writes DIR/name: a version-1.0 .npy with the given header dict and raw data (cut to
 * data_len bytes, or followed by extra bytes, as the case wants). */
static void write_npy(const char *name, const char *magic, const char *dict, const void *data, size_t data_len)
{
    char path[128], hdr[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    size_t len = (size_t)snprintf(hdr, sizeof hdr, "%s", dict);
    while ((10 + len + 1) % 64) hdr[len++] = ' ';
    hdr[len++] = '\n';
    FILE *fp = fopen(path, "wb");
    cr_assert(fp);
    fwrite(magic, 1, 6, fp);
    fputc(1, fp);
    fputc(0, fp);
    fputc((int)(len & 0xff), fp);
    fputc((int)(len >> 8), fp);
    fwrite(hdr, 1, len, fp);
    fwrite(data, 1, data_len, fp);
    fclose(fp);
}

static const double H[4] = {1, 1, 1, 1};
/* Exercise 8 of the workshop: exact logits 2049.5, 2050, 2000 */
static const float W[12] = {2048, 1.5f, 0, 0, 2048, 1, 1, 0, 1000, 1000, 0, 0};

Test(calc_npy, same_row_as_text, .init = setup, .fini = teardown)
{
    write_npy("h.npy", "\x93NUMPY", "{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }", H, sizeof H);
    write_npy("w.npy", "\x93NUMPY", "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }", W, sizeof W);
    char a[1024], b[1024], cmd[512];
    snprintf(cmd, sizeof cmd, CALC " argmax --format fp16 --order seq %s/h.npy %s/w.npy", dir, dir);
    cr_assert_eq(run_stdout(cmd, a, sizeof a), 0);
    snprintf(cmd, sizeof cmd,
        CALC " argmax --format fp16 --order seq " DRIFT_SOURCE_DIR "/docs/examples/h.txt " DRIFT_SOURCE_DIR
             "/docs/examples/w.txt");
    cr_assert_eq(run_stdout(cmd, b, sizeof b), 0);
    cr_assert_str_eq(a, b);
    /* float16 data: 1.0 is 0x3c00 (IEEE binary16), four of them; exact sum 4 */
    const uint16_t h16[4] = {0x3c00, 0x3c00, 0x3c00, 0x3c00};
    write_npy("h16.npy", "\x93NUMPY", "{'descr': '<f2', 'fortran_order': False, 'shape': (4,), }", h16, sizeof h16);
    snprintf(cmd, sizeof cmd, CALC " exact %s/h16.npy", dir);
    cr_assert_eq(run_stdout(cmd, a, sizeof a), 0);
    cr_assert_str_eq(a, "n,exact_hex,exact\n4,0x1p+2,4\n");
}

typedef struct {
    const char *magic, *dict;
    long cut; /* data bytes: -1 all, else that many (>= 0), or all plus 8 when -2 */
    const char *msg;
} bad_t;

Test(calc_npy, malformed_files_exit_2_with_one_line, .init = setup, .fini = teardown)
{
    static const bad_t BAD[] = {
        {"\x93NUMPZ", "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }", -1, "magic"},
        {"\x93NUMPY", "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }", 40, "truncated"},
        {"\x93NUMPY", "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }", -2, "trailing"},
        {"\x93NUMPY", "{'descr': '>f4', 'fortran_order': False, 'shape': (3, 4), }", -1, "dtype"},
        {"\x93NUMPY", "{'descr': '<i4', 'fortran_order': False, 'shape': (3, 4), }", -1, "dtype"},
        {"\x93NUMPY", "{'descr': '<f4', 'fortran_order': True, 'shape': (3, 4), }", -1, "Fortran"},
        {"\x93NUMPY", "{'descr': '<f4', 'fortran_order': False, 'shape': (3, x), }", -1, "shape"},
        {"\x93NUMPY", "{'descr': '<f4', 'fortran_order': False, 'shape': (0,), }", 0, "empty"},
        {"\x93NUMPY", "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999, 9999999999), }", -1,
            "large"},
        {"\x93NUMPY", "{'descr': '<f4', 'shape': (3, 4), }", -1, "fortran_order"},
        /* the header is a dict with the three keys once each (numpy.load refuses the rest too) */
        {"\x93NUMPY", "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), 'descr': '<f8', }", -1, "given twice"},
        {"\x93NUMPY", "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), 'shape': (12,), }", -1, "given twice"},
        {"\x93NUMPY", "['descr', '<f4', 'fortran_order', False, 'shape', (3, 4)]", -1, "not a dict"},
        {"\x93NUMPY", "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), 'extra': 1, }", -1, "other than"},
        {"\x93NUMPY", "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), } {'shape': (12,)}", -1,
            "after the dict"},
        {"\x93NUMPY", "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4) 'x'}", -1, "no ','"},
        {"\x93NUMPY", "{descr: '<f4', 'fortran_order': False, 'shape': (3, 4), }", -1, "quoted"},
    };
    float data[14] = {0};
    memcpy(data, W, sizeof W);
    write_npy("h.npy", "\x93NUMPY", "{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }", H, sizeof H);
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        size_t len = BAD[i].cut == -1 ? sizeof W : BAD[i].cut == -2 ? sizeof W + 8 : (size_t)BAD[i].cut;
        write_npy("w.npy", BAD[i].magic, BAD[i].dict, data, len);
        char out[256], err[512], cmd[512];
        snprintf(cmd, sizeof cmd, CALC " argmax --format fp16 --order seq %s/h.npy %s/w.npy", dir, dir);
        int rc = run_capture(cmd, out, sizeof out, err, sizeof err);
        cr_expect_eq(rc, 2, "case %zu (%s): exit %d", i, BAD[i].msg, rc);
        cr_expect_str_empty(out, "case %zu: partial output '%s'", i, out);
        cr_expect(strstr(err, BAD[i].msg) != NULL, "case %zu: '%s' not in '%s'", i, BAD[i].msg, err);
        cr_expect(strchr(err, '\n') == err + strlen(err) - 1, "case %zu: not one line: '%s'", i, err);
    }
}
