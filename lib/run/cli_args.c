/* cli_args.c — the one option syntax every program shares (cli.h): --name VALUE and
 * --name=VALUE, flags without a value, "--" ending the options, and the nearest accepted name
 * suggested for a word that is not one. drift_cli_parse (experiments) and drift_args_parse
 * (the tools' subcommands) both read options through drift_opt_split and refuse unknown
 * names through drift_suggest, so a user meets the same rules everywhere. */
#include "cli.h"
#include "drift.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The names compared are option, command and format names (a few dozen characters): a
 * longer word is no typo of any of them, and a fixed bound keeps the table on the stack. */
#define EDIT_MAX 64

int drift_edit_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n >= EDIT_MAX || m >= EDIT_MAX) return (int)(n > m ? n : m);
    /* Optimal string alignment: insertions, deletions, substitutions and transpositions of
     * two neighbours cost 1 each (argmax_flp -> argmax_flip is 1, bf61 -> bf16 is 1), letters
     * compared without case (--k -> --K is 0: a case slip is the commonest typo of all). */
    int d[EDIT_MAX + 1][EDIT_MAX + 1];
    for (size_t i = 0; i <= n; i++) d[i][0] = (int)i;
    for (size_t j = 0; j <= m; j++) d[0][j] = (int)j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
            int best = d[i - 1][j - 1] + (ca != cb);
            if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) && tolower((unsigned char)a[i - 2]) == cb &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[n][m];
}

const char *drift_suggest(const char *word, const char *const *names, int n)
{
    /* Close enough to be a typo: at most one edit in three characters of the word, and at
     * least one edit for every word (so "--k" finds "--K" and "fp61" finds "fp16"), but never
     * as many edits as the name has characters (a two-letter name is not the typo of "zz"). */
    int len = (int)strlen(word), limit = len / 3 > 1 ? len / 3 : 1;
    const char *best = NULL;
    int bd = limit + 1;
    for (int i = 0; i < n; i++) {
        if (!names[i]) continue;
        int d = drift_edit_distance(word, names[i]);
        if (d < bd && d < (int)strlen(names[i])) best = names[i], bd = d;
    }
    return best;
}

void drift_suggest_text(char *buf, size_t size, const char *word, const char *const *names, int n, const char *prefix)
{
    const char *s = drift_suggest(word, names, n);
    if (s)
        snprintf(buf, size, "did you mean '%s%s'? ", prefix ? prefix : "", s);
    else if (size)
        buf[0] = 0;
}

int drift_opt_split(char *name, size_t size, const char **value, const char *arg)
{
    *value = NULL;
    if (strncmp(arg, "--", 2) != 0 || arg[2] == 0 || arg[2] == '=') return DRIFT_EINVAL;
    const char *eq = strchr(arg + 2, '=');
    size_t len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
    if (len >= size) len = size - 1; /* longer than any name: stays unknown, and is named cut */
    memcpy(name, arg + 2, len);
    name[len] = 0;
    if (eq) *value = eq + 1;
    return DRIFT_OK;
}

int drift_opt_value(const char **value, int *i, int argc, char **argv, const char *name, const char *metavar)
{
    if (*value) return DRIFT_OK;
    /* The next word is the value unless it is missing or is itself an option: "--out --quiet"
     * means a forgotten directory, not a directory named "--quiet" (--out=--quiet says that). */
    if (*i + 1 >= argc || !strncmp(argv[*i + 1], "--", 2))
        drift_die("--%s: needs a value (accepted: --%s %s or --%s=%s)", name, name, metavar ? metavar : "VALUE", name,
            metavar ? metavar : "VALUE");
    *value = argv[++*i];
    return DRIFT_OK;
}

/* A word that starts with '-' but is a VALUE: "-" (stdin) and a negative number or -inf/-nan
 * (calc round -0.5). */
static int is_value(const char *s)
{
    if (s[0] != '-') return 1;
    if (s[1] == 0) return 1;
    if (s[1] == '-') return 0;
    return isdigit((unsigned char)s[1]) || s[1] == '.' || !strncmp(s + 1, "inf", 3) || !strncmp(s + 1, "nan", 3) ||
           !strncmp(s + 1, "Inf", 3) || !strncmp(s + 1, "NaN", 3) || !strncmp(s + 1, "0x", 2);
}

static void die_unknown(const char *arg, const char *name, const drift_arg_opt_t *opts, int nopts)
{
    const char *names[64];
    int n = 0;
    char accepted[512] = "";
    for (int j = 0; j < nopts && n < 62; j++) names[n++] = opts[j].name;
    names[n++] = "help";
    names[n++] = "version";
    for (int j = 0; j < n; j++) {
        size_t l = strlen(accepted);
        snprintf(accepted + l, sizeof accepted - l, "%s--%s", j ? ", " : "", names[j]);
    }
    char hint[96];
    drift_suggest_text(hint, sizeof hint, name, names, n, "--");
    drift_die("unknown option '%s' (%saccepted: %s)", arg, hint, accepted);
}

int drift_args_parse(
    const drift_arg_opt_t *opts, int nopts, const char **pos, int maxpos, int argc, char **argv, void (*usage)(FILE *))
{
    int npos = 0, options = 1;
    drift_env_threads_check();
    /* Which word set each option (0: none yet): an option given twice, or two flags that set
     * one destination to different values (--fma --nofma), would leave the result to the
     * order of the words; refused instead. */
    int set_at[64] = {0};
    if (nopts > 64) drift_die("more than 64 options");
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (options && !strcmp(arg, "--")) {
            options = 0;
            continue;
        }
        if (!options || is_value(arg)) {
            if (npos == maxpos && maxpos == 0)
                drift_die("unexpected argument '%s' (this command takes no arguments; see --help)", arg);
            if (npos == maxpos)
                drift_die("unexpected argument '%s' (this command takes at most %d FILE%s or value%s; see --help)", arg,
                    maxpos, maxpos == 1 ? "" : "s", maxpos == 1 ? "" : "s");
            pos[npos++] = arg;
            continue;
        }
        if (!strcmp(arg, "-h")) arg = "--help";
        char name[64];
        const char *value;
        if (drift_opt_split(name, sizeof name, &value, arg) != DRIFT_OK) die_unknown(arg, arg + 1, opts, nopts);
        if (!strcmp(name, "help") || !strcmp(name, "version")) {
            if (value) drift_die("--%s takes no value (found '%s')", name, arg);
            if (name[0] == 'h')
                usage(stdout);
            else
                printf("%s (driftlab %s)\n", drift_program(), DRIFT_VERSION);
            exit(0);
        }
        const drift_arg_opt_t *o = NULL;
        for (int j = 0; j < nopts; j++)
            if (!strcmp(opts[j].name, name)) o = &opts[j];
        if (!o) die_unknown(arg, name, opts, nopts);
        int k = (int)(o - opts);
        for (int j = 0; j < nopts; j++) {
            if (!set_at[j]) continue;
            if (j == k) drift_die("--%s: given twice (accepted: once)", name);
            if (!o->value && !opts[j].value && opts[j].flag == o->flag && opts[j].flag_value != o->flag_value)
                drift_die("--%s: contradicts --%s given before it (accepted: one of them)", name, opts[j].name);
        }
        set_at[k] = i;
        if (!o->value) { /* a flag */
            if (value) drift_die("--%s takes no value (found '%s')", name, arg);
            *o->flag = o->flag_value;
            continue;
        }
        drift_opt_value(&value, &i, argc, argv, name, o->metavar);
        *o->value = value;
    }
    return npos;
}

int drift_name_pick(const char *opt, const char *value, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(names[i], value)) return i;
    char accepted[256] = "", hint[96];
    for (int i = 0; i < n; i++) {
        size_t l = strlen(accepted);
        snprintf(accepted + l, sizeof accepted - l, "%s%s", i ? ", " : "", names[i]);
    }
    drift_suggest_text(hint, sizeof hint, value, names, n, NULL);
    drift_die("%s: unknown value '%s' (%saccepted: %s)", opt, value, hint, accepted);
}

void drift_name_set(int *chosen, const char *opt, const char *list, const char *const *names, int n)
{
    int all = !strcmp(list, "all");
    for (int i = 0; i < n; i++) chosen[i] = all;
    for (const char *p = list; !all && *p;) {
        size_t len = strcspn(p, ",");
        char name[128];
        if (len >= sizeof name) drift_die("%s: '%.*s...' is not a name (too long)", opt, 32, p);
        memcpy(name, p, len);
        name[len] = 0;
        chosen[drift_name_pick(opt, name, names, n)] = 1;
        p += len + (p[len] == ',');
    }
}
