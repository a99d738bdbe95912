/* output.c — the declared output (output.h): one declaration, three renderings. */
#define _GNU_SOURCE /* program_invocation_short_name: the name for a failure at exit */
#include "output.h"
#include "drift.h"
#include "escape.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void die_bug(const drift_out_t *o, int t, const char *what)
{
    drift_die("table %d (%s): %s", t, o->tables[t].suffix ? o->tables[t].suffix : "no CSV", what);
}

/* Text an experiment writes names its run's directory "data/" and its plot command
 * "./lab plot NAME", as the report's run has them. On stdout, for a run into another --out,
 * fputs_run writes the words of that run instead: "data/" at the start of a path becomes
 * "<out>/", and "./lab plot NAME" gains "--data <out>" (without it, ./lab plot draws another
 * run). The fragment is data and keeps the report's words: two runs into two directories write
 * the same bytes, and a sweep's merge names no staging directory that the merge renamed. */
static int path_start(const char *text, const char *p) { return p == text || strchr(" (`[\"'\n", p[-1]) != NULL; }

static void fputs_run(const char *text, FILE *fp, const drift_cli_t *cli)
{
    const char *out = cli->out_dir;
    size_t n = strlen(out);
    while (n > 1 && out[n - 1] == '/') n--;
    if (n == 4 && !strncmp(out, "data", 4)) {
        fputs(text, fp);
        return;
    }
    int plain = 1; /* a directory the shell takes as one word unquoted */
    for (size_t i = 0; i < n; i++)
        if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._/-+", out[i])) plain = 0;
    static const char PLOT[] = "./lab plot ";
    for (const char *p = text; *p;) {
        if (!strncmp(p, "data/", 5) && path_start(text, p)) {
            fprintf(fp, "%.*s/", (int)n, out);
            p += 5;
        } else if (!strncmp(p, PLOT, sizeof PLOT - 1)) {
            size_t w = strspn(p + sizeof PLOT - 1, "abcdefghijklmnopqrstuvwxyz0123456789_");
            size_t len = sizeof PLOT - 1 + w;
            fwrite(p, 1, len, fp);
            p += len;
            if (w && strncmp(p, " --data", 7)) fprintf(fp, plain ? " --data %.*s" : " --data '%.*s'", (int)n, out);
        } else
            fputc(*p++, fp);
    }
}

void drift_out_open(drift_out_t *o, const drift_cli_t *cli, const drift_table_spec_t *tables, int n, int with_md)
{
    const char *suffix[DRIFT_OUT_MAX + 1];
    if (n < 0 || n > DRIFT_OUT_MAX) drift_die("at most %d declared tables", DRIFT_OUT_MAX);
    memset(o, 0, sizeof *o);
    o->cli = cli;
    o->tables = tables;
    o->ntables = n;
    o->has_md = with_md;
    for (int t = 0; t < n; t++) suffix[t] = tables[t].suffix;
    suffix[n] = with_md ? ".md" : NULL;
    drift_stdout_check_at_exit();
    drift_files_open(o->files, n + 1, cli, suffix);
    for (int t = 0; t < n; t++)
        if (tables[t].suffix) drift_table_std_meta(&o->files[t], cli, NULL);
    o->md = with_md ? o->files[n].fp : NULL;
}

void drift_out_meta(drift_out_t *o, int t, const char *key, const char *fmt, ...)
{
    if (t < 0 || t >= o->ntables || !o->tables[t].suffix) die_bug(o, t, "metadata for a table without a CSV");
    if (o->header_done[t]) die_bug(o, t, "metadata after the header row");
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    drift_table_meta(&o->files[t], key, "%s", buf);
}

void drift_out_note(drift_out_t *o, int t, const char *fmt, ...)
{
    if (t < 0 || t >= o->ntables || !o->tables[t].suffix) die_bug(o, t, "a note for a table without a CSV");
    FILE *fp = o->files[t].fp;
    char small[1024], *buf = small;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof small && (buf = malloc((size_t)n + 1))) {
        va_start(ap, fmt);
        vsnprintf(buf, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    if (!buf) drift_die("out of memory writing a note of %d bytes into table %d's CSV", n, t);
    fputs("# ", fp); /* escaped like a metadata value: a note stays one comment line */
    drift_escape_fputs(fp, n < 0 ? "" : buf, NULL);
    fputc('\n', fp);
    if (buf != small) free(buf);
}

static const char *label(const drift_col_t *c) { return c->label ? c->label : c->name; }

static int numeric(const drift_col_t *c)
{
    return c->kind == DRIFT_COL_NUM || c->kind == DRIFT_COL_HEX || c->kind == DRIFT_COL_INT ||
           c->kind == DRIFT_COL_CELL;
}

void drift_cell_format(char *buf, size_t size, const drift_col_t *col, const drift_cell_t *cell)
{
    switch (col->kind) {
    case DRIFT_COL_NUM: drift_fmt_num(buf, size, cell->d, col->fmt ? col->fmt : "%.17g"); break;
    case DRIFT_COL_HEX: snprintf(buf, size, "%a", cell->d); break; /* the bits: a NaN's sign too, as libc spells it */
    case DRIFT_COL_INT: snprintf(buf, size, col->fmt ? col->fmt : "%ld", cell->i); break;
    case DRIFT_COL_TEXT:
    case DRIFT_COL_CELL: snprintf(buf, size, "%s", cell->s ? cell->s : ""); break;
    case DRIFT_COL_QUOTED: snprintf(buf, size, "\"%s\"", cell->s ? cell->s : ""); break;
    case DRIFT_COL_KEY:
        snprintf(buf, size, "%s", cell->s ? cell->s : "");
        for (char *p = buf; *p; p++)
            if (*p == ',') *p = 'x';
        break;
    }
}

/* One CSV cell. A text cell that holds a comma, a quote or a line break is written as an
 * RFC 4180 quoted field (quotes doubled), so that it can never shift the columns after it: a
 * B200 model name "align+truncate, then +c (RNE)" did, silently, until this existed. Other
 * cells are written as formatted (QUOTED columns are quoted already; numbers never need it). */
static void csv_cell(FILE *fp, int c, const drift_col_t *col, const char *buf)
{
    if (c) fputc(',', fp);
    int text = col->kind == DRIFT_COL_TEXT || col->kind == DRIFT_COL_CELL;
    if (!text || !buf[strcspn(buf, ",\"\n\r")]) {
        fputs(buf, fp);
        return;
    }
    fputc('"', fp);
    for (const char *p = buf; *p; p++) {
        if (*p == '"') fputc('"', fp);
        fputc(*p, fp);
    }
    fputc('"', fp);
}

static void csv_header(drift_out_t *o, int t)
{
    const drift_table_spec_t *s = &o->tables[t];
    if (!s->suffix || o->header_done[t]) return;
    FILE *fp = o->files[t].fp;
    for (int c = 0; c < s->ncols; c++) fprintf(fp, "%s%s", c ? "," : "", s->cols[c].name);
    fputc('\n', fp);
    o->header_done[t] = 1;
}

static void md_header(drift_out_t *o, int t)
{
    const drift_table_spec_t *s = &o->tables[t];
    if (o->md_started[t]) return;
    o->md_started[t] = 1;
    if (s->title) {
        fputs(s->title, o->md);
        fputs("\n\n", o->md);
    }
    for (int c = 0; c < s->ncols; c++) fprintf(o->md, "| %s ", label(&s->cols[c]));
    fputs("|\n", o->md);
    for (int c = 0; c < s->ncols; c++) fputs(numeric(&s->cols[c]) ? "|---:" : "|---", o->md);
    fputs("|\n", o->md);
}

static void keep(drift_textbuf_t *b, const char *cell)
{
    size_t n = strlen(cell) + 1;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 4096;
        while (cap < b->len + n) cap *= 2;
        char *p = realloc(b->text, cap);
        if (!p)
            drift_die(
                "out of memory keeping %zu bytes of the stdout table (--quiet keeps none; a smaller --profile keeps fewer rows)",
                cap);
        b->text = p;
        b->cap = cap;
    }
    memcpy(b->text + b->len, cell, n);
    b->len += n;
}

void drift_row_cells(drift_out_t *o, int t, const drift_cell_t *cells, int n)
{
    if (t < 0 || t >= o->ntables) drift_die("table %d: not declared", t);
    const drift_table_spec_t *s = &o->tables[t];
    if (n != s->ncols) die_bug(o, t, "a row of the wrong length");
    static const int WANT[] = {
        DRIFT_CELL_NUM, DRIFT_CELL_NUM, DRIFT_CELL_INT, DRIFT_CELL_TXT, DRIFT_CELL_TXT, DRIFT_CELL_TXT, DRIFT_CELL_TXT};
    for (int c = 0; c < n; c++)
        if ((int)cells[c].kind != WANT[s->cols[c].kind]) die_bug(o, t, "a cell of the wrong kind");
    int md = o->md && (s->show & DRIFT_SHOW_MD), show = (s->show & DRIFT_SHOW_STDOUT) && !o->cli->quiet;
    if (s->suffix) csv_header(o, t);
    if (md) md_header(o, t);
    char buf[512];
    for (int c = 0; c < n; c++) {
        drift_cell_format(buf, sizeof buf, &s->cols[c], &cells[c]);
        if (s->suffix) csv_cell(o->files[t].fp, c, &s->cols[c], buf);
        if (md) fprintf(o->md, "| %s ", buf);
        if (show) keep(&o->shown[t], buf);
    }
    if (s->suffix) fputc('\n', o->files[t].fp);
    if (md) fputs("|\n", o->md);
    if (show) o->shown[t].nrows++;
}

void drift_row_fmt(drift_out_t *o, int t, const char *fmt, ...)
{
    if (t < 0 || t >= o->ntables) drift_die("table %d: not declared", t);
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (len < 0 || (size_t)len >= sizeof buf) die_bug(o, t, "a formatted row too long");
    drift_cell_t cells[64];
    int n = 0;
    for (char *p = buf;; n++) {
        char *bar = strchr(p, '|'), *end = bar ? bar : p + strlen(p);
        while (*p == ' ') p++;
        while (end > p && end[-1] == ' ') end--;
        *end = 0;
        if (n == 64) die_bug(o, t, "a row of the wrong length");
        cells[n] = DRIFT_TXT(p);
        if (!bar) break;
        p = bar + 1;
    }
    drift_row_cells(o, t, cells, n + 1);
}

/* "**Question.** <question>[ <detail>]" and a blank line; detail formatted from ap when given. */
static void question(drift_out_t *o, const char *detail_fmt, va_list ap)
{
    fprintf(o->md, "**Question.** %s", o->cli->spec->question);
    if (detail_fmt) {
        fputc(' ', o->md);
        vfprintf(o->md, detail_fmt, ap);
    }
    fputs("\n\n", o->md);
}

void drift_md_intro(drift_out_t *o, const char *detail_fmt, ...)
{
    if (!o->md) return;
    va_list ap;
    va_start(ap, detail_fmt);
    question(o, detail_fmt, ap);
    va_end(ap);
    drift_md_reproduce(o, "data/%s*.csv", o->cli->spec->name);
}

void drift_md_question(drift_out_t *o, const char *detail_fmt, ...)
{
    if (!o->md) return;
    va_list ap;
    va_start(ap, detail_fmt);
    question(o, detail_fmt, ap);
    va_end(ap);
}

void drift_md_reproduce(drift_out_t *o, const char *files_fmt, ...)
{
    if (!o->md) return;
    char cmd[1024];
    drift_cli_reproduce(cmd, sizeof cmd, o->cli);
    fprintf(o->md, "Reproduce: `%s` (", cmd);
    char files[1024];
    va_list ap;
    va_start(ap, files_fmt);
    vsnprintf(files, sizeof files, files_fmt, ap);
    va_end(ap);
    fputs(files, o->md);
    fputs(").\n\n", o->md);
}

void drift_md_text(drift_out_t *o, const char *fmt, ...)
{
    if (!o->md) return;
    char small[2048], *buf = small;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) drift_die("a Markdown text that cannot be formatted");
    if ((size_t)n >= sizeof small) {
        if (!(buf = malloc((size_t)n + 1))) drift_die_oom((double)n + 1, "a Markdown text");
        va_start(ap, fmt);
        vsnprintf(buf, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    fputs(buf, o->md);
    if (buf != small) free(buf);
}

void drift_out_summary(drift_out_t *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) drift_die("a summary text that cannot be formatted");
    char *s = realloc(o->summary, o->summary_len + (size_t)n + 1);
    if (!s) drift_die_oom((double)(o->summary_len + (size_t)n + 1), "the summary text");
    va_start(ap, fmt);
    vsnprintf(s + o->summary_len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    o->summary = s, o->summary_len += (size_t)n;
}

const char *drift_list_sep(int i, int n) { return i == 0 ? "" : i + 1 == n ? " and " : ", "; }

void drift_md_end(drift_out_t *o, int t)
{
    if (o->md && o->md_started[t]) fputc('\n', o->md);
}

static void print_shown(const drift_out_t *o, int t)
{
    const drift_table_spec_t *s = &o->tables[t];
    const drift_textbuf_t *b = &o->shown[t];
    size_t w[64] = {0};
    int nc = s->ncols < 64 ? s->ncols : 64;
    for (int c = 0; c < nc; c++) w[c] = strlen(label(&s->cols[c]));
    const char *p = b->text;
    for (size_t r = 0; r < b->nrows; r++)
        for (int c = 0; c < s->ncols; c++, p += strlen(p) + 1)
            if (c < nc && strlen(p) > w[c]) w[c] = strlen(p);
    if (s->title) {
        putchar('\n');
        fputs_run(s->title, stdout, o->cli);
        putchar('\n');
    }
    putchar('\n');
    for (int c = 0; c < nc; c++)
        printf(numeric(&s->cols[c]) ? "%s%*s" : "%s%-*s", c ? "  " : "", (int)w[c], label(&s->cols[c]));
    putchar('\n');
    p = b->text;
    for (size_t r = 0; r < b->nrows; r++) {
        for (int c = 0; c < s->ncols; c++, p += strlen(p) + 1)
            if (c < nc) printf(numeric(&s->cols[c]) ? "%s%*s" : "%s%-*s", c ? "  " : "", (int)w[c], p);
        putchar('\n');
    }
}

void drift_out_commit(drift_out_t *o)
{
    for (int t = 0; t < o->ntables; t++) csv_header(o, t);
    drift_files_commit(o->files, o->ntables + 1);
    if (!o->cli->quiet) {
        printf("%s: %s\n", o->cli->spec->name, o->cli->spec->question);
        for (int t = 0; t < o->ntables; t++)
            if (o->tables[t].show & DRIFT_SHOW_STDOUT) print_shown(o, t);
        const char *summary = o->summary ? o->summary : o->cli->spec->summary;
        if (summary) {
            fputs("\nWhat you just saw: ", stdout);
            fputs_run(summary, stdout, o->cli);
            putchar('\n');
        }
    }
    for (int t = 0; t < o->ntables; t++) free(o->shown[t].text);
    memset(o->shown, 0, sizeof o->shown);
    free(o->summary);
    o->summary = NULL, o->summary_len = 0;
}

/* The name drift_die uses ("drift-calc round"), once the program has set one. */
static const char *program_name(void)
{
    if (strcmp(drift_program(), "drift")) return drift_program();
#ifdef __GLIBC__
    return program_invocation_short_name;
#else
    return "driftlab";
#endif
}

int drift_stdout_close_check(void)
{
    /* Once only: a main's own call and the exit handler after it give one line, and a closed
     * stdout is never looked at again. */
    static int result = -1;
    if (result >= 0) return result;
    /* As gnulib's close_stdout: an error on a stream that held data, or a failed close of a
     * stdout that was open (a closed one, >&-, with nothing written is no error). */
    int had_error = ferror(stdout) != 0;
    int pending = fflush(stdout) != 0;
    int e = errno;
    if (!had_error && !pending) {
        if (fclose(stdout) == 0 || errno == EBADF) return result = 0;
        e = errno;
    }
    fprintf(stderr, "%s: cannot write to stdout (%s)\n", program_name(),
        had_error && !pending ? "write error" : strerror(e));
    return result = 2;
}

static void stdout_at_exit(void)
{
    if (drift_stdout_close_check() != 0) _exit(2);
}

void drift_stdout_check_at_exit(void)
{
    static int registered;
    if (!registered) atexit(stdout_at_exit), registered = 1;
}
