/* merge.c — the shares of a sweep merged into one set of CSVs and one report fragment.
 *
 * The merge reads only verified shares (sweep_check_share), and its output is a function of the
 * runs alone, never of how they were sharded: for every file name that some run wrote
 *   - EXP*.csv: the sweep's own metadata lines; then each metadata key of the runs once when every
 *     run agrees on it, or once per run ("# key (run R): value") when they differ; "date" and
 *     "argv" (they name times and temporary paths) and the swept keys (they are columns) dropped;
 *     then the header with leading columns run and one per axis (prefixed "sweep_" when the
 *     experiment has a column of that name in any of its CSVs); then the rows of run 0, run 1, ... each in its own
 *     order. The lines that name the shares (hosts, times, command lines) all begin "# share".
 *   - EXP.md: one report fragment: the sweep, a table of runs, then every run's fragment.
 *   - sweep_runs.csv: run, the grid values, the run's directory and the command that reproduces it.
 * Everything is written into a fresh merged.part-XXXXXX/ (merge.manifest last) and renamed to
 * merged/ at the end; --out is refused unless it is new or a previous merge of this sweep
 * alone (target.c), before anything is read or written. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "escape.h"
#include "manifest.h"
#include "outlock.h"
#include "sweep.h"

typedef struct {
    char *key;
    int occ;
    char *line;
} meta_t;

typedef struct {
    meta_t *m;
    int n;
    char *header;
} runmeta_t;

static int has_suffix(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

static void chomp(char *s) { s[strcspn(s, "\r\n")] = 0; }

/* "# key: value" -> key (malloc'd); a comment without ": " is its own key. */
static char *meta_key(const char *line)
{
    const char *p = line + 1;
    if (*p == ' ') p++;
    const char *colon = strstr(p, ": ");
    size_t n = colon ? (size_t)(colon - p) : strlen(p);
    char *k = sweep_xrealloc(NULL, n + 1);
    memcpy(k, p, n);
    k[n] = 0;
    return k;
}

static int read_meta(runmeta_t *rm, const char *path)
{
    memset(rm, 0, sizeof *rm);
    FILE *fp = fopen(path, "r");
    if (!fp) return -1;
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, fp) > 0) {
        chomp(line);
        if (line[0] != '#') {
            rm->header = sweep_xstrdup(line);
            break;
        }
        char *key = meta_key(line);
        int occ = 0;
        for (int i = 0; i < rm->n; i++) occ += !strcmp(rm->m[i].key, key);
        rm->m = sweep_xrealloc(rm->m, (size_t)(rm->n + 1) * sizeof *rm->m);
        rm->m[rm->n++] = (meta_t){key, occ, sweep_xstrdup(line)};
    }
    free(line);
    fclose(fp);
    return rm->header ? 0 : -1;
}

static void free_meta(runmeta_t *rm)
{
    for (int i = 0; i < rm->n; i++) {
        free(rm->m[i].key);
        free(rm->m[i].line);
    }
    free(rm->m);
    free(rm->header);
}

static const meta_t *find_meta(const runmeta_t *rm, const char *key, int occ)
{
    for (int i = 0; i < rm->n; i++)
        if (rm->m[i].occ == occ && !strcmp(rm->m[i].key, key)) return &rm->m[i];
    return NULL;
}

static int dropped_key(const sweep_t *s, const char *key)
{
    if (!strcmp(key, "date") || !strcmp(key, "argv")) return 1;
    for (int a = 0; a < s->naxes; a++)
        if (!strcmp(key, s->axes[a].name)) return 1;
    return 0;
}

static int header_has(const char *header, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = header;;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !strncmp(p, name, n)) return 1;
        if (!e) return 0;
        p = e + 1;
    }
}

/* One manifest's header fields, for the "# share" lines. */
typedef struct {
    char host[256], commit[64], finished[64], seconds[32], *argv;
} shareinfo_t;

static void read_shareinfo(shareinfo_t *si, const sweep_t *s, const char *dir, long share)
{
    char path[4096];
    memset(si, 0, sizeof *si);
    sweep_manifest_path(path, sizeof path, s, dir, share);
    FILE *fp = fopen(path, "r");
    if (!fp) return;
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, fp) > 0) {
        chomp(line);
        if (!strncmp(line, "host: ", 6))
            snprintf(si->host, sizeof si->host, "%s", line + 6);
        else if (!strncmp(line, "commit: ", 8))
            snprintf(si->commit, sizeof si->commit, "%s", line + 8);
        else if (!strncmp(line, "finished: ", 10))
            snprintf(si->finished, sizeof si->finished, "%s", line + 10);
        else if (!strncmp(line, "seconds: ", 9))
            snprintf(si->seconds, sizeof si->seconds, "%s", line + 9);
        else if (!strncmp(line, "argv: ", 6))
            si->argv = sweep_xstrdup(line + 6);
        else if (!strncmp(line, "run: ", 5))
            break;
    }
    free(line);
    fclose(fp);
}

typedef struct {
    const sweep_t *s;
    const sweep_ctx_t *c;
    shareinfo_t *shares;
    char grid[4096], options[4096];
    int prefix_run, prefix[SWEEP_MAX_AXES]; /* the leading column is "sweep_<name>" */
} merge_t;

static void write_prefix(FILE *out, const merge_t *m, int with_shares)
{
    const sweep_t *s = m->s;
    fprintf(out, "# sweep: %s over %s\n", s->experiment, m->grid);
    fprintf(out, "# sweep-options: %s\n", m->options);
    fprintf(out, "# sweep-definition: %s\n", m->c->def_sha);
    fprintf(out, "# sweep-runs: %ld\n", s->nruns);
    fprintf(out,
        "# sweep-order: rows by run (the grid's odometer, last axis fastest), then as each run wrote them; leading columns run and the axes\n");
    fprintf(out, "# sweep-commit: %s\n", m->c->commit);
    if (!with_shares) return;
    fprintf(out, "# shares: %ld\n", s->nshares);
    for (long i = 0; i < s->nshares; i++) {
        const shareinfo_t *si = &m->shares[i];
        fprintf(out, "# share %ld/%ld: host %s, commit %s, finished %s, %s s, argv %s\n", i, s->nshares, si->host,
            si->commit, si->finished, si->seconds, si->argv ? si->argv : "");
    }
}

static void run_dir(char *buf, size_t size, const char *dir, long r) { snprintf(buf, size, "%s/runs/%06ld", dir, r); }

/* Merges every run's copy of `name` into out. Returns rows written, or -1 (message printed). */
static long merge_csv(FILE *out, const merge_t *m, const char *name)
{
    const sweep_t *s = m->s;
    runmeta_t *rm = sweep_xrealloc(NULL, (size_t)s->nruns * sizeof *rm);
    int *has = sweep_xrealloc(NULL, (size_t)s->nruns * sizeof *has);
    long first = -1, nhave = 0, rows = 0;
    for (long r = 0; r < s->nruns; r++) {
        char path[4400], dir[4096];
        run_dir(dir, sizeof dir, m->c->dir, r);
        snprintf(path, sizeof path, "%s/%s", dir, name);
        has[r] = access(path, F_OK) == 0;
        memset(&rm[r], 0, sizeof rm[r]);
        if (!has[r]) continue;
        if (read_meta(&rm[r], path) != 0) {
            fprintf(stderr, "drift-sweep: --merge: %s has no header row\n", path);
            rows = -1;
            goto done;
        }
        if (first < 0)
            first = r;
        else if (strcmp(rm[r].header, rm[first].header)) {
            fprintf(stderr,
                "drift-sweep: --merge: %s: run %ld's header differs from run %ld's (the grid changes the columns: sweep that option in separate sweeps)\n",
                name, r, first);
            rows = -1;
            goto done;
        }
        nhave++;
    }

    write_prefix(out, m, 1);
    fprintf(out, "# sweep-file: %s from %ld of %ld runs\n", name, nhave, s->nruns);
    /* Slots (key, occurrence) in the order they first appear, run by run. */
    const meta_t **slots = NULL;
    int nslots = 0;
    for (long r = 0; r < s->nruns; r++) {
        for (int i = 0; has[r] && i < rm[r].n; i++) {
            const meta_t *mt = &rm[r].m[i];
            int known = 0;
            for (int k = 0; k < nslots && !known; k++)
                known = slots[k]->occ == mt->occ && !strcmp(slots[k]->key, mt->key);
            if (known) continue;
            slots = sweep_xrealloc(slots, (size_t)(nslots + 1) * sizeof *slots);
            slots[nslots++] = mt;
        }
    }
    for (int k = 0; k < nslots; k++) {
        const meta_t *mt = slots[k];
        if (dropped_key(s, mt->key)) continue;
        int uniform = 1;
        for (long q = 0; q < s->nruns && uniform; q++) {
            if (!has[q]) continue;
            const meta_t *o = find_meta(&rm[q], mt->key, mt->occ);
            uniform = o && !strcmp(o->line, mt->line);
        }
        if (uniform) {
            fprintf(out, "%s\n", mt->line);
            continue;
        }
        for (long q = 0; q < s->nruns; q++) {
            const meta_t *o = has[q] ? find_meta(&rm[q], mt->key, mt->occ) : NULL;
            if (!o) continue;
            const char *colon = strstr(o->line, ": ");
            fprintf(out, "# %s (run %ld): %s\n", o->key, q, colon ? colon + 2 : "");
        }
    }
    free(slots);
    fprintf(out, "%s", m->prefix_run ? "sweep_run" : "run");
    for (int a = 0; a < s->naxes; a++) fprintf(out, ",%s%s", m->prefix[a] ? "sweep_" : "", s->axes[a].name);
    fprintf(out, ",%s\n", rm[first].header);

    char *line = NULL;
    size_t cap = 0;
    for (long r = 0; r < s->nruns; r++) {
        if (!has[r]) continue;
        char path[4400], dir[4096];
        run_dir(dir, sizeof dir, m->c->dir, r);
        snprintf(path, sizeof path, "%s/%s", dir, name);
        FILE *in = fopen(path, "r");
        if (!in) {
            fprintf(stderr, "drift-sweep: --merge: cannot read %s\n", path);
            rows = -1;
            break;
        }
        int in_body = 0;
        while (getline(&line, &cap, in) > 0) {
            chomp(line);
            if (!in_body) {
                in_body = line[0] != '#';
                continue;
            }
            if (!line[0]) continue;
            if (line[0] == '#') {
                fprintf(out, "%s\n", line);
                continue;
            }
            fprintf(out, "%ld", r);
            for (int a = 0; a < s->naxes; a++) fprintf(out, ",%s", sweep_value(s, r, a));
            fprintf(out, ",%s\n", line);
            rows++;
        }
        fclose(in);
    }
    free(line);
done:
    for (long r = 0; r < s->nruns; r++) free_meta(&rm[r]);
    free(rm);
    free(has);
    return rows;
}

/* A leading column is named "sweep_<name>" in every merged CSV when the experiment has a
 * column of that name in any of them (argmax_flip's K), so one sweep's files agree. */
static void find_collisions(merge_t *m, char **names, int nnames)
{
    for (int i = 0; i < nnames; i++) {
        if (!has_suffix(names[i], ".csv")) continue;
        for (long r = 0; r < m->s->nruns; r++) {
            char path[8400], dir[4096];
            runmeta_t rm;
            run_dir(dir, sizeof dir, m->c->dir, r);
            snprintf(path, sizeof path, "%s/%s", dir, names[i]);
            if (access(path, F_OK) != 0) continue;
            if (read_meta(&rm, path) == 0) {
                m->prefix_run |= header_has(rm.header, "run");
                for (int a = 0; a < m->s->naxes; a++) m->prefix[a] |= header_has(rm.header, m->s->axes[a].name);
            }
            free_meta(&rm);
            break;
        }
    }
}

/* "./lab run EXP options --axis value ..." for run r. */
static void reproduce(char *buf, size_t size, const sweep_t *s, long r)
{
    int n;
    const char **args = sweep_run_args(s, r, &n);
    size_t len = (size_t)snprintf(buf, size, "./lab run %s", s->experiment);
    for (int i = 0; i < n && len < size; i++) len += (size_t)snprintf(buf + len, size - len, " %s", args[i]);
    free(args);
}

static int copy_into(FILE *out, const char *path)
{
    FILE *in = fopen(path, "r");
    if (!in) return -1;
    char buf[65536];
    size_t n;
    int last = '\n';
    while ((n = fread(buf, 1, sizeof buf, in)) > 0) {
        fwrite(buf, 1, n, out);
        last = buf[n - 1];
    }
    fclose(in);
    if (last != '\n') fputc('\n', out);
    return 0;
}

typedef struct {
    char *name;
    long rows, runs;
} fileinfo_t;

static void write_fragment(FILE *out, const merge_t *m, const fileinfo_t *csvs, int ncsv, const char *md)
{
    const sweep_t *s = m->s;
    fprintf(out, "## Sweep: %s over %s\n\n", s->experiment, m->grid);
    fprintf(out,
        "%ld runs of `./lab run %s%s%s`, one per point of the grid `%s` (commit %s), "
        "merged by `drift-sweep --merge`. Rows are ordered by run (the grid's odometer, last axis fastest), "
        "then as each run wrote them; the merged CSVs lead with the columns `run` and the axes.\n\n",
        s->nruns, s->experiment, m->options[0] ? " " : "", m->options, m->grid, m->c->commit);
    fprintf(out, "| merged file | rows | runs |\n|---|---:|---:|\n");
    for (int i = 0; i < ncsv; i++) fprintf(out, "| %s | %ld | %ld |\n", csvs[i].name, csvs[i].rows, csvs[i].runs);
    fprintf(out, "\n| run |");
    for (int a = 0; a < s->naxes; a++) fprintf(out, " %s |", s->axes[a].name);
    fprintf(out, " reproduce |\n|---:|");
    for (int a = 0; a < s->naxes; a++) fprintf(out, "---|");
    fprintf(out, "---|\n");
    for (long r = 0; r < s->nruns; r++) {
        char cmd[8192];
        reproduce(cmd, sizeof cmd, s, r);
        fprintf(out, "| %ld |", r);
        for (int a = 0; a < s->naxes; a++) fprintf(out, " %s |", sweep_value(s, r, a));
        fprintf(out, " `%s` |\n", cmd);
    }
    if (!md) return;
    for (long r = 0; r < s->nruns; r++) {
        char path[4400], dir[4096], desc[4096];
        run_dir(dir, sizeof dir, m->c->dir, r);
        snprintf(path, sizeof path, "%s/%s", dir, md);
        if (access(path, F_OK) != 0) continue;
        sweep_describe(desc, sizeof desc, s, r);
        fprintf(out, "\n### Run %ld: %s\n\n", r, desc);
        copy_into(out, path);
    }
}

static void write_runs(FILE *out, const merge_t *m)
{
    const sweep_t *s = m->s;
    write_prefix(out, m, 0);
    fprintf(out, "run");
    for (int a = 0; a < s->naxes; a++) fprintf(out, ",%s", s->axes[a].name);
    fprintf(out, ",dir,command\n");
    for (long r = 0; r < s->nruns; r++) {
        char cmd[8192];
        reproduce(cmd, sizeof cmd, s, r);
        fprintf(out, "%ld", r);
        for (int a = 0; a < s->naxes; a++) fprintf(out, ",%s", sweep_value(s, r, a));
        fprintf(out, ",runs/%06ld,\"", r);
        for (const char *p = cmd; *p; p++) fprintf(out, *p == '"' ? "\"\"" : "%c", *p);
        fprintf(out, "\"\n");
    }
}

static FILE *open_out(const char *dir, const char *name)
{
    char path[8200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *fp = fopen(path, "w");
    if (!fp) fprintf(stderr, "drift-sweep: --merge: cannot write %s: %s\n", path, strerror(errno));
    return fp;
}

static int close_out(FILE *fp)
{
    int bad = ferror(fp);
    return (fclose(fp) != 0 || bad) ? -1 : 0;
}

static int merge_locked(const sweep_t *s, const sweep_ctx_t *c, const char *outdir, char *twhy, size_t twsize);

int sweep_merge(const sweep_t *s, const sweep_ctx_t *c, const char *outdir_arg)
{
    /* "p/", "p/." and "p" are one directory; the .part sibling must not land inside it, and
     * "p/." cannot be renamed (EBUSY, after the target had been judged a previous merge). */
    char outdir[4096], twhy[8192], parent[4096];
    snprintf(outdir, sizeof outdir, "%s", outdir_arg);
    for (size_t n = strlen(outdir); n > 1;) {
        if (outdir[n - 1] == '/')
            outdir[--n] = 0;
        else if (n > 2 && outdir[n - 1] == '.' && outdir[n - 2] == '/')
            outdir[n -= 2] = 0;
        else
            break;
    }
    /* A target refused is refused before anything, the lock file included, is made. */
    char **names;
    int nnames;
    if (sweep_merge_target(twhy, sizeof twhy, s, c, outdir, &names, &nnames) != 0) {
        fprintf(stderr, "drift-sweep: ");
        drift_escape_fputs(stderr, twhy, NULL);
        fputc('\n', stderr);
        return 2;
    }
    sweep_free_names(names, nnames);
    /* One merge into outdir at a time: the lock ".BASE.lock" beside it (lib/run/outlock.h);
     * under it the target is judged again. A parent not made yet has no merge in it. */
    const char *slash = strrchr(outdir, '/'), *base = slash ? slash + 1 : outdir;
    snprintf(
        parent, sizeof parent, "%.*s", slash ? (int)(slash == outdir ? 1 : slash - outdir) : 1, slash ? outdir : ".");
    struct stat pst;
    if (*base && strcmp(base, ".") && strcmp(base, "..") && stat(parent, &pst) == 0 && S_ISDIR(pst.st_mode) &&
        access(parent, W_OK) == 0 && drift_out_lock(twhy, sizeof twhy, parent, base) != 0) {
        fprintf(stderr, "drift-sweep: --merge: ");
        drift_escape_fputs(stderr, twhy, NULL);
        fputc('\n', stderr);
        return 2;
    }
    int rc = merge_locked(s, c, outdir, twhy, sizeof twhy);
    drift_out_unlock();
    return rc;
}

static int merge_locked(const sweep_t *s, const sweep_ctx_t *c, const char *outdir, char *twhy, size_t twsize)
{
    char **old_names;
    int nold;
    if (sweep_merge_target(twhy, twsize, s, c, outdir, &old_names, &nold) != 0) {
        fprintf(stderr, "drift-sweep: ");
        drift_escape_fputs(stderr, twhy, NULL);
        fputc('\n', stderr);
        return 2;
    }
    /* Every share must be there, whole, from this commit and this sweep: one line names them all,
     * consecutive shares refused for the same reason named together ("shares 0..15 of 16"). */
    sweep_text_t refusal = {0};
    long nbad = 0, group_first = -1, group_last = -1, ngroups = 0;
    char group_why[1024] = "", why[1024];
    share_state_t group_st = SHARE_OK;
    for (long i = 0; i <= s->nshares; i++) {
        share_state_t st = i < s->nshares ? sweep_check_share(s, c, i, why, sizeof why) : SHARE_OK;
        if (st != SHARE_OK && group_first >= 0 && st == group_st && i == group_last + 1 && !strcmp(why, group_why)) {
            group_last = i;
            nbad++;
            continue;
        }
        if (group_first >= 0 && ngroups++ < 8) {
            static const char *const what[] = {"", "missing", "corrupted", "foreign", NULL};
            if (group_first == group_last)
                sweep_text_add(&refusal, "%sshare %ld/%ld", ngroups > 1 ? "; " : "", group_first, s->nshares);
            else
                sweep_text_add(
                    &refusal, "%sshares %ld..%ld of %ld", ngroups > 1 ? "; " : "", group_first, group_last, s->nshares);
            if (what[group_st])
                sweep_text_add(&refusal, " %s (%s)", what[group_st], group_why);
            else
                sweep_text_add(&refusal, " %s", group_why);
        }
        group_first = -1;
        if (st == SHARE_OK) continue;
        nbad++;
        group_first = group_last = i;
        group_st = st;
        snprintf(group_why, sizeof group_why, "%s", why);
    }
    if (nbad) {
        fprintf(stderr,
            "drift-sweep: --merge %s: refused, %ld of %ld shares unusable: %s%s (rerun the sweep: it redoes only those)\n",
            c->dir, nbad, s->nshares, refusal.p, ngroups > 8 ? "; ..." : "");
        free(refusal.p);
        sweep_free_names(old_names, nold);
        return 2;
    }

    merge_t m = {.s = s, .c = c};
    sweep_describe(m.grid, sizeof m.grid, s, -1);
    sweep_options_line(m.options, sizeof m.options, s);
    m.shares = sweep_xrealloc(NULL, (size_t)s->nshares * sizeof *m.shares);
    for (long i = 0; i < s->nshares; i++) read_shareinfo(&m.shares[i], s, c->dir, i);

    /* The union of the runs' file names, sorted. */
    char **names = NULL;
    int nnames = 0;
    for (long r = 0; r < s->nruns; r++) {
        char dir[4096], **f;
        int others;
        run_dir(dir, sizeof dir, c->dir, r);
        char why[8400]; /* a run is merged only when it is one complete set (lib/run/manifest.h) */
        if (drift_manifest_check(why, sizeof why, dir, s->experiment) != 0) sweep_die("merge: run %ld: %s", r, why);
        int k = sweep_list_files(dir, &f, &others);
        for (int i = 0; i < k; i++) {
            int dup = 0;
            for (int j = 0; j < nnames && !dup; j++) dup = !strcmp(names[j], f[i]);
            if (dup) continue;
            names = sweep_xrealloc(names, (size_t)(nnames + 1) * sizeof *names);
            names[nnames++] = sweep_xstrdup(f[i]);
        }
        if (k > 0) sweep_free_names(f, k);
    }
    for (int i = 1; i < nnames; i++)
        for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
        }

    find_collisions(&m, names, nnames);
    char part[4200];
    snprintf(part, sizeof part, "%s", outdir);
    char *slash = strrchr(part, '/');
    if (slash && slash != part) {
        *slash = 0;
        sweep_mkdirs(part); /* the parents; the merge's own directory is the rename's */
    }
    snprintf(part, sizeof part, "%s.part-XXXXXX", outdir);
    if (!mkdtemp(part)) sweep_die("--merge: cannot create '%s': %s", part, strerror(errno));
    int rc = 0, ncsv = 0;
    fileinfo_t *csvs = sweep_xrealloc(NULL, (size_t)(nnames + 1) * sizeof *csvs);
    const char *md = NULL;
    long total = 0;
    for (int i = 0; i < nnames && !rc; i++) {
        if (has_suffix(names[i], ".md")) {
            if (!md) md = names[i];
            continue;
        }
        if (!has_suffix(names[i], ".csv")) continue;
        FILE *out = open_out(part, names[i]);
        if (!out) {
            rc = 1;
            break;
        }
        long rows = merge_csv(out, &m, names[i]);
        if (close_out(out) != 0 || rows < 0) {
            rc = rows < 0 ? 2 : 1;
            break;
        }
        long runs = 0;
        for (long r = 0; r < s->nruns; r++) {
            char path[8400], dir[4096];
            run_dir(dir, sizeof dir, c->dir, r);
            snprintf(path, sizeof path, "%s/%s", dir, names[i]);
            runs += access(path, F_OK) == 0;
        }
        csvs[ncsv++] = (fileinfo_t){names[i], rows, runs};
        total += rows;
    }
    if (!rc) {
        char fragname[SWEEP_NAME_MAX + 8];
        snprintf(fragname, sizeof fragname, "%s.md", s->experiment);
        FILE *out = open_out(part, fragname);
        if (out) write_fragment(out, &m, csvs, ncsv, md);
        if (!out || close_out(out) != 0) rc = 1;
        out = rc ? NULL : open_out(part, "sweep_runs.csv");
        if (out) write_runs(out, &m);
        if (!out || close_out(out) != 0) rc = 1;
    }
    if (!rc && sweep_write_merge_manifest(s, c, part) != 0) {
        fprintf(stderr, "drift-sweep: --merge: cannot write %s/merge.manifest: %s\n", part, strerror(errno));
        rc = 1;
    }
    if (!rc && sweep_replace_merge(twhy, twsize, part, outdir, old_names, nold) != 0) {
        fprintf(stderr, "drift-sweep: %s\n", twhy);
        rc = 1;
    }
    sweep_free_names(old_names, nold);
    if (rc)
        sweep_remove_tree(part);
    else if (!sweep_quiet)
        fprintf(stderr, "drift-sweep: merged %ld runs (%ld shares) into %s: %d CSV files, %ld rows, %s.md\n", s->nruns,
            s->nshares, outdir, ncsv, total, s->experiment);
    for (int i = 0; i < nnames; i++) free(names[i]);
    free(names);
    free(csvs);
    for (long i = 0; i < s->nshares; i++) free(m.shares[i].argv);
    free(m.shares);
    return rc;
}
