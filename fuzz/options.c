/* fuzz/options.c — the option parser (cli.h) on any argv: the bytes split at NUL into at
 * most 24 arguments. A refusal (drift_die) longjmps back through the die hook; a success must
 * leave every value in its declared range. --help/--version/--describe (they print and exit 0)
 * and --out (it probes the file system), in either spelling (--out DIR, --out=DIR), are left out. */
#include "common.h"
#include "cli.h"
#include "drift.h"

#include <math.h>
#include <setjmp.h>
#include <stdio.h>

static jmp_buf back;
static void die_hook(void) { longjmp(back, 1); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 2048) return 0;
    static char buf[2049];
    memcpy(buf, data, size);
    buf[size] = 0;
    char *argv[26] = {"fuzz"};
    int argc = 1;
    for (size_t i = 0; i <= size && argc < 25;) {
        argv[argc++] = buf + i;
        i += strlen(buf + i) + 1;
    }
    /* by prefix: --out=DIR probes the file system as --out DIR does, and --help=x must not be
     * mistaken for a harmless word (it is refused, but --help itself exits) */
    for (int i = 1; i < argc; i++)
        if (!strncmp(argv[i], "--help", 6) || !strcmp(argv[i], "-h") || !strncmp(argv[i], "--version", 9) ||
            !strncmp(argv[i], "--describe", 10) || !strncmp(argv[i], "--out", 5))
            return 0;
    static long n;
    static drift_intlist_t ks;
    static drift_dbllist_t xs;
    static double t;
    static const char *name, *list;
    static int flag;
    n = 0, t = 0, name = list = NULL, flag = 0;
    memset(&ks, 0, sizeof ks);
    memset(&xs, 0, sizeof xs);
    const drift_cli_opt_t opts[] = {
        {"K", DRIFT_OPT_INTLIST, &ks, "N,N,...", "sizes", 1, 1 << 20, {"64", "64,128", "64,128,256"}},
        {"N", DRIFT_OPT_INT, &n, "N", "count", 2, 4096, {"16", "32", "64"}},
        {"T", DRIFT_OPT_DOUBLE, &t, "X", "temperature", 0, 0, {0}},
        {"xs", DRIFT_OPT_DOUBLELIST, &xs, "X,X,...", "values", 0, 0, {0}},
        {"device", DRIFT_OPT_STRING, &name, "NAME", "device", 0, 0, {0}},
        {"accs", DRIFT_OPT_LIST, &list, "LIST", "accumulators", 0, 0, {0}},
        {"trials", DRIFT_OPT_FLAG, &flag, "", "flag", 0, 0, {0}},
    };
    const drift_cli_spec_t spec = {.name = "fuzz",
        .question = "?",
        .default_formats = "fp32,bf16",
        .default_orders = "seq,pairwise",
        .opts = opts,
        .nopts = 7};
    drift_cli_t cli;
    drift_set_die_hook(die_hook);
    static FILE *devnull;
    if (!devnull) devnull = fopen("/dev/null", "w");
    FILE *err = stderr; /* the one-line refusals, by the million: the FILE, not fd 2 (ASan's) */
    stderr = devnull;
    if (setjmp(back) == 0) {
        drift_cli_parse(&cli, &spec, argc, argv);
        if (n < 2 || n > 4096 || ks.n < 1 || ks.n > DRIFT_LIST_MAX || !isfinite(t)) abort();
        for (int i = 0; i < ks.n; i++)
            if (ks.v[i] < 1 || ks.v[i] > (1 << 20)) abort();
        for (int i = 0; i < ks.n; i++)
            for (int j = 0; j < i; j++)
                if (ks.v[i] == ks.v[j]) abort(); /* duplicates are refused */
        if (cli.threads < 0 || cli.threads > drift_threads_max() || cli.nformats < 1 || cli.norders < 1) abort();
    }
    stderr = err;
    return 0;
}
