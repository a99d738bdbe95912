/* tc_hw.c — reader of the measured tensor-core outputs and their run through the model (tc_hw.h). */
#define _POSIX_C_SOURCE 200809L /* popen, pclose */
#include "tc_hw.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "drift.h"
#include "why.h"
#include "tc_model.h"

#ifndef DRIFT_SOURCE_DIR
#define DRIFT_SOURCE_DIR "."
#endif

const char *drift_tc_hw_default_path(void) { return DRIFT_SOURCE_DIR "/tests/tc_hw/tc_hw.bin.xz"; }

static const struct {
    const char *gpu;
    drift_tc_arch_t arch;
} GPU_ARCH[] = {{"V100", DRIFT_TC_V100}, {"A100", DRIFT_TC_A100}, {"A2", DRIFT_TC_A2}, {"Ada", DRIFT_TC_ADA},
    {"L40S", DRIFT_TC_L40S}, {"H100", DRIFT_TC_H100}, {"H200", DRIFT_TC_H200}, {"B200", DRIFT_TC_B200}};

int drift_tc_hw_arch(drift_tc_arch_t *arch, const char *gpu)
{
    for (size_t i = 0; i < sizeof GPU_ARCH / sizeof GPU_ARCH[0]; i++)
        if (!strcmp(gpu, GPU_ARCH[i].gpu)) return *arch = GPU_ARCH[i].arch, 0;
    return DRIFT_EINVAL;
}

int drift_tc_hw_unmodelled(const char *gpu, drift_format_t in, drift_format_t out)
{
    (void)gpu, (void)in, (void)out; /* every measured configuration has a model (tc_hw.h) */
    return 0;
}

static uint32_t le(const unsigned char *p, int w)
{
    uint32_t v = 0;
    for (int i = w - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static double f32(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* One input value from its bits in the file's encoding: tf32 is stored as the fp32 pattern. */
static double input(uint32_t bits, drift_format_t in) { return in == DRIFT_TF32 ? f32(bits) : drift_decode(bits, in); }

static int same(double x, double y) { return (isnan(x) && isnan(y)) || (x == y && signbit(x) == signbit(y)); }

static void count(drift_tc_hw_count_t *c, long s, double got, double want)
{
    c->samples++;
    if (!same(got, want) && c->mismatches++ == 0) c->first_index = s, c->first_got = got, c->first_want = want;
}

static drift_tc_hw_count_t *slot(drift_tc_hw_count_t *cnt, int *n, int max, const char *gpu, const char *fmt,
    drift_format_t in, drift_format_t out, drift_tc_arch_t arch, int K, int c0)
{
    for (int i = 0; i < *n; i++)
        if (!strcmp(cnt[i].gpu, gpu) && !strcmp(cnt[i].fmt, fmt) && cnt[i].out == out) return &cnt[i];
    if (*n >= max) return NULL;
    drift_tc_hw_count_t *c = &cnt[(*n)++];
    memset(c, 0, sizeof *c);
    snprintf(c->gpu, sizeof c->gpu, "%s", gpu);
    snprintf(c->fmt, sizeof c->fmt, "%s", fmt);
    c->in = in, c->out = out, c->arch = arch, c->K = K, c->c0 = c0 && out == DRIFT_FP32, c->first_index = -1;
    c->unmodelled = drift_tc_hw_unmodelled(gpu, in, out);
    return c;
}

/* The sections of an open stream; 0 sections is an error (an empty or undecodable file). */
static int run_stream(
    drift_tc_hw_count_t *cnt, int max, FILE *fp, const char *path, long stride, char *err, size_t errsz)
{
    int n = 0, sections = 0;
    char line[256];
    while (fgets(line, sizeof line, fp)) {
        char gpu[16], fmt[16], outs[16], cmode[16];
        int ver, K;
        long N;
        if (sscanf(line, "drift-tc-hw %d %15s %15s %d %ld %15s %15s", &ver, gpu, fmt, &K, &N, outs, cmode) != 7 ||
            ver != 1 || K < 1 || K > DRIFT_TC_HW_MAXK || N < 1)
            return drift_why(err, errsz, DRIFT_EINVAL,
                "%s: malformed section header %d (expected 'drift-tc-hw 1 GPU FORMAT K N OUTPUTS CMODE', K <= %d)",
                path, sections + 1, DRIFT_TC_HW_MAXK);
        drift_format_t in;
        const char *fname = !strcmp(fmt, "E4M3") ? "fp8e4m3" : !strcmp(fmt, "E5M2") ? "fp8e5m2" : fmt;
        if (drift_format_parse(&in, fname) || in == DRIFT_FP32 || in == DRIFT_FP64)
            return drift_why(
                err, errsz, DRIFT_EINVAL, "%s: section %d: unknown input format '%s'", path, sections + 1, fmt);
        drift_tc_arch_t arch;
        if (drift_tc_hw_arch(&arch, gpu))
            return drift_why(err, errsz, DRIFT_EINVAL, "%s: section %d: unknown GPU '%s'", path, sections + 1, gpu);
        int has16 = !strcmp(outs, "fp32+fp16"), c0 = !strcmp(cmode, "c0fp32");
        if ((!has16 && strcmp(outs, "fp32")) || (!c0 && strcmp(cmode, "c")))
            return drift_why(err, errsz, DRIFT_EINVAL,
                "%s: section %d: outputs '%s' / c mode '%s' (accepted: fp32, fp32+fp16 / c, c0fp32)", path,
                sections + 1, outs, cmode);
        sections++;
        int w = in == DRIFT_TF32 ? 4 : drift_format_info(in)->bits / 8;
        size_t rec = (size_t)(2 * K * w + 8 + (has16 ? 2 : 0));
        drift_tc_hw_count_t *c32 = slot(cnt, &n, max, gpu, fmt, in, DRIFT_FP32, arch, K, c0);
        drift_tc_hw_count_t *c16 = has16 ? slot(cnt, &n, max, gpu, fmt, in, DRIFT_FP16, arch, K, c0) : NULL;
        if (!c32 || (has16 && !c16))
            return drift_why(err, errsz, DRIFT_ERANGE, "%s: more than %d configurations", path, max);
        unsigned char buf[2 * DRIFT_TC_HW_MAXK * 4 + 10];
        for (long s = 0; s < N; s++) {
            if (fread(buf, 1, rec, fp) != rec)
                return drift_why(
                    err, errsz, DRIFT_EIO, "%s: truncated: %s %s stops at sample %ld of %ld", path, gpu, fmt, s, N);
            if (s % stride) continue;
            double a[DRIFT_TC_HW_MAXK], b[DRIFT_TC_HW_MAXK];
            for (int k = 0; k < K; k++)
                a[k] = input(le(buf + k * w, w), in), b[k] = input(le(buf + (K + k) * w, w), in);
            const unsigned char *t = buf + 2 * K * w;
            double c = f32(le(t, 4)), c32v = c0 ? 0.0 : c, got;
            int rc = drift_tc_dot(&got, a, b, (size_t)K, &c32v, arch, in, DRIFT_FP32);
            if (rc) return drift_why(err, errsz, rc, "%s: %s %s sample %ld: %s", path, gpu, fmt, s, drift_strerror(rc));
            count(c32, s, got, f32(le(t + 4, 4)));
            if (!c16) continue;
            rc = drift_tc_dot(&got, a, b, (size_t)K, &c, arch, in, DRIFT_FP16);
            if (rc)
                return drift_why(
                    err, errsz, rc, "%s: %s %s sample %ld (fp16 output): %s", path, gpu, fmt, s, drift_strerror(rc));
            count(c16, s, got, drift_decode(le(t + 8, 2), DRIFT_FP16));
        }
    }
    if (!sections) return drift_why(err, errsz, DRIFT_EIO, "%s: no data (empty, or not the tc_hw stream)", path);
    return n;
}

int drift_tc_hw_run(drift_tc_hw_count_t *cnt, int maxcnt, const char *path, long stride, char *err, size_t errsz)
{
    if (!path) path = drift_tc_hw_default_path();
    if (stride < 1 || !cnt || maxcnt < 1) return drift_why(err, errsz, DRIFT_EINVAL, "tc_hw: stride must be >= 1");
    FILE *probe = fopen(path, "rb");
    if (!probe) return drift_why(err, errsz, DRIFT_EIO, "%s: cannot open (%s)", path, strerror(errno));
    size_t len = strlen(path);
    int xz = len > 3 && !strcmp(path + len - 3, ".xz");
    if (!xz) {
        int n = run_stream(cnt, maxcnt, probe, path, stride, err, errsz);
        if (ferror(probe) && n >= 0) n = drift_why(err, errsz, DRIFT_EIO, "%s: read error", path);
        fclose(probe);
        return n;
    }
    fclose(probe);
    if (strchr(path, '\'')) return drift_why(err, errsz, DRIFT_EINVAL, "%s: a quote in the path of an xz file", path);
    char cmd[4200];
    if ((size_t)snprintf(cmd, sizeof cmd, "xz -dc -- '%s' 2>/dev/null", path) >= sizeof cmd)
        return drift_why(err, errsz, DRIFT_EINVAL, "tc_hw: path too long");
    FILE *fp = popen(cmd, "r");
    if (!fp) return drift_why(err, errsz, DRIFT_EIO, "%s: cannot run xz -dc (xz-utils)", path);
    int n = run_stream(cnt, maxcnt, fp, path, stride, err, errsz);
    int status = pclose(fp);
    if (n >= 0 && status != 0)
        n = drift_why(
            err, errsz, DRIFT_EIO, "%s: xz -dc failed (corrupt or truncated xz stream, or no xz program)", path);
    return n;
}
