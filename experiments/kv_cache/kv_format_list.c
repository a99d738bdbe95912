/* kv_format_list.c — an option's list of KV storage formats (kv_format_list.h). */
#include "kv_format_list.h"

#include <string.h>

#include "cli.h"
#include "drift.h"

int drift_kv_format_list(
    drift_kv_format_t *f, char (*names)[32], const char *opt, const char *list, const char *accepted)
{
    char buf[512], err[DRIFT_ERRMSG_MAX];
    int n = 0;
    if (strlen(list) >= sizeof buf || !list[0])
        drift_die("%s: a comma-separated list of KV storage formats (accepted: %s)", opt, accepted);
    strcpy(buf, list);
    for (char *s = strtok(buf, ","); s; s = strtok(NULL, ",")) {
        if (n == MAX_KV) drift_die("%s: at most %d formats", opt, MAX_KV);
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
