/* cli.c — strict option parsing shared by every experiment and tool.
 *
 * Strict means: a number is the whole argument (no trailing junk), fits its type, and lies
 * in the accepted range; a list is comma-separated with no empty items; any violation
 * names the option and what it accepts, and exits 2 before anything is written. Beside it:
 * die.c (the way out), cli_backend.c (--backend), out_dir.c (--out), progress.c, resources.c
 * (threads and memory). */
#include "cli.h"
#include "cli_backend.h"
#include "cards.h"
#include "decimal.h"
#include "drift.h"
#include "escape.h"
#include "output.h"
#include "why.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* A number starts with a digit (or '-' and a digit where a sign is allowed): strtol and strtod
 * would skip leading blanks and take a '+', so ' -1' and '+5' slipped through. */
static int strict_start(const char *s, int sign_ok)
{
    if (sign_ok && *s == '-') s++;
    return (*s >= '0' && *s <= '9') || *s == '.' ||
           (sign_ok == 2 && (*s == 'i' || *s == 'I' || *s == 'n' || *s == 'N'));
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

/* An option's value under profile p as --help shows it: a flag is on or off; another option
 * without a value for p keeps its built-in default ("-"). */
static const char *profile_value(const drift_cli_opt_t *o, int p)
{
    if (o->type == DRIFT_OPT_FLAG) return o->profile[p] ? "on" : "off";
    return o->profile[p] ? o->profile[p] : "-";
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
    for (int i = 0; n < DRIFT_NFORMATS + 64 && drift_format_alias(i, NULL); i++)
        names[n++] = drift_format_alias(i, NULL);
    drift_suggest_text(hint, sizeof hint, value, names, n, NULL);
    drift_die("%s: unknown format '%s' (%saccepted: %s, in any case, or PyTorch's names bfloat16, float16, half, "
              "float32, float64, float8_e4m3fn, float8_e5m2)",
        opt, value, hint, accepted);
}

const char *drift_order_grammar(void)
{
    static char text[768];
    if (text[0]) return text;
    int n = snprintf(text, sizeof text,
        "seq, rev, pairwise, blocked:B, splitk:S, splitk:S:tree, warp:W (W a power of two), "
        "kahan, neumaier, random:SEED, tc:MODEL with MODEL one of ");
    for (int a = 0; a < DRIFT_TC_NARCH && n > 0 && (size_t)n < sizeof text; a++)
        n += snprintf(text + n, sizeof text - (size_t)n, "%s%s", a ? "|" : "", drift_tc_arch_name((drift_tc_arch_t)a));
    if (n > 0 && (size_t)n < sizeof text)
        snprintf(text + n, sizeof text - (size_t)n, " or a card name (./lab calc cards)");
    return text;
}

const char *drift_tc_names(void)
{
    static char text[768];
    if (text[0]) return text;
    int n = snprintf(text, sizeof text, "tc:MODEL with MODEL one of ");
    for (int a = 0; a < DRIFT_TC_NARCH && n > 0 && (size_t)n < sizeof text; a++)
        n += snprintf(text + n, sizeof text - (size_t)n, "%s%s", a ? ", " : "", drift_tc_arch_name((drift_tc_arch_t)a));
    if (n > 0 && (size_t)n < sizeof text)
        n += snprintf(text + n, sizeof text - (size_t)n, ", or tc:CARD with CARD one of ");
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
            drift_die("--%s: item '%.*s' is too long (accepted: at most %d characters)", opt, (int)len, p,
                DRIFT_ORDER_SPEC_MAX - 1);
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
        if (o->max) drift_die("--%s: %ld is out of range (accepted: %ld..%ld)", o->name, v, o->min, o->max);
        drift_die("--%s: %ld is out of range (accepted: >= %ld)", o->name, v, o->min);
    }
}

static void parse_extra(const drift_cli_opt_t *o, const char *value)
{
    switch (o->type) {
    case DRIFT_OPT_INT: {
        long v;
        if (drift_parse_long(&v, value))
            drift_die("--%s: '%s' is not an integer (accepted: %s)", o->name, value, o->metavar);
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
                if (l->v[j] == l->v[i])
                    drift_die("--%s: '%s' given twice (the same value as '%s')", o->name, items[i], items[j]);
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
           "                       ./lab run: a new runs/%s/<time>/)\n",
        spec->name);
    if (!spec->default_formats) /* refused by this experiment: say so instead of offering it */
        printf("  (--formats is not accepted: %s %s)\n", spec->name, not_taken(spec, "formats"));
    else
        printf(
            "  --formats LIST       number formats, comma-separated, each once (default %s)\n", spec->default_formats);
    if (takes_no_orders(spec))
        printf("  (--orders is not accepted: %s %s)\n", spec->name, not_taken(spec, "orders"));
    else
        printf("  --orders LIST        reduction orders, comma-separated, at most %d distinct (default %s)\n",
            DRIFT_MAX_ORDERS, spec->default_orders);
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
        if (ints && o->max)
            snprintf(limits, sizeof limits, "; %ld..%ld", o->min, o->max);
        else if (ints)
            snprintf(limits, sizeof limits, "; >= %ld", o->min);
        if (list)
            snprintf(limits + strlen(limits), sizeof limits - strlen(limits), "; at most %d distinct values",
                DRIFT_LIST_MAX);
        if (o->profile[0] || o->profile[1] || o->profile[2])
            printf("  %-20s %s%s (default by profile: quick %s, default %s, full %s)\n", left, o->help, limits,
                profile_value(o, 0), profile_value(o, 1), profile_value(o, 2));
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
    static const char *const COMMON[] = {
        "seed", "profile", "out", "formats", "orders", "backend", "threads", "quiet", "help", "version"};
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
        static const char *const COMMON_METAVAR[] = {
            "N", "quick|default|full", "DIR", "LIST", "LIST", "auto|cpu|cuda", "N"};
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
                drift_die(
                    "--backend: unknown value '%s' (the GPU backend is called cuda; accepted: auto, cpu, cuda)", value);
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
        if (!given[j] && spec->opts[j].profile[cli->profile])
            parse_extra(&spec->opts[j], spec->opts[j].profile[cli->profile]);
    if (given_formats && !spec->default_formats) /* said, not ignored */
        drift_die("--formats: %s %s", spec->name, not_taken(spec, "formats"));
    if (given_orders && takes_no_orders(spec)) drift_die("--orders: %s %s", spec->name, not_taken(spec, "orders"));
    if (spec->cpu_only && cli->backend == DRIFT_BACKEND_CUDA)
        drift_die("--backend: %s runs on the %s (accepted: auto, cpu)", spec->name, spec->cpu_only);
    drift_cli_select_backend(cli, explicit_auto);
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
        if (len == 0)
            drift_die("%s: expected comma-separated ids in 0 .. %ld, found an empty item in '%s'", opt, hi, shown);
        snprintf(item, sizeof item, "%.*s", (int)(len < sizeof item ? len : sizeof item - 1), p);
        if (len >= sizeof item || drift_parse_long(&v, item) || v < 0 || v > hi)
            drift_die("%s: expected comma-separated ids in 0 .. %ld, found '%s'", opt, hi, shown);
        if (n == max) drift_die("%s: more than %d ids (accepted: at most %d)", opt, max, max);
        ids[n++] = (int)v;
        if (!comma) return n;
        p = comma + 1;
    }
}

long drift_intlist_max(const drift_intlist_t *l)
{
    long m = 0;
    for (int i = 0; i < l->n; i++)
        if (l->v[i] > m) m = l->v[i];
    return m;
}
