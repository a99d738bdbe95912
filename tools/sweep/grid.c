/* grid.c — the sweep description: grid specs, sweep files and the canonical text that
 * identifies a sweep (two spellings of one grid, "seed=1..3" and "seed=1,2,3", are one sweep). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "drift.h"
#include "format.h"
#include "sweep.h"

/* Options that drift-sweep sets itself per run, or that would stop a run from writing data.
 * (--device is the experiments' own: argmax_flip's policy device, or a GPU backend's.) */
static const char *const RESERVED[] = {"out", "quiet", "help", "version", NULL};

static int valid_name(const char *s)
{
    if (!isalpha((unsigned char)*s)) return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-') return 0;
    return 1;
}

static int reserved(const char *name)
{
    for (int i = 0; RESERVED[i]; i++)
        if (!strcmp(name, RESERVED[i])) return 1;
    return 0;
}

static int has_axis(const sweep_t *s, const char *name)
{
    for (int a = 0; a < s->naxes; a++)
        if (!strcmp(s->axes[a].name, name)) return 1;
    return 0;
}

static int has_option(const sweep_t *s, const char *name)
{
    for (int i = 0; i < s->noptions; i++)
        if (!strncmp(s->options[i], "--", 2) && !strcmp(s->options[i] + 2, name)) return 1;
    return 0;
}

/* ax->values holds room for every value already (add_axis counts them first). */
static void add_value(sweep_axis_t *ax, const char *v) { ax->values[ax->nvalues++] = sweep_xstrdup(v); }

/* Runs of the axes before the one being added: its values may multiply that up to
 * SWEEP_MAX_RUNS, no further (checked before a value is allocated: a range over the whole
 * of int64 once overflowed the count and allocated until memory ran out). */
static long runs_before(const sweep_t *s, const sweep_axis_t *ax)
{
    long n = 1;
    for (const sweep_axis_t *a = s->axes; a < ax; a++) n *= a->nvalues; /* each product <= SWEEP_MAX_RUNS */
    return n;
}

static long max_values(const sweep_t *s, const sweep_axis_t *ax) { return SWEEP_MAX_RUNS / runs_before(s, ax); }

/* One item of an axis: a value, or an integer range A..B (A <= B). With values == 0 it is
 * checked and its count added to *total (which may not pass the room the axes before leave);
 * else it is expanded into its values. */
static void add_item(
    const sweep_t *s, sweep_axis_t *ax, const char *item, const char *where, int values, unsigned long *total)
{
    if (!*item) sweep_die("%s: %s: empty value (accepted: name=v1,v2,... or name=A..B)", where, ax->name);
    for (const char *p = item; *p; p++)
        if (isspace((unsigned char)*p) || *p == '"' || *p == '\'' || (unsigned char)*p < 0x20 || *p == 0x7f)
            sweep_die(
                "%s: %s: a value holds a blank, a quote or a control byte (not accepted in a grid)", where, ax->name);
    unsigned long room = (unsigned long)max_values(s, ax) - *total;
    const char *dots = strstr(item, "..");
    if (!dots) {
        if (room < 1)
            sweep_die("%s: %s: more than %ld runs with the axes before it (split the sweep)", where, ax->name,
                SWEEP_MAX_RUNS);
        if (values)
            add_value(ax, item);
        else
            ++*total;
        return;
    }
    char lo_s[64], *hi_s = (char *)dots + 2;
    size_t n = (size_t)(dots - item);
    long lo, hi;
    if (n >= sizeof lo_s)
        sweep_die("%s: %s: malformed range '%s' (accepted: A..B, integers, A <= B)", where, ax->name, item);
    memcpy(lo_s, item, n);
    lo_s[n] = 0;
    if (drift_parse_long(&lo, lo_s) || drift_parse_long(&hi, hi_s) || lo > hi)
        sweep_die("%s: %s: malformed range '%s' (accepted: A..B, integers, A <= B)", where, ax->name, item);
    /* hi - lo in unsigned arithmetic: it overflows long for a range over the whole of int64 */
    unsigned long span = (unsigned long)hi - (unsigned long)lo;
    if (span >= room) {
        char count[32];
        if (span == (unsigned long)-1)
            snprintf(count, sizeof count, "2^64");
        else
            snprintf(count, sizeof count, "%lu", span + 1);
        sweep_die(
            "%s: %s: range '%s' has %s values: with the axes and values before it, more than %ld runs (split the sweep)",
            where, ax->name, item, count, SWEEP_MAX_RUNS);
    }
    if (!values) {
        *total += span + 1;
        return;
    }
    for (long v = lo;; v++) {
        char buf[32];
        snprintf(buf, sizeof buf, "%ld", v);
        add_value(ax, buf);
        if (v == hi) break;
    }
}

/* A value as the experiment will read it, so that two spellings of one value are one run:
 * an integer in decimal without leading zeros (01 is 1), another number as the double it
 * rounds to (0.5 and 0x1p-1 are one), a format by its canonical name (FP32, bfloat16), any
 * other text as written. Values are compared by this key, and shown as given. */
typedef struct {
    char key[48];
    const char *text;
} value_key_t;

static void value_key(value_key_t *k, const char *v)
{
    k->text = v;
    const char *d = v + (*v == '-');
    size_t nd = strspn(d, "0123456789");
    double x;
    drift_format_t f;
    if (nd > 0 && !d[nd] && nd < 40) { /* exact, whatever its size (a seed may be 2^64 - 1) */
        while (*d == '0' && d[1]) d++;
        snprintf(k->key, sizeof k->key, "i%s%s", *v == '-' && strcmp(d, "0") ? "-" : "", d);
    } else if (drift_parse_double(&x, v) == DRIFT_OK) {
        if (x == 0) x = 0; /* -0 is 0 to every option that takes a number */
        if (x == (double)(long long)x && fabs(x) < 0x1p62)
            snprintf(k->key, sizeof k->key, "i%lld", (long long)x);
        else
            snprintf(k->key, sizeof k->key, "d%a", x);
    } else if (drift_format_parse(&f, v) == DRIFT_OK) {
        snprintf(k->key, sizeof k->key, "f%s", drift_format_name(f));
    } else {
        k->key[0] = 0; /* compared as text */
    }
}

static int cmp_key(const void *a, const void *b)
{
    const value_key_t *x = a, *y = b;
    if (!x->key[0] || !y->key[0]) {
        if (x->key[0] != y->key[0]) return x->key[0] ? 1 : -1; /* texts first */
        return strcmp(x->text, y->text);
    }
    return strcmp(x->key, y->key);
}

static void add_axis(sweep_t *s, const char *word, const char *where)
{
    const char *eq = strchr(word, '=');
    if (!eq) sweep_die("%s: '%s' is not an axis (accepted: name=v1,v2,... or name=A..B)", where, word);
    size_t n = (size_t)(eq - word);
    char name[SWEEP_NAME_MAX];
    if (n == 0 || n >= sizeof name) sweep_die("%s: '%s': missing or too long option name", where, word);
    memcpy(name, word, n);
    name[n] = 0;
    if (name[0] == '-')
        sweep_die("%s: '%s': write the option without dashes (seed=1..4, not --seed=1..4)", where, word);
    if (!valid_name(name)) sweep_die("%s: '%s' is not an option name (letters, digits, '_', '-')", where, name);
    if (reserved(name)) sweep_die("%s: '%s' cannot be swept (drift-sweep sets --out and --quiet itself)", where, name);
    if (has_axis(s, name)) sweep_die("%s: axis '%s' given twice", where, name);
    if (has_option(s, name)) sweep_die("%s: '%s' is both an axis and a fixed option", where, name);
    if (s->naxes == SWEEP_MAX_AXES) sweep_die("%s: more than %d axes", where, SWEEP_MAX_AXES);
    sweep_axis_t *ax = &s->axes[s->naxes++];
    memset(ax, 0, sizeof *ax);
    snprintf(ax->name, sizeof ax->name, "%s", name);
    char *list = sweep_xstrdup(eq + 1), *save = NULL;
    if (!*list) sweep_die("%s: %s: no values (accepted: name=v1,v2,... or name=A..B)", where, name);
    if (list[strlen(list) - 1] == ',' || list[0] == ',' || strstr(list, ",,"))
        sweep_die("%s: %s: empty value in '%s'", where, name, eq + 1);
    /* Counted first, then expanded: nothing is allocated for a grid too large to run. */
    unsigned long total = 0;
    char *copy = sweep_xstrdup(list);
    for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save))
        add_item(s, ax, item, where, 0, &total);
    free(copy);
    ax->values = sweep_xrealloc(NULL, (size_t)total * sizeof *ax->values);
    for (char *item = strtok_r(list, ",", &save); item; item = strtok_r(NULL, ",", &save))
        add_item(s, ax, item, where, 1, &total);
    free(list);
    /* Each run must differ: no value twice, compared as read (sorted, so that 10^5 seeds
     * check in a blink). */
    value_key_t *sorted = sweep_xrealloc(NULL, (size_t)ax->nvalues * sizeof *sorted);
    for (int i = 0; i < ax->nvalues; i++) value_key(&sorted[i], ax->values[i]);
    qsort(sorted, (size_t)ax->nvalues, sizeof *sorted, cmp_key);
    for (int i = 1; i < ax->nvalues; i++)
        if (!cmp_key(&sorted[i - 1], &sorted[i])) {
            if (!strcmp(sorted[i - 1].text, sorted[i].text))
                sweep_die("%s: %s: value '%s' given twice (each run must differ)", where, name, sorted[i].text);
            sweep_die("%s: %s: values '%s' and '%s' are one value given twice (each run must differ)", where, name,
                sorted[i - 1].text, sorted[i].text);
        }
    free(sorted);
}

void sweep_add_grid(sweep_t *s, const char *spec, const char *where)
{
    char *copy = sweep_xstrdup(spec), *save = NULL;
    for (char *w = strtok_r(copy, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save)) add_axis(s, w, where);
    free(copy);
}

void sweep_add_option(sweep_t *s, const char *word)
{
    /* sweep.txt holds one word per "option:" line, read back trimmed: a control byte (a newline
     * would start a line of its own) or a blank at either end could not come back the same. */
    size_t len = strlen(word);
    for (const char *p = word; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            sweep_die("option '%s': holds a control byte (accepted: printable words)", word);
    if (len && (isspace((unsigned char)word[0]) || isspace((unsigned char)word[len - 1])))
        sweep_die("option '%s': begins or ends with a blank (a sweep file could not hold it)", word);
    if (!strncmp(word, "--", 2)) {
        const char *name = word + 2;
        char base[SWEEP_NAME_MAX];
        snprintf(base, sizeof base, "%.*s", (int)strcspn(name, "="), name);
        if (reserved(base))
            sweep_die(
                "option --%s: drift-sweep sets --out and --quiet itself (accepted: any other experiment option)", base);
        if (has_axis(s, base)) sweep_die("option --%s: '%s' is both an axis and a fixed option", base, base);
    }
    s->options = sweep_xrealloc(s->options, ((size_t)s->noptions + 1) * sizeof *s->options);
    s->options[s->noptions++] = sweep_xstrdup(word);
}

static char *trim(char *p)
{
    while (isspace((unsigned char)*p)) p++;
    char *e = p + strlen(p);
    while (e > p && isspace((unsigned char)e[-1])) *--e = 0;
    return p;
}

#define SWEEP_FILE_MAX (64L << 20) /* bytes: a sweep file of 10^6 listed values fits many times */

void sweep_read_file(sweep_t *s, const char *path)
{
    /* A FIFO is fine (--file <(...)); a device is not: /dev/zero is one endless line. */
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode))
        sweep_die("--file: '%s' is not a regular file or a pipe", path);
    FILE *fp = fopen(path, "r");
    if (!fp) sweep_die("--file: cannot read '%s': %s", path, strerror(errno));
    /* The whole file, bounded, before a line is parsed: getline on an endless line would
     * allocate until memory ran out. */
    sweep_text_t all = {0};
    char chunk[65536];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, fp)) > 0) {
        if (memchr(chunk, 0, got)) sweep_die("--file: '%s' holds a NUL byte (not a sweep file)", path);
        if (all.len + got > (size_t)SWEEP_FILE_MAX)
            sweep_die("--file: '%s' is larger than %ld MiB (not a sweep file)", path, SWEEP_FILE_MAX >> 20);
        if (all.len + got + 1 > all.cap) {
            all.cap = 2 * (all.len + got + 1);
            all.p = sweep_xrealloc(all.p, all.cap);
        }
        memcpy(all.p + all.len, chunk, got);
        all.len += got;
        all.p[all.len] = 0;
    }
    int bad = ferror(fp);
    fclose(fp);
    if (bad) sweep_die("--file: cannot read '%s': %s", path, strerror(errno));
    char *line = all.p ? all.p : "", *next, where[1100];
    int lineno = 0;
    for (; *line; line = next) {
        next = line + strcspn(line, "\n");
        if (*next) *next++ = 0;
        lineno++;
        snprintf(where, sizeof where, "%s:%d", path, lineno);
        char *p = trim(line);
        if (!*p || *p == '#') continue;
        char *colon = strchr(p, ':');
        if (!colon)
            sweep_die("%s: '%s' (accepted: experiment:, grid:, options:, option:, shares:, # comments)", where, p);
        *colon = 0;
        char *key = trim(p), *val = trim(colon + 1);
        if (!strcmp(key, "experiment")) {
            if (s->experiment[0] && strcmp(s->experiment, val))
                sweep_die("%s: experiment '%s' differs from '%s' on the command line", where, val, s->experiment);
            if (!valid_name(val) || strlen(val) >= SWEEP_NAME_MAX)
                sweep_die("%s: '%s' is not an experiment name", where, val);
            snprintf(s->experiment, sizeof s->experiment, "%s", val);
        } else if (!strcmp(key, "grid")) {
            sweep_add_grid(s, val, where);
        } else if (!strcmp(key, "option")) {
            sweep_add_option(s, val);
        } else if (!strcmp(key, "options")) {
            char *save = NULL;
            for (char *w = strtok_r(val, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) sweep_add_option(s, w);
        } else if (!strcmp(key, "shares") || !strcmp(key, "runs")) {
            long n;
            if (drift_parse_long(&n, val) || n < 1)
                sweep_die("%s: %s: '%s' (accepted: a positive integer)", where, key, val);
            if (!strcmp(key, "shares")) {
                if (s->nshares && s->nshares != n)
                    sweep_die("%s: shares %ld differs from %ld given before", where, n, s->nshares);
                s->nshares = n;
            } /* "runs:" is informative: recomputed from the grid */
        } else {
            sweep_die("%s: unknown key '%s' (accepted: experiment, grid, options, option, shares)", where, key);
        }
    }
    free(all.p);
}

void sweep_finish(sweep_t *s)
{
    if (!s->experiment[0]) sweep_die("name an experiment (drift-sweep EXP --grid ...)");
    if (!valid_name(s->experiment))
        sweep_die("'%s' is not an experiment name (letters, digits, '_', '-')", s->experiment);
    if (s->naxes == 0) sweep_die("--grid: no axes (accepted: 'seed=1..8 K=1024,4096 formats=bf16,fp16')");
    long n = 1;
    for (int a = 0; a < s->naxes; a++) {
        if (n > SWEEP_MAX_RUNS / s->axes[a].nvalues)
            sweep_die("--grid: more than %ld runs (split the sweep)", SWEEP_MAX_RUNS);
        n *= s->axes[a].nvalues;
    }
    s->nruns = n;
    if (s->nshares == 0) s->nshares = n;
    if (s->nshares > n) sweep_die("--shares: %ld shares for %ld runs (accepted: 1..%ld)", s->nshares, n, n);
}

static void describe_axis(sweep_text_t *b, const sweep_axis_t *ax);

char *sweep_definition(const sweep_t *s, int with_shares)
{
    sweep_text_t b = {0};
    sweep_text_add(&b, "# drift-sweep definition: drift-sweep --file reads it back; every share must match it\n");
    sweep_text_add(&b, "experiment: %s\n", s->experiment);
    for (int a = 0; a < s->naxes; a++) {
        sweep_text_add(&b, "grid: ");
        describe_axis(&b, &s->axes[a]);
        sweep_text_add(&b, "\n");
    }
    for (int i = 0; i < s->noptions; i++) sweep_text_add(&b, "option: %s\n", s->options[i]);
    sweep_text_add(&b, "runs: %ld\n", s->nruns);
    if (with_shares) sweep_text_add(&b, "shares: %ld\n", s->nshares);
    return b.p;
}

const char *sweep_value(const sweep_t *s, long r, int a)
{
    long stride = 1;
    for (int k = s->naxes - 1; k > a; k--) stride *= s->axes[k].nvalues;
    return s->axes[a].values[(r / stride) % s->axes[a].nvalues];
}

/* Values i..j of ax are consecutive integers written in the canonical "%ld" form. */
static int is_int(const char *v, long *out)
{
    char buf[32];
    if (drift_parse_long(out, v)) return 0;
    snprintf(buf, sizeof buf, "%ld", *out);
    return !strcmp(buf, v);
}

static void describe_axis(sweep_text_t *b, const sweep_axis_t *ax)
{
    sweep_text_add(b, "%s=", ax->name);
    for (int i = 0; i < ax->nvalues;) {
        long v0, v;
        int j = i;
        if (is_int(ax->values[i], &v0))
            while (j + 1 < ax->nvalues && is_int(ax->values[j + 1], &v) && v == v0 + (j + 1 - i)) j++;
        if (j - i >= 2)
            sweep_text_add(b, "%s%s..%s", i ? "," : "", ax->values[i], ax->values[j]);
        else
            for (int k = i; k <= j; k++) sweep_text_add(b, "%s%s", k ? "," : "", ax->values[k]);
        i = j + 1;
    }
}

void sweep_describe(char *out, size_t size, const sweep_t *s, long r)
{
    sweep_text_t b = {0};
    for (int a = 0; a < s->naxes; a++) {
        if (a) sweep_text_add(&b, " ");
        if (r >= 0)
            sweep_text_add(&b, "%s=%s", s->axes[a].name, sweep_value(s, r, a));
        else
            describe_axis(&b, &s->axes[a]);
    }
    snprintf(out, size, "%s", b.p ? b.p : "");
    free(b.p);
}

void sweep_options_line(char *out, size_t size, const sweep_t *s)
{
    sweep_text_t b = {0};
    sweep_text_add(&b, "%s", "");
    for (int i = 0; i < s->noptions; i++) sweep_text_add(&b, "%s%s", i ? " " : "", s->options[i]);
    snprintf(out, size, "%s", b.p);
    free(b.p);
}

const char **sweep_run_args(const sweep_t *s, long r, int *n)
{
    const char **v = sweep_xrealloc(NULL, (size_t)(s->noptions + 2 * s->naxes + 1) * sizeof *v);
    int k = 0;
    for (int i = 0; i < s->noptions; i++) v[k++] = s->options[i];
    static char flags[SWEEP_MAX_AXES][SWEEP_NAME_MAX + 2];
    for (int a = 0; a < s->naxes; a++) {
        snprintf(flags[a], sizeof flags[a], "--%s", s->axes[a].name);
        v[k++] = flags[a];
        v[k++] = sweep_value(s, r, a);
    }
    v[k] = NULL;
    *n = k;
    return v;
}

void sweep_free(sweep_t *s)
{
    for (int a = 0; a < s->naxes; a++) {
        for (int i = 0; i < s->axes[a].nvalues; i++) free(s->axes[a].values[i]);
        free(s->axes[a].values);
    }
    for (int i = 0; i < s->noptions; i++) free(s->options[i]);
    free(s->options);
    memset(s, 0, sizeof *s);
}
