/* output.h — the declared output of an experiment: each table is declared once (column
 * names, value kinds, print styles) and the kit writes from that one declaration
 *   - the CSV file "<out>/<name><suffix>": `# key: value` metadata (the standard block, then
 *     the experiment's own lines), one header row, one line per drift_row;
 *   - the table in the Markdown fragment "<out>/<name>.md" (title, header, alignment row);
 *   - the same table on stdout, aligned, unless --quiet.
 * Every file of a run is opened together and committed together (table.h: temporary names,
 * renamed on success), so a failed run leaves none behind.
 *
 * A column's print style:
 *   DRIFT_COL_NUM    a double, printf format `fmt` (NULL: "%.17g", every bit in decimal);
 *                    nan/inf spelled the same on every libc
 *   DRIFT_COL_HEX    a double in C99 hex (%a): the bits, for tools that compare them (a NaN
 *                    as libc spells it, -nan included: the sign is a bit too)
 *   DRIFT_COL_INT    a long (fmt NULL: "%ld")
 *   DRIFT_COL_TEXT   a string, written as is (it must hold no comma, quote or newline)
 *   DRIFT_COL_QUOTED a string in double quotes (a kernel spec such as tiled:128,64,32)
 *   DRIFT_COL_KEY    a string with its commas written as x (tiled:128x64x32): a key that
 *                    tools splitting on every comma (gnuplot) can match
 *   DRIFT_COL_CELL   a string the program formatted from numbers ("1.2e-03 [0.50]", "3 / 45.0%"):
 *                    written as is, right-aligned like a number (Markdown `---:`)
 * A row is a list of cells, DRIFT_NUM(x), DRIFT_INT(n), DRIFT_TXT(s), checked against the
 * declaration: a row of the wrong length or kind is a bug of the program, which dies.
 *
 *     static const drift_col_t COLS[] = {DRIFT_C_TEXT("format"), DRIFT_C_INT("K"),
 *                                        DRIFT_C_NUM("max_abs_diff", "%.9g")};
 *     static const drift_table_spec_t TABLES[] = {{"_summary.csv", NULL, 0, COLS, 3}};
 *     drift_out_t out;
 *     drift_out_open(&out, &cli, TABLES, 1, 1);          // + the .md fragment
 *     drift_out_meta(&out, 0, "table", "per (format, K)");
 *     drift_row(&out, 0, DRIFT_TXT("bf16"), DRIFT_INT(256), DRIFT_NUM(0.5));
 *     drift_out_commit(&out);                             // files renamed, stdout printed
 */
#ifndef DRIFT_OUTPUT_H
#define DRIFT_OUTPUT_H

#include <stdio.h>

#include "drift.h"
#include "cli.h"
#include "table.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    DRIFT_COL_NUM = 0,
    DRIFT_COL_HEX,
    DRIFT_COL_INT,
    DRIFT_COL_TEXT,
    DRIFT_COL_QUOTED,
    DRIFT_COL_KEY,
    DRIFT_COL_CELL
} drift_col_kind_t;

typedef struct {
    const char *name; /* CSV header name (and the Markdown/stdout one unless label) */
    drift_col_kind_t kind;
    const char *fmt;   /* NUM/INT: printf format of one value; NULL: "%.17g" / "%ld" */
    const char *label; /* Markdown and stdout header; NULL: name */
} drift_col_t;

/* Column declarations, one per print style. */
#define DRIFT_C_TEXT(name)                 \
    {                                      \
        (name), DRIFT_COL_TEXT, NULL, NULL \
    }
#define DRIFT_C_QUOTED(name)                 \
    {                                        \
        (name), DRIFT_COL_QUOTED, NULL, NULL \
    }
#define DRIFT_C_KEY(name)                 \
    {                                     \
        (name), DRIFT_COL_KEY, NULL, NULL \
    }
#define DRIFT_C_INT(name)                 \
    {                                     \
        (name), DRIFT_COL_INT, NULL, NULL \
    }
#define DRIFT_C_NUM(name, fmt)             \
    {                                      \
        (name), DRIFT_COL_NUM, (fmt), NULL \
    }
#define DRIFT_C_HEX(name)                 \
    {                                     \
        (name), DRIFT_COL_HEX, NULL, NULL \
    }
#define DRIFT_C_CELL(name)                 \
    {                                      \
        (name), DRIFT_COL_CELL, NULL, NULL \
    }

/* Where a table's rows go besides its CSV file. */
enum { DRIFT_SHOW_MD = 1, DRIFT_SHOW_STDOUT = 2 };

typedef struct {
    const char *suffix; /* CSV file "<name><suffix>"; NULL: no CSV (a Markdown/stdout table) */
    const char *title;  /* Markdown and stdout title (bold line); NULL: none */
    int show;           /* DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT */
    const drift_col_t *cols;
    int ncols;
} drift_table_spec_t;

typedef struct {
    enum { DRIFT_CELL_NUM, DRIFT_CELL_INT, DRIFT_CELL_TXT } kind;
    double d;
    long i;
    const char *s;
} drift_cell_t;

#define DRIFT_NUM(x) ((drift_cell_t){DRIFT_CELL_NUM, (double)(x), 0, NULL})
#define DRIFT_INT(x) ((drift_cell_t){DRIFT_CELL_INT, 0, (long)(x), NULL})
#define DRIFT_TXT(x) ((drift_cell_t){DRIFT_CELL_TXT, 0, 0, (x)})

#define DRIFT_OUT_MAX 24

typedef struct {
    char *text; /* rendered cells, each NUL-terminated, for the aligned stdout table */
    size_t len, cap;
    size_t nrows;
} drift_textbuf_t;

typedef struct {
    const drift_cli_t *cli;
    const drift_table_spec_t *tables;
    int ntables;
    int has_md;
    drift_file_t files[DRIFT_OUT_MAX + 1]; /* files[t] for table t with a CSV; files[ntables]: the .md */
    int header_done[DRIFT_OUT_MAX];        /* CSV header row written */
    int md_started[DRIFT_OUT_MAX];         /* Markdown header written */
    drift_textbuf_t shown[DRIFT_OUT_MAX];  /* stdout rows */
    FILE *md;                              /* the Markdown fragment (prose goes here too); NULL without */
    char *summary;                         /* this run's "What you just saw" (drift_out_summary); NULL: spec.summary */
    size_t summary_len;
} drift_out_t;

/* Opens every CSV of tables[0..n) and, when with_md, "<name>.md"; writes each CSV's standard
 * metadata block (drift_table_std_meta). Dies (exit 2, one line) when a file cannot be opened.
 * Words follow the run on stdout: experiments write paths as "data/..." and plot commands as
 * "./lab plot NAME" (the report's run); with --out DIR elsewhere, the stdout tables' titles and
 * summary say "DIR/..." and "./lab plot NAME --data DIR". The fragment is data and keeps the
 * report's words (the same bytes whatever --out). */
void drift_out_open(drift_out_t *o, const drift_cli_t *cli, const drift_table_spec_t *tables, int n, int with_md);
/* One `# key: value` line in table t's CSV, before its header row (dies after it). */
void drift_out_meta(drift_out_t *o, int t, const char *key, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* A `# ` comment line (its text escaped as a metadata value is) in table t's CSV at the current position (after the rows too: notes
 * that belong with the data, e.g. the planted cases of a row). */
void drift_out_note(drift_out_t *o, int t, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* One row of table t: to its CSV, to the Markdown fragment when shown there (the table's
 * title and header come before its first row), and kept for stdout when shown there. */
#define drift_row(o, t, ...)                                       \
    drift_row_cells((o), (t), (const drift_cell_t[]){__VA_ARGS__}, \
        (int)(sizeof((const drift_cell_t[]){__VA_ARGS__}) / sizeof(drift_cell_t)))
void drift_row_cells(drift_out_t *o, int t, const drift_cell_t *cells, int n);
/* One row of table t whose columns all hold text (TEXT or CELL), its cells formatted by one printf
 * format and separated by '|', blanks around each cell dropped: a Markdown row as printf writes it,
 *     drift_row_fmt(&out, 0, "%s | %.3g [%.3g, %.3g] | %ld / %zu", name, x, lo, hi, k, n);
 * Dies when the count or kind of the cells is not the table's. */
void drift_row_fmt(drift_out_t *o, int t, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The fragment's opening: "**Question.** <question> <detail>" and "Reproduce: `<command>`
 * (data/<name>*.csv)." (drift_cli_reproduce), each a paragraph. detail may be NULL. */
void drift_md_intro(drift_out_t *o, const char *detail_fmt, ...) __attribute__((format(printf, 2, 3)));
/* The two halves of drift_md_intro, for a fragment that words them itself:
 * "**Question.** <question>[ <detail>]" as a paragraph (detail may be NULL), and
 * "Reproduce: `<command>` (<files>)." as a paragraph, files e.g. "data/x*.csv; 3 trials". */
void drift_md_question(drift_out_t *o, const char *detail_fmt, ...) __attribute__((format(printf, 2, 3)));
void drift_md_reproduce(drift_out_t *o, const char *files_fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prose with numbers, appended to the fragment as written (no newline added): a caption, a
 * takeaway bullet, or a sentence built piece by piece. Nothing without a fragment. */
void drift_md_text(drift_out_t *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends to this run's "What you just saw" (no newline added), for an experiment whose
 * findings depend on its options: once any is given, drift_out_commit prints it in place of
 * spec.summary, which stays the text --describe gives (true of every run). */
void drift_out_summary(drift_out_t *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The separator before item i of n in an English list: "" (first), ", " or " and " (last). */
const char *drift_list_sep(int i, int n);
/* Ends table t in the Markdown fragment (a blank line), so prose may follow. */
void drift_md_end(drift_out_t *o, int t);
/* Writes header rows of tables without rows, commits every file (dies on a write error), then
 * unless --quiet prints "<name>: <question>", each table shown on stdout, aligned, and the
 * summary (the run's from drift_out_summary, else spec.summary). Frees
 * what the kit held. */
void drift_out_commit(drift_out_t *o);

/* Every write checked, the last flush of stdout included (`prog >/dev/full` exited 0):
 * flushes and closes stdout; 0, or 2 after one line "PROG: cannot write to stdout (...)" on
 * stderr. A main calls it last, `return drift_stdout_close_check() ? 2 : rc;`, or registers it
 * with drift_stdout_check_at_exit (an atexit handler that ends the program with status 2 on a
 * failure; drift_out_open registers it for every experiment). */
DRIFT_MUST_CHECK int drift_stdout_close_check(void);
void drift_stdout_check_at_exit(void);

/* One cell as the column prints it (shared with tools that print a single value). */
void drift_cell_format(char *buf, size_t size, const drift_col_t *col, const drift_cell_t *cell);

#ifdef __cplusplus
}
#endif

#endif
