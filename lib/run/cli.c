/* cli.c — strict option parsing shared by every experiment and tool.
 *
 * Strict means: a number is the whole argument (no trailing junk), fits its type, and lies
 * in the accepted range; a list is comma-separated with no empty items; any violation
 * names the option and what it accepts, and exits 2 before anything is written. */
#include "cli.h"
#include "table.h"
#include "backend.h"
#include "cards.h"
#include "lmhead.h"
#include "decimal.h"
#include "escape.h"
#include "output.h"
#include "outlock.h"
#include "drift.h"
#include "why.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static char program[96] = "drift";

void drift_set_program(const char *name)
{
    snprintf(program, sizeof program, "%s", name);
    /* Every program names itself first: from here on its stdout is checked at exit (a --help,
     * --version or calc answer to a full device exited 0 or 1 without a word). Registered
     * before any other handler, so that it runs last, after them. */
    drift_stdout_check_at_exit();
}

const char *drift_program(void) { return program; }

static void (*die_hook)(void);

void drift_set_die_hook(void (*hook)(void)) { die_hook = hook; }

noreturn void drift_die(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", program);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    if (die_hook) die_hook(); /* a fuzz target's longjmp: it does not return here */
    exit(2);
}

noreturn void drift_die_oom(double bytes, const char *fmt, ...)
{
    char what[256], why[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    drift_why_oom(why, sizeof why, bytes, "%s", what);
    drift_die("%s", why);
}

/* A number starts with a digit (or '-' and a digit where a sign is allowed): strtol and strtod
 * would skip leading blanks and take a '+', so ' -1' and '+5' slipped through. */
static int strict_start(const char *s, int sign_ok)
{
    if (sign_ok && *s == '-') s++;
    return (*s >= '0' && *s <= '9') || *s == '.' || (sign_ok == 2 && (*s == 'i' || *s == 'I' || *s == 'n' || *s == 'N'));
}

int drift_parse_long(long *out, const char *s)
{
    if (!s || !*s || !strict_start(s, 1)) return DRIFT_EINVAL;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || end == s) return DRIFT_EINVAL;
    *out = v;
    return DRIFT_OK;
}

int drift_parse_double(double *out, const char *s)
{
    if (!s || !*s || !strict_start(s, 2)) return DRIFT_EINVAL;
    /* The exact value of the text rounded once (decimal.h), the same parser as calc's inputs. */
    double v;
    if (drift_decimal_round(&v, s, DRIFT_FP64, NULL, 0) != DRIFT_OK) return DRIFT_EINVAL;
    /* A value that rounds to inf without being written as inf overflowed: an error; one that
     * underflows gives the correctly rounded subnormal or zero, which is what 1e-320 means. */
    if (isinf(v) && !strpbrk(s, "iI")) return DRIFT_EINVAL;
    *out = v;
    return DRIFT_OK;
}

static const char *const PROFILE_NAMES[] = {"quick", "default", "full"};
static const char *const BACKEND_NAMES[] = {"auto", "cpu", "cuda"};

const char *drift_profile_name(drift_profile_t p) { return (unsigned)p < 3 ? PROFILE_NAMES[p] : "?"; }

long drift_by_profile(const drift_cli_t *cli, long quick, long def, long full)
{
    return cli->profile == DRIFT_PROFILE_QUICK ? quick : cli->profile == DRIFT_PROFILE_FULL ? full : def;
}

static int pick(const char *const *names, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(names[i], s)) return i;
    return -1;
}

drift_format_t drift_format_arg(const char *opt, const char *value)
{
    drift_format_t f;
    if (drift_format_parse(&f, value) != DRIFT_OK) drift_die_format(opt, value);
    return f;
}

noreturn void drift_die_format(const char *opt, const char *value)
{
    const char *names[DRIFT_NFORMATS + 64];
    int n = 0;
    char accepted[256] = "", hint[96];
    for (int i = 0; i < DRIFT_NFORMATS; i++) {
        names[n++] = drift_format_name((drift_format_t)i);
        size_t l = strlen(accepted);
        snprintf(accepted + l, sizeof accepted - l, "%s%s", i ? ", " : "", names[n - 1]);
    }
    for (int i = 0; n < DRIFT_NFORMATS + 64 && drift_format_alias(i, NULL); i++) names[n++] = drift_format_alias(i, NULL);
    drift_suggest_text(hint, sizeof hint, value, names, n, NULL);
    drift_die("%s: unknown format '%s' (%saccepted: %s, in any case, or PyTorch's names bfloat16, float16, half, "
              "float32, float64, float8_e4m3fn, float8_e5m2)",
              opt, value, hint, accepted);
}

const char *drift_order_grammar(void)
{
    static char text[768];
    if (text[0]) return text;
    int n = snprintf(text, sizeof text, "seq, rev, pairwise, blocked:B, splitk:S, splitk:S:tree, warp:W (W a power of two), "
                                        "kahan, neumaier, random:SEED, tc:MODEL with MODEL one of ");
    for (int a = 0; a < DRIFT_TC_NARCH && n > 0 && (size_t)n < sizeof text; a++)
        n += snprintf(text + n, sizeof text - (size_t)n, "%s%s", a ? "|" : "", drift_tc_arch_name((drift_tc_arch_t)a));
    if (n > 0 && (size_t)n < sizeof text) snprintf(text + n, sizeof text - (size_t)n, " or a card name (./lab calc cards)");
    return text;
}

const char *drift_tc_names(void)
{
    static char text[768];
    if (text[0]) return text;
    int n = snprintf(text, sizeof text, "tc:MODEL with MODEL one of ");
    for (int a = 0; a < DRIFT_TC_NARCH && n > 0 && (size_t)n < sizeof text; a++)
        n += snprintf(text + n, sizeof text - (size_t)n, "%s%s", a ? ", " : "", drift_tc_arch_name((drift_tc_arch_t)a));
    if (n > 0 && (size_t)n < sizeof text) n += snprintf(text + n, sizeof text - (size_t)n, ", or tc:CARD with CARD one of ");
    if (n > 0 && (size_t)n < sizeof text) drift_card_names(text + n, sizeof text - (size_t)n);
    n = (int)strlen(text);
    if ((size_t)n + 1 < sizeof text) snprintf(text + n, sizeof text - (size_t)n, ", in any case");
    return text;
}

void drift_die_tc(const char *opt, const char *name, const char *within)
{
    const char *names[DRIFT_TC_NARCH + 64];
    int n = 0;
    for (int a = 0; a < DRIFT_TC_NARCH; a++) names[n++] = drift_tc_arch_name((drift_tc_arch_t)a);
    for (const drift_card_t *c; n < (int)(sizeof names / sizeof names[0]) && (c = drift_card_at(n - DRIFT_TC_NARCH));)
        names[n++] = c->name;
    char hint[96], shown[160], in[200] = "";
    drift_suggest_text(hint, sizeof hint, name, names, n, NULL);
    drift_escape(shown, sizeof shown, name, NULL); /* one line whatever was typed */
    if (within) {
        char w[160];
        drift_escape(w, sizeof w, within, NULL);
        snprintf(in, sizeof in, " in '%s'", w);
    }
    drift_die("%s: unknown tensor-core model or card '%s'%s (%saccepted: %s)", opt, shown, in, hint, drift_tc_names());
}

/* Splits a comma list into items; dies on an empty item. Returns the count. */
static int split_list(const char *opt, const char *value, char items[][DRIFT_ORDER_SPEC_MAX], int max)
{
    int n = 0;
    const char *p = value;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == 0) drift_die("--%s: empty item in list '%s'", opt, value);
        if (len >= DRIFT_ORDER_SPEC_MAX)
            drift_die("--%s: item '%.*s' is too long (accepted: at most %d characters)", opt, (int)len, p, DRIFT_ORDER_SPEC_MAX - 1);
        if (n == max) drift_die("--%s: more than %d items (accepted: at most %d, comma-separated)", opt, max, max);
        memcpy(items[n], p, len);
        items[n][len] = 0;
        for (int j = 0; j < n; j++) /* a repeated item repeats rows: refused in every list alike */
            if (!strcmp(items[j], items[n])) drift_die("--%s: '%s' given twice", opt, items[n]);
        n++;
        if (!comma) break;
        p = comma + 1;
    }
    return n;
}

static void parse_formats(drift_cli_t *cli, const char *value)
{
    cli->nformats = 0;
    if (!value) return; /* an experiment that takes no formats (spec default NULL) */
    char items[DRIFT_NFORMATS * 2][DRIFT_ORDER_SPEC_MAX];
    int n = split_list("formats", value, items, DRIFT_NFORMATS * 2);
    for (int i = 0; i < n; i++) {
        drift_format_t f;
        if (drift_format_parse(&f, items[i]) != DRIFT_OK) drift_die_format("--formats", items[i]);
        for (int j = 0; j < cli->nformats; j++)
            if (cli->formats[j] == f) drift_die("--formats: '%s' given twice", items[i]);
        if (cli->nformats == DRIFT_NFORMATS) drift_die("--formats: too many formats");
        cli->formats[cli->nformats++] = f;
    }
}

/* Orders contain commas only inside tiled specs, which are kernels, not orders; a list of
 * orders is therefore split on commas, but "splitk:4:tree" etc. stay whole. */
static void parse_orders(drift_cli_t *cli, const char *value)
{
    cli->norders = 0;
    if (!value) return; /* an experiment that takes no orders (spec default NULL) */
    char items[DRIFT_MAX_ORDERS][DRIFT_ORDER_SPEC_MAX];
    int n = split_list("orders", value, items, DRIFT_MAX_ORDERS);
    for (int i = 0; i < n; i++)
        if (drift_order_parse_card(&cli->orders[i], items[i]) != DRIFT_OK) {
            if (!strncmp(items[i], "tc:", 3)) drift_die_tc("--orders", items[i] + 3, items[i]);
            drift_die("--orders: malformed order spec '%s' (accepted: %s)", items[i], drift_order_grammar());
        }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (drift_order_equal(&cli->orders[i], &cli->orders[j]))
                drift_die("--orders: '%s' given twice ('%s' is the same order)", items[i], items[j]);
    cli->norders = n;
}

static void check_range(const drift_cli_opt_t *o, long v)
{
    if (v < o->min || (o->max && v > o->max)) {
        if (o->max)
            drift_die("--%s: %ld is out of range (accepted: %ld..%ld)", o->name, v, o->min, o->max);
        drift_die("--%s: %ld is out of range (accepted: >= %ld)", o->name, v, o->min);
    }
}

static void parse_extra(const drift_cli_opt_t *o, const char *value)
{
    switch (o->type) {
    case DRIFT_OPT_INT: {
        long v;
        if (drift_parse_long(&v, value)) drift_die("--%s: '%s' is not an integer (accepted: %s)", o->name, value, o->metavar);
        check_range(o, v);
        *(long *)o->dest = v;
        break;
    }
    case DRIFT_OPT_INTLIST: {
        char items[DRIFT_LIST_MAX][DRIFT_ORDER_SPEC_MAX];
        drift_intlist_t *l = o->dest;
        int n = split_list(o->name, value, items, DRIFT_LIST_MAX);
        for (int i = 0; i < n; i++) {
            if (drift_parse_long(&l->v[i], items[i]))
                drift_die("--%s: '%s' is not an integer (accepted: %s)", o->name, items[i], o->metavar);
            check_range(o, l->v[i]);
            for (int j = 0; j < i; j++)
                if (l->v[j] == l->v[i]) drift_die("--%s: %ld given twice", o->name, l->v[i]);
        }
        l->n = n;
        break;
    }
    case DRIFT_OPT_DOUBLE: {
        double v;
        if (drift_parse_double(&v, value) || !isfinite(v))
            drift_die("--%s: '%s' is not a finite number (accepted: %s)", o->name, value, o->metavar);
        *(double *)o->dest = v;
        break;
    }
    case DRIFT_OPT_DOUBLELIST: {
        char items[DRIFT_LIST_MAX][DRIFT_ORDER_SPEC_MAX];
        drift_dbllist_t *l = o->dest;
        int n = split_list(o->name, value, items, DRIFT_LIST_MAX);
        for (int i = 0; i < n; i++)
            if (drift_parse_double(&l->v[i], items[i]) || !isfinite(l->v[i]))
                drift_die("--%s: '%s' is not a finite number (accepted: %s)", o->name, items[i], o->metavar);
        for (int i = 0; i < n; i++)
            for (int j = 0; j < i; j++)
                if (l->v[j] == l->v[i]) drift_die("--%s: '%s' given twice (the same value as '%s')", o->name, items[i], items[j]);
        l->n = n;
        break;
    }
    case DRIFT_OPT_STRING:
        if (!*value) drift_die("--%s: empty value (accepted: %s)", o->name, o->metavar);
        *(const char **)o->dest = value;
        break;
    case DRIFT_OPT_LIST: { /* checked as a list here; the program reads the items itself */
        char items[DRIFT_LIST_MAX][DRIFT_ORDER_SPEC_MAX];
        split_list(o->name, value, items, DRIFT_LIST_MAX);
        *(const char **)o->dest = value;
        break;
    }
    case DRIFT_OPT_FLAG: *(int *)o->dest = 1; break;
    }
}

/* What the experiment takes instead, after its name in a refusal: the spec's own words, or
 * "takes no formats" / "takes no orders". */
static const char *not_taken(const drift_cli_spec_t *spec, const char *what)
{
    if (spec->no_orders) return spec->no_orders;
    return !strcmp(what, "formats") ? "takes no formats" : "takes no orders";
}

static int takes_no_orders(const drift_cli_spec_t *spec) { return spec->no_orders || !spec->default_orders; }

static void print_help(const drift_cli_spec_t *spec)
{
    printf("usage: %s [options]   (each as --option VALUE or --option=VALUE)\n%s\n\ncommon options:\n", spec->name,
           spec->question);
    printf("  --seed N             random seed (default 1)\n");
    printf("  --profile P          sweep size: quick, default or full (when not given: default)\n");
    printf("  --out DIR            where data files go, created with its parents (default data;\n"
           "                       ./lab run: a new runs/%s/<time>/)\n", spec->name);
    if (!spec->default_formats) /* refused by this experiment: say so instead of offering it */
        printf("  (--formats is not accepted: %s %s)\n", spec->name, not_taken(spec, "formats"));
    else
        printf("  --formats LIST       number formats, comma-separated, each once (default %s)\n", spec->default_formats);
    if (takes_no_orders(spec))
        printf("  (--orders is not accepted: %s %s)\n", spec->name, not_taken(spec, "orders"));
    else
        printf("  --orders LIST        reduction orders, comma-separated, at most %d distinct (default %s)\n", DRIFT_MAX_ORDERS,
               spec->default_orders);
    printf("  --backend B          auto|cpu|cuda (default auto: cuda when a device is present)\n");
    printf("  --threads N          OpenMP threads, 1..%d (default: all cores; results do not depend on it)\n",
           drift_threads_max());
    printf("  --quiet              no table or explanation on stdout\n");
    printf("  --help, --version, --describe (name, question and summary, tab-separated)\n");
    if (spec->nopts) printf("\n%s options:\n", spec->name);
    for (int i = 0; i < spec->nopts; i++) {
        const drift_cli_opt_t *o = &spec->opts[i];
        char left[64];
        snprintf(left, sizeof left, "--%s %s", o->name, o->type == DRIFT_OPT_FLAG ? "" : o->metavar);
        char limits[128] = ""; /* every limit the parser enforces, stated */
        int list = o->type == DRIFT_OPT_INTLIST || o->type == DRIFT_OPT_DOUBLELIST || o->type == DRIFT_OPT_LIST;
        int ints = o->type == DRIFT_OPT_INT || o->type == DRIFT_OPT_INTLIST;
        if (ints && o->max) snprintf(limits, sizeof limits, "; %ld..%ld", o->min, o->max);
        else if (ints) snprintf(limits, sizeof limits, "; >= %ld", o->min);
        if (list)
            snprintf(limits + strlen(limits), sizeof limits - strlen(limits), "; at most %d distinct values", DRIFT_LIST_MAX);
        if (o->profile[0] || o->profile[1] || o->profile[2])
            printf("  %-20s %s%s (default by profile: quick %s, default %s, full %s)\n", left, o->help, limits,
                   o->profile[0] ? o->profile[0] : "-", o->profile[1] ? o->profile[1] : "-", o->profile[2] ? o->profile[2] : "-");
        else
            printf("  %-20s %s%s\n", left, o->help, limits);
    }
}

/* An option the experiment does not have: the nearest name it has (a typo such as --k for --K
 * or --sample for --samples), and every name, so that the one line is enough to go on. */
static noreturn void die_unknown_option(const drift_cli_spec_t *spec, const char *arg, const char *name)
{
    const char *names[256 + 16];
    int n = 0;
    static const char *const COMMON[] = {"seed", "profile", "out", "formats", "orders", "backend", "threads", "quiet", "help", "version"};
    for (int j = 0; j < 10; j++) {
        if (j == 3 && !spec->default_formats) continue; /* refused here: not offered */
        if (j == 4 && takes_no_orders(spec)) continue;
        names[n++] = COMMON[j];
    }
    for (int j = 0; j < spec->nopts; j++) names[n++] = spec->opts[j].name;
    char hint[96], accepted[1024] = "";
    drift_suggest_text(hint, sizeof hint, name, names, n, "--");
    for (int j = 0; j < n; j++) {
        size_t l = strlen(accepted);
        snprintf(accepted + l, sizeof accepted - l, "%s--%s", j ? ", " : "", names[j]);
    }
    drift_die("unknown option '%s' (%saccepted: %s)", arg, hint, accepted);
}

/* ---- --backend: which code the recipe dispatcher runs (backend.h) -------------------------- */

/* A deterministic GPU kernel that disagrees with its CPU twin is a bug: one line, exit 2. */
static void backend_mismatch(const char *line) { drift_die("--backend cuda: %s", line); }

/* How much of the run the device computed, once at exit (not under --quiet). */
static void backend_report(void)
{
    drift_backend_stats_t s = drift_backend_stats();
    fprintf(stderr, "%s: backend cuda: %llu calls on the GPU checked bit for bit against their CPU twin, %llu measured"
                    " (tensor cores, vendor and atomic paths), %llu on the CPU (no GPU path)\n",
            program, s.checked, s.measured, s.on_cpu);
}

/* cuda: the device or a one-line error (exit 2) before any work or file; auto: the device
 * when there is one and the experiment computes through the dispatcher, said once on stderr
 * (a CPU fallback is said only when auto was asked for explicitly: the default run stays
 * quiet); cpu: the CPU. */
static void select_backend(drift_cli_t *cli, int explicit_auto)
{
    char why[320] = "";
    if (cli->backend == DRIFT_BACKEND_CPU || (cli->backend == DRIFT_BACKEND_AUTO && cli->spec->cpu_only)) {
        int rc = drift_backend_use(0, NULL, 0); /* the CPU is always there: cannot fail */
        (void)rc;
        if (cli->backend == DRIFT_BACKEND_AUTO && explicit_auto && !cli->quiet)
            fprintf(stderr, "%s: backend: cpu (%s runs on the %s)\n", program, cli->spec->name, cli->spec->cpu_only);
        cli->backend = DRIFT_BACKEND_CPU;
        return;
    }
    if (drift_backend_use(1, why, sizeof why)) {
        if (cli->backend == DRIFT_BACKEND_CUDA) drift_die("--backend: cuda: %s (accepted: auto, cpu)", why);
        if (explicit_auto && !cli->quiet) fprintf(stderr, "%s: backend: cpu (%s)\n", program, why);
        cli->backend = DRIFT_BACKEND_CPU;
        return;
    }
    drift_backend_on_mismatch(backend_mismatch);
    if (!cli->quiet) {
        char dev[320] = "";
        const drift_backend_ops_t *ops = drift_backend_registered();
        if (ops->describe) ops->describe(dev, sizeof dev);
        fprintf(stderr, "%s: backend: cuda (%s)\n", program, dev);
        atexit(backend_report);
    }
    cli->backend = DRIFT_BACKEND_CUDA;
}

void drift_require_gpu(const drift_cli_t *cli)
{
    if (cli->backend == DRIFT_BACKEND_CUDA) return;
    char why[320] = "";
    if (drift_backend_use(1, why, sizeof why) == DRIFT_OK) { /* a device, but --backend cpu asked for */
        int rc = drift_backend_use(0, NULL, 0); /* the CPU is always there: cannot fail */
        (void)rc;
        snprintf(why, sizeof why, "--backend cpu was asked for");
    }
    fprintf(stderr, "%s: skipped: needs a CUDA device (%s); no file written\n", program, why);
    exit(DRIFT_EXIT_SKIPPED);
}

/* Waiting OpenMP threads sleep instead of spinning (OMP_WAIT_POLICY=passive) unless the user
 * chose a policy: on a shared 2-core machine spinning waiters took the core the working thread
 * needed (gpu_generations --profile quick: 7.8 s wall with two spinning threads, 1.8 s
 * passive). libgomp reads the variable when it is loaded, before main, so an experiment run
 * directly re-executes itself once with it set (./lab sets it already; exec keeps argv, so the
 * Reproduce line is the same). Only the experiment's own binary does: a test or tool that
 * links the kit and parses an experiment's options is left alone. */
static void passive_wait(const drift_cli_spec_t *spec, char **argv)
{
#ifdef __linux__
    if (getenv("OMP_WAIT_POLICY") || !spec->name) return;
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return;
    exe[n] = 0;
    const char *base = strrchr(exe, '/');
    if (strcmp(base ? base + 1 : exe, spec->name) || setenv("OMP_WAIT_POLICY", "passive", 1)) return;
    fflush(NULL);
    execv(exe, argv); /* returns only when it failed: run on with libgomp's default */
#else
    (void)spec, (void)argv;
#endif
}

void drift_cli_parse(drift_cli_t *cli, const drift_cli_spec_t *spec, int argc, char **argv)
{
    drift_set_program(spec->name);
    drift_env_threads_check(); /* before the re-execution, so that a refusal is said once */
    passive_wait(spec, argv);
    memset(cli, 0, sizeof *cli);
    cli->spec = spec;
    cli->argc = argc;
    cli->argv = argv;
    cli->seed = 1;
    cli->profile = DRIFT_PROFILE_DEFAULT;
    cli->out_dir = "data";
    cli->backend = DRIFT_BACKEND_AUTO;
    drift_set_program(spec->name);
    parse_formats(cli, spec->default_formats);
    parse_orders(cli, spec->default_orders);

    unsigned char given[256] = {0};
    int given_formats = 0, given_orders = 0, explicit_auto = 0;
    if (spec->nopts > 256) drift_die("more than 256 options");
    static const char *const COMMON[] = {"seed", "profile", "out", "formats", "orders", "backend", "threads"};
    static const char *const INFO[] = {"help", "describe", "version", "quiet"};
    for (int i = 1; i < argc; i++) {
        const char *arg = !strcmp(argv[i], "-h") ? "--help" : argv[i];
        char name[64];
        const char *value;
        if (drift_opt_split(name, sizeof name, &value, arg) != DRIFT_OK)
            drift_die("unexpected argument '%s' (options start with --; see --help)", arg);
        int info = pick(INFO, 4, name);
        if (info >= 0 && value) drift_die("--%s takes no value (found '%s')", name, arg);
        if (info == 0) {
            print_help(spec);
            exit(0);
        }
        if (info == 1) { /* the texts README and docs/experiments.md are checked against */
            printf("%s\t%s\t%s\n", spec->name, spec->question, spec->summary ? spec->summary : "");
            exit(0);
        }
        if (info == 2) {
            printf("%s (driftlab %s)\n", spec->name, DRIFT_VERSION);
            exit(0);
        }
        if (info == 3) {
            cli->quiet = 1;
            continue;
        }
        const drift_cli_opt_t *extra = NULL;
        for (int j = 0; j < spec->nopts; j++)
            if (!strcmp(spec->opts[j].name, name)) extra = &spec->opts[j], given[j] = 1;
        int common = pick(COMMON, 7, name);
        if (common < 0 && !extra) die_unknown_option(spec, arg, name);
        if (extra && extra->type == DRIFT_OPT_FLAG) {
            if (value) drift_die("--%s takes no value (found '%s')", name, arg);
            parse_extra(extra, NULL);
            continue;
        }
        static const char *const COMMON_METAVAR[] = {"N", "quick|default|full", "DIR", "LIST", "LIST", "auto|cpu|cuda", "N"};
        drift_opt_value(&value, &i, argc, argv, name, common >= 0 ? COMMON_METAVAR[common] : extra->metavar);
        long v;
        switch (common) {
        case 0: {
            char *end;
            errno = 0;
            unsigned long long s = strtoull(value, &end, 10);
            if (!(value[0] >= '0' && value[0] <= '9') || *end || errno)
                drift_die("--seed: '%s' is not a non-negative integer (accepted: 0..2^64-1)", value);
            cli->seed = s;
            break;
        }
        case 1:
            v = drift_name_pick("--profile", value, PROFILE_NAMES, 3);
            cli->profile = (drift_profile_t)v;
            break;
        case 2:
            if (!*value) drift_die("--out: empty directory name");
            cli->out_dir = value;
            break;
        case 3:
            parse_formats(cli, value);
            given_formats = 1;
            break;
        case 4:
            parse_orders(cli, value);
            given_orders = 1;
            break;
        case 5:
            if (!strcasecmp(value, "gpu")) /* the nearest name by spelling is cpu, the opposite of what is meant */
                drift_die("--backend: unknown value '%s' (the GPU backend is called cuda; accepted: auto, cpu, cuda)", value);
            v = drift_name_pick("--backend", value, BACKEND_NAMES, 3);
            cli->backend = (drift_backend_t)v;
            explicit_auto = v == DRIFT_BACKEND_AUTO;
            break;
        case 6:
            if (drift_parse_long(&v, value) || v < 1 || v > drift_threads_max())
                drift_die("--threads: '%s' is not a thread count (accepted: 1..%d, 4 per core on this machine)", value,
                          drift_threads_max());
            cli->threads = (int)v;
            break;
        default: parse_extra(extra, value); break;
        }
    }
    for (int j = 0; j < spec->nopts; j++) /* the profile's value of every option not given */
        if (!given[j] && spec->opts[j].profile[cli->profile]) parse_extra(&spec->opts[j], spec->opts[j].profile[cli->profile]);
    if (given_formats && !spec->default_formats) /* said, not ignored */
        drift_die("--formats: %s %s", spec->name, not_taken(spec, "formats"));
    if (given_orders && takes_no_orders(spec)) drift_die("--orders: %s %s", spec->name, not_taken(spec, "orders"));
    if (spec->cpu_only && cli->backend == DRIFT_BACKEND_CUDA)
        drift_die("--backend: %s runs on the %s (accepted: auto, cpu)", spec->name, spec->cpu_only);
    select_backend(cli, explicit_auto);
    drift_out_check(cli->out_dir); /* refused now, before any work, rather than when the files are opened */
    drift_out_lock_cli(cli);       /* a second run into the same --out is refused before it computes */
#ifdef _OPENMP
    if (cli->threads) omp_set_num_threads(cli->threads);
#endif
}

void drift_cli_reproduce(char *buf, size_t size, const drift_cli_t *cli)
{
    int n = snprintf(buf, size, "./lab run %s", cli->spec->name);
    int has_seed = 0, has_profile = 0;
    for (int i = 1; i < cli->argc && n > 0 && (size_t)n < size; i++) {
        const char *a = cli->argv[i], *value;
        char name[64] = "";
        /* "--out=DIR" is --out as much as "--out DIR"; a word that is no option is copied as it is */
        if (drift_opt_split(name, sizeof name, &value, a)) name[0] = 0;
        if (!strcmp(name, "out") || !strcmp(name, "threads")) {
            i += !value;
            continue;
        }
        if (!strcmp(name, "quiet")) continue;
        has_seed |= !strcmp(name, "seed");
        has_profile |= !strcmp(name, "profile");
        n += snprintf(buf + n, size - (size_t)n, " %s", a);
    }
    if (!has_seed && n > 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, " --seed %llu", (unsigned long long)cli->seed);
    if (!has_profile && n > 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, " --profile %s", drift_profile_name(cli->profile));
}

/* mkdir -p: the docs promise --out is "created if missing", parents included. *top (when not
 * NULL) becomes the length of the shallowest prefix this call created, 0 when it created none. */
static int make_dirs(const char *dir, size_t *top)
{
    char path[4096];
    size_t len = strlen(dir);
    if (top) *top = 0;
    if (len == 0 || len >= sizeof path) return -1;
    memcpy(path, dir, len + 1);
    for (size_t i = 1; i <= len; i++) {
        if (path[i] != '/' && path[i] != 0) continue;
        char c = path[i];
        path[i] = 0;
        struct stat st;
        if (stat(path, &st) != 0) {
            if (mkdir(path, 0777) == 0) {
                if (top && !*top) *top = i;
            } else if (errno != EEXIST) {
                return -1;
            }
        }
        path[i] = c;
    }
    return 0;
}

/* The directories drift_out_create made: the path and the length of its shallowest new prefix. */
static struct {
    char dir[4096];
    size_t top;
} made;

/* At exit: the lock file first (the directory is empty only without it), then each directory
 * this run made, deepest first, for as long as rmdir finds it empty. A run that wrote its files
 * keeps them (rmdir refuses a directory with entries); nothing else is ever removed. */
static void remove_made(void)
{
    drift_out_unlock();
    char path[4096];
    snprintf(path, sizeof path, "%s", made.dir);
    for (;;) {
        size_t n = strlen(path);
        while (n > 1 && path[n - 1] == '/') path[--n] = 0;
        if (n < made.top || rmdir(path) != 0) return;
        char *slash = strrchr(path, '/');
        if (!slash || (size_t)(slash - path) < made.top) return;
        *slash = 0;
    }
}

void drift_out_create(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) == 0) return;
    size_t top;
    if (make_dirs(dir, &top) != 0) drift_die("--out: cannot create directory '%s'", dir);
    if (!top || made.top) return; /* made by another process meanwhile, or already registered */
    snprintf(made.dir, sizeof made.dir, "%s", dir);
    made.top = top;
    atexit(remove_made);
}

void drift_out_path(char *buf, size_t size, const drift_cli_t *cli, const char *suffix)
{
    struct stat st;
    if (stat(cli->out_dir, &st) != 0) {
        if (make_dirs(cli->out_dir, NULL) != 0) drift_die("--out: cannot create directory '%s'", cli->out_dir);
    } else if (!S_ISDIR(st.st_mode)) {
        drift_die("--out: '%s' is not a directory", cli->out_dir);
    }
    int n = snprintf(buf, size, "%s/%s%s", cli->out_dir, cli->spec->name, suffix);
    if (n < 0 || (size_t)n >= size) drift_die("--out: path too long");
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The progress of the current phase: its name (empty: the run's one phase), when it started,
 * when a line was printed last, the most work reported done (progress never goes back). */
static struct {
    char name[64];
    double start, last;
    int printed, started;
    int fresh;          /* named by drift_progress_phase, no progress reported yet */
    int count;          /* phases begun so far, named or not */
    size_t max_done, total;
} phase;

void drift_progress_phase(const drift_cli_t *cli, const char *name)
{
    if (cli->quiet) return;
    snprintf(phase.name, sizeof phase.name, "%s", name ? name : "");
    phase.count++;
    phase.start = phase.last = now_s();
    phase.printed = 0, phase.max_done = 0, phase.started = 1, phase.fresh = 1, phase.total = 0;
}

/* Not a terminal (a log, ./lab report): a timestamped line at most every 10 s, with the
 * elapsed time and a linear estimate of what is left, so a long run is never silent. */
static void progress_line(const drift_cli_t *cli, size_t done, size_t total)
{
    static double every = -1; /* seconds between lines: 10, or DRIFT_PROGRESS_EVERY (tests set 0) */
    if (every < 0) {
        const char *e = getenv("DRIFT_PROGRESS_EVERY");
        char *end;
        double v = e ? strtod(e, &end) : 10;
        every = e && *end == 0 && v >= 0 && v <= 3600 ? v : 10;
    }
    double t = now_s();
    if (!phase.started) phase.start = phase.last = t, phase.started = 1;
    if (done < total && t - phase.last < every) return;
    if (done == total && !phase.printed && every > 0) return; /* a phase under 10 s needs no progress report */
    phase.last = t;
    phase.printed = 1;
    double el = t - phase.start, left = done ? el * (double)(total - done) / (double)done : 0;
    time_t wall = time(NULL);
    struct tm tm;
    gmtime_r(&wall, &tm);
    fprintf(stderr, "%02d:%02d:%02d %s%s%s: %3d%% (%zu/%zu) elapsed %.0f s%s", tm.tm_hour, tm.tm_min, tm.tm_sec,
            cli->spec->name, phase.name[0] ? ", " : "", phase.name, (int)(100 * done / total), done, total, el,
            done == total ? ", done\n" : "");
    if (done < total) {
        if (done) fprintf(stderr, ", about %.0f s left\n", left);
        else fputc('\n', stderr);
    }
    fflush(stderr);
}

void drift_progress(const drift_cli_t *cli, size_t done, size_t total)
{
    if (cli->quiet || total == 0) return;
    if (done > total) done = total;
    if (total != phase.total) { /* another count: a new stage of the run */
        if (!phase.fresh) {
            /* not named by the program: numbered after the first, so that a count starting
             * again from 0 reads as the next stage, never as the run going back */
            if (++phase.count > 1) snprintf(phase.name, sizeof phase.name, "stage %d", phase.count);
            else phase.name[0] = 0;
            phase.start = phase.last = now_s(), phase.started = 1, phase.printed = 0;
        }
        phase.total = total, phase.max_done = 0;
    }
    phase.fresh = 0;
    if (done < phase.max_done) done = phase.max_done; /* threads report out of order: never back */
    phase.max_done = done;
    if (!isatty(STDERR_FILENO)) {
        progress_line(cli, done, total);
        return;
    }
    int width = 40, fill = (int)(width * done / total);
    fprintf(stderr, "\r%s%s%s [%.*s%*s] %3d%%", cli->spec->name, phase.name[0] ? ", " : "", phase.name, fill,
            "########################################", width - fill, "", (int)(100 * done / total));
    if (done == total) fputc('\n', stderr);
    fflush(stderr);
}

/* The LM head experiments accept only these input formats: a program-level refusal, so it lives
 * here and not in lib/llm (library code never exits). */
void drift_lmhead_require_inputs(const drift_format_t *formats, int n)
{
    for (int i = 0; i < n; i++)
        if (!drift_lmhead_input_ok(formats[i]))
            drift_die("--formats: '%s' is not an LM head input format here (accepted: bf16, fp16, tf32, fp32)",
                      drift_format_name(formats[i]));
}

int drift_parse_ids(const char *opt, const char *list, int *ids, int max, long hi)
{
    char shown[160];
    drift_escape(shown, sizeof shown, list, NULL); /* one line whatever the list holds */
    if (!*list) drift_die("%s: expected comma-separated ids in 0 .. %ld, found an empty list", opt, hi);
    int n = 0;
    for (const char *p = list;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char item[32];
        long v;
        if (len == 0) drift_die("%s: expected comma-separated ids in 0 .. %ld, found an empty item in '%s'", opt, hi, shown);
        snprintf(item, sizeof item, "%.*s", (int)(len < sizeof item ? len : sizeof item - 1), p);
        if (len >= sizeof item || drift_parse_long(&v, item) || v < 0 || v > hi)
            drift_die("%s: expected comma-separated ids in 0 .. %ld, found '%s'", opt, hi, shown);
        if (n == max) drift_die("%s: more than %d ids (accepted: at most %d)", opt, max, max);
        ids[n++] = (int)v;
        if (!comma) return n;
        p = comma + 1;
    }
}

/* 256: the lab's parallel loops have at most a few hundred work items, so more threads only
 * wait; each OpenMP thread reserves a stack, and 1024 of them under a 4 GiB limit made libgomp
 * itself fail with its own message and exit 1. A fixed limit, not one per machine,
 * so that a command accepted on one machine is accepted on every one. */
int drift_threads_max(void) { return 256; }

/* libgomp reads OMP_NUM_THREADS when it is loaded and starts that many threads at the first
 * parallel loop: 100000 crashed every experiment (a segfault in libgomp), so the variable is
 * held to --threads' rule: a thread count 1..drift_threads_max(), or a comma list of them
 * (OpenMP's nested levels). libgomp itself ignores a value it cannot read (0, -1, abc) with a
 * warning of its own; refused here too, so that the run is never made under another thread
 * count than the one the user believes he set. */
void drift_env_threads_check(void)
{
    const char *v = getenv("OMP_NUM_THREADS");
    if (!v) return;
    const char *p = v;
    for (;;) {
        long n = 0;
        const char *start = p;
        while (*p >= '0' && *p <= '9' && n <= drift_threads_max()) n = n * 10 + (*p++ - '0');
        if (p == start || n < 1 || n > drift_threads_max() || (*p && *p != ',')) {
            char shown[80];
            drift_escape(shown, sizeof shown, v, NULL); /* one line whatever the variable holds */
            drift_die("OMP_NUM_THREADS: '%s' is not a thread count (accepted: 1..%d, or a comma list of them; "
                      "unset, one per core)",
                      shown, drift_threads_max());
        }
        if (!*p++) break;
    }
}

long drift_intlist_max(const drift_intlist_t *l)
{
    long m = 0;
    for (int i = 0; i < l->n; i++)
        if (l->v[i] > m) m = l->v[i];
    return m;
}

/* The longest file name a run writes under --out: "<name><suffix>" and the staging names of
 * table.c; the path must leave room for them within table.h's 1024-byte paths. */
#define OUT_DIR_MAX 800

void drift_out_check(const char *dir)
{
    if (!*dir) drift_die("--out: empty directory name");
    if (strlen(dir) > OUT_DIR_MAX) drift_die("--out: path too long (accepted: at most %d characters)", OUT_DIR_MAX);
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode)) drift_die("--out: '%s' is not a directory", dir);
        /* The staging directory of table.c is made here first: a probe of exactly what the
         * commit needs (create and remove an entry), not a guess from permission bits. */
        char probe[1024];
        snprintf(probe, sizeof probe, "%s/.drift-probe.%ld", dir, (long)getpid());
        if (mkdir(probe, 0777) != 0) drift_die("--out: cannot write in '%s' (%s)", dir, strerror(errno));
        rmdir(probe);
        return;
    }
    if (errno != ENOENT) drift_die("--out: cannot use '%s' (%s)", dir, strerror(errno));
    /* Missing: it is created with its parents when the files are opened; its nearest existing
     * ancestor must be a directory we can create entries in. Nothing is left now, so a
     * later refusal leaves no empty directory behind. */
    char anc[1024];
    snprintf(anc, sizeof anc, "%s", dir);
    for (;;) {
        char *slash = strrchr(anc, '/');
        while (slash && slash > anc && slash[1] == 0) *slash = 0, slash = strrchr(anc, '/'); /* trailing '/' */
        if (!slash) snprintf(anc, sizeof anc, ".");
        else if (slash == anc) anc[1] = 0;
        else *slash = 0;
        if (stat(anc, &st) == 0) break;
        if (errno != ENOENT) drift_die("--out: cannot create '%s' (%s: %s)", dir, anc, strerror(errno));
    }
    if (!S_ISDIR(st.st_mode)) drift_die("--out: cannot create '%s' ('%s' is not a directory)", dir, anc);
    /* tried, not guessed from permission bits: root passes access(2) on /proc */
    char probe[1100];
    snprintf(probe, sizeof probe, "%s/.drift-probe.%ld", anc, (long)getpid());
    if (mkdir(probe, 0777) != 0) drift_die("--out: cannot create '%s' (%s: %s)", dir, anc, strerror(errno));
    rmdir(probe);
}

/* What the machine can give one process: the smallest of physical memory, the address-space
 * limit (ulimit -v) and a cgroup v2 memory.max. */
static double machine_bytes(void)
{
    double have = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (double)rl.rlim_cur < have) have = (double)rl.rlim_cur;
    FILE *fp = fopen("/sys/fs/cgroup/memory.max", "r");
    if (fp) {
        unsigned long long m;
        if (fscanf(fp, "%llu", &m) == 1 && (double)m < have) have = (double)m;
        fclose(fp);
    }
    return have;
}

void drift_require_memory(const drift_cli_t *cli, double bytes, const char *options)
{
    (void)cli;
    double have = machine_bytes();
    if (bytes > have)
        drift_die("%s: this run needs about %.1f GiB of memory, this machine gives a process %.1f GiB (accepted: smaller sizes)",
                  options, bytes / 1073741824.0, have / 1073741824.0);
}

#ifndef DRIFT_SOURCE_DIR
#define DRIFT_SOURCE_DIR "."
#endif

const char *drift_real_checkpoint(void)
{
    static const char *const here = "models/SmolLM2-135M-Instruct.Q4_1.gguf";
    static const char *const there = DRIFT_SOURCE_DIR "/models/SmolLM2-135M-Instruct.Q4_1.gguf";
    return access(here, R_OK) == 0 ? here : access(there, R_OK) == 0 ? there : NULL;
}

const char *drift_default_checkpoint(void)
{
    static const char *const here = "models/stories260K.bin";
    return access(here, R_OK) == 0 ? here : DRIFT_SOURCE_DIR "/models/stories260K.bin";
}
