/* kv_run.c — what the KV-cache experiments share (kv_run.h). */
#include "kv_run.h"

#include <string.h>

#include "cli.h"
#include "drift.h"
#include "gen.h"
#include "philox.h"

int drift_kv_format_list(
    drift_kv_format_t *f, char (*names)[32], const char *opt, const char *list, const char *accepted)
{
    char buf[512], err[DRIFT_ERRMSG_MAX];
    int n = 0;
    if (strlen(list) >= sizeof buf || !list[0])
        drift_die("%s: a comma-separated list of KV storage formats (accepted: %s)", opt, accepted);
    strcpy(buf, list);
    for (char *s = strtok(buf, ","); s; s = strtok(NULL, ",")) {
        if (n == DRIFT_KV_MAX) drift_die("%s: at most %d formats", opt, DRIFT_KV_MAX);
        if (drift_kv_format_parse(&f[n], s, err, sizeof err)) drift_die("%s: %s (accepted: %s)", opt, err, accepted);
        drift_kv_format_print(names[n], sizeof names[n], &f[n]);
        for (int j = 0; j < n; j++) /* compared as parsed: fp32,FP32 is one format twice */
            if (f[j].storage == f[n].storage && f[j].fmt == f[n].fmt)
                drift_die("%s: '%s' given twice (the same format as '%s')", opt, s, names[j]);
        n++;
    }
    if (!n) drift_die("%s: empty list (accepted: %s)", opt, accepted);
    return n;
}

void drift_kv_require_heads(long heads, long kv_heads)
{
    if (heads % kv_heads)
        drift_die("--heads: %ld is not a multiple of --kv-heads %ld (accepted: heads = k * kv-heads)", heads, kv_heads);
}

void drift_kv_fill(double *x, size_t n, uint64_t seed, uint32_t point, uint32_t trial)
{
    drift_stream_t st;
    drift_stream_init(&st, seed, drift_fnv1a32("kv_cache"), point, trial);
    drift_gen_fill(x, n, DRIFT_DIST_NORMAL, &st);
}
