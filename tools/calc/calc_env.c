/* calc_env.c — `drift-calc env`: the environment snapshot that every data file carries in
 * its metadata (lib/envinfo), printed on its own so a report or a bug report can quote it.
 *
 * CSV on stdout: header `key,value`, one row per item. A value that contains a comma or a
 * quote (the CUDA line does: "runtime X, driver Y, GPU Z") is quoted RFC 4180 style, so
 * every CSV reader splits the rows correctly. */
#include <stdio.h>
#include <string.h>

#include "calc.h"
#include "cli.h"
#include "output.h"
#include "drift.h"
#include "envinfo.h"

static void row(const char *key, const char *value)
{
    if (!strpbrk(value, ",\"\n")) {
        printf("%s,%s\n", key, value);
        return;
    }
    printf("%s,\"", key);
    for (const char *p = value; *p; p++) {
        if (*p == '"') putchar('"');
        putchar(*p == '\n' ? ' ' : *p);
    }
    printf("\"\n");
}

static void usage(FILE *to)
{
    fprintf(to, "usage: drift-calc env\nprints the environment snapshot as CSV: key,value\n");
}

int calc_env(int argc, char **argv)
{
    drift_args_parse(NULL, 0, NULL, 0, argc, argv, usage);
    drift_envinfo_t e;
    drift_envinfo_collect(&e);
    printf("key,value\n");
    row("driftlab", DRIFT_VERSION);
    row("git", e.git);
    row("compiler", e.compiler);
    row("cflags", e.cflags);
    row("mpfr", e.mpfr);
    row("gmp", e.gmp);
    row("cpu", e.cpu);
    row("os", e.os);
    row("cuda", e.cuda);
    return drift_stdout_close_check(); /* a failed write is one line naming its cause, status 2 */
}
