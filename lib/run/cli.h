/* cli.h — the common command line of every experiment and tool, strict parsing, one-line
 * errors with exit status 2, profiles and the progress bar.
 *
 * Common options (docs/experiments.md): --seed N, --profile quick|default|full, --out DIR,
 * --formats LIST, --orders LIST, --backend auto|cpu|cuda, --threads N, --quiet, --help,
 * --version. An experiment adds its own through drift_cli_opt_t. Every bad value gives
 *   <program>: --option: <what is wrong> (accepted: <what is>)
 * on stderr and exit status 2, before any output file is opened. */
#ifndef DRIFT_CLI_H
#define DRIFT_CLI_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <stdnoreturn.h>

#include "drift.h"
#include "format.h"
#include "order.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { DRIFT_PROFILE_QUICK = 0, DRIFT_PROFILE_DEFAULT, DRIFT_PROFILE_FULL } drift_profile_t;
typedef enum { DRIFT_BACKEND_AUTO = 0, DRIFT_BACKEND_CPU, DRIFT_BACKEND_CUDA } drift_backend_t;

typedef enum {
    DRIFT_OPT_INT,        /* long, dest: long*           (value >= min) */
    DRIFT_OPT_INTLIST,    /* dest: drift_intlist_t*      (each >= min)  */
    DRIFT_OPT_DOUBLE,     /* dest: double*               (finite)       */
    DRIFT_OPT_DOUBLELIST, /* dest: drift_dbllist_t*      (finite)       */
    DRIFT_OPT_STRING,     /* dest: const char**                         */
    DRIFT_OPT_FLAG,       /* dest: int*, set to 1                       */
    DRIFT_OPT_LIST        /* dest: const char**, a comma list checked like every list (no empty
                           * or repeated item, at most DRIFT_LIST_MAX); the program reads the items */
} drift_opt_type_t;

/* The most items of any list option: refused beyond it with the limit named, never cut. */
#define DRIFT_LIST_MAX 64
typedef struct {
    long v[DRIFT_LIST_MAX];
    int n;
} drift_intlist_t;
typedef struct {
    double v[DRIFT_LIST_MAX];
    int n;
} drift_dbllist_t;

typedef struct {
    const char *name; /* without dashes: "K" is --K */
    drift_opt_type_t type;
    void *dest;          /* holds the default on entry */
    const char *metavar; /* "N" or "N,N,..." */
    const char *help;    /* one line; the default is appended from profile[] when set */
    long min;            /* smallest accepted integer */
    long max;            /* largest accepted integer (0: no limit) */
    /* Profiles as data: the option's value under --profile quick, default, full, written as
     * on the command line (e.g. {"256", "1024", "4096"}); used when the option is not given,
     * and printed by --help. NULL entries: the value in dest stays. */
    const char *profile[3];
} drift_cli_opt_t;

typedef struct {
    const char *name;            /* program name, e.g. "formats" */
    const char *question;        /* one line: what the experiment answers */
    const char *default_formats; /* e.g. "fp32,tf32,fp16,bf16"; NULL: the experiment takes no formats
                                  * (--formats is refused, "--formats: <name> <no_orders>", and
                                  * cli.nformats is 0) */
    const char *default_orders;  /* e.g. "seq,pairwise"; NULL: takes no orders (as no_orders) */
    const drift_cli_opt_t *opts; /* experiment-specific options (DRIFT_CLI_OPTS below sets both) */
    int nopts;
    /* Refusals drift_cli_parse makes after every option is read, in this order, so that an
     * experiment never re-implements them: */
    const char *no_orders; /* non-NULL: --orders is refused, "--orders: <name> <no_orders>"; the text
                            * says why, and for an experiment without formats names them too
                            * ("takes no formats or orders (...)") */
    const char *cpu_only;  /* non-NULL: --backend cuda is refused, "<name> runs on the <cpu_only>"; NULL: the
                            * experiment computes through the dispatcher (dispatch.h), and --backend
                            * cuda|auto sends that work to the GPU, checked against the CPU twins */
    /* "What you just saw": the paragraph printed after the stdout tables (drift_out_commit),
     * and with the question by --describe, the source of README's and docs' text. */
    const char *summary;
} drift_cli_spec_t;

/* .opts and .nopts of a spec from an array of options, counted by the compiler:
 *     const drift_cli_spec_t spec = {.name = "x", DRIFT_CLI_OPTS(opts), ...}; */
#define DRIFT_CLI_OPTS(array) .opts = (array), .nopts = DRIFT_COUNTOF(array)

#define DRIFT_MAX_ORDERS 32

typedef struct {
    const drift_cli_spec_t *spec;
    int argc;
    char **argv;
    uint64_t seed;           /* default 1 */
    drift_profile_t profile; /* default DEFAULT */
    const char *out_dir;     /* default "data" */
    drift_format_t formats[DRIFT_NFORMATS];
    int nformats;
    drift_order_t orders[DRIFT_MAX_ORDERS];
    int norders;
    drift_backend_t backend; /* default AUTO; after parsing CPU or CUDA (what runs) */
    int threads;             /* 0: OpenMP's default */
    int quiet;
} drift_cli_t;

/* Parses argv; on --help/--version prints and exits 0; on any error exits 2. Then makes the
 * spec's refusals (no_orders, cpu_only) and refuses an --out that exists but is not a
 * directory. Sets the OpenMP thread count when --threads is given. */
void drift_cli_parse(drift_cli_t *cli, const drift_cli_spec_t *spec, int argc, char **argv);

/* The exit status of an experiment that was skipped because this machine cannot run it (the
 * automake "skipped" code): nothing was measured and no file was written. ./lab report says
 * so in one line and goes on; ./lab run exits with it. */
#define DRIFT_EXIT_SKIPPED 77

/* For an experiment that measures a GPU (registry column 3 "gpu"): unless the parse chose
 * the CUDA backend, says "<name>: skipped: needs a CUDA device (<why>)" on stderr and exits
 * DRIFT_EXIT_SKIPPED, before any file is opened. Call it after the experiment's own option
 * checks, so that a bad option is still exit 2 on every machine. */
void drift_require_gpu(const drift_cli_t *cli);

/* The largest --threads accepted (cli.c says why). */
int drift_threads_max(void);
/* Dies (exit 2, one line naming OMP_NUM_THREADS) unless the variable is unset or holds what
 * --threads accepts (1..drift_threads_max(), or a comma list of such counts). drift_cli_parse
 * and drift_args_parse call it first; a tool with its own parser calls it in main. */
void drift_env_threads_check(void);
/* The largest value of a list (0 when empty), for memory estimates. */
long drift_intlist_max(const drift_intlist_t *l);

/* Dies (exit 2, one line) unless --out can be used: an existing directory in which an entry
 * can be created (tried, then removed), or a missing one whose nearest existing ancestor is a
 * writable directory (nothing is created here). drift_cli_parse calls it, then creates a
 * missing --out and locks it (drift_out_lock_cli). */
void drift_out_check(const char *dir);

/* The memory check every experiment makes before its first computation: dies with
 *   <program>: <options>: this run needs about X GiB of memory, this machine gives a process Y GiB
 *   (accepted: smaller sizes)
 * when bytes (the experiment's estimate of its largest allocations) exceeds the smallest of
 * physical memory, ulimit -v and the cgroup's memory.max. options names what to make smaller,
 * e.g. "--K, --V". One line in each experiment, after its own checks:
 *     drift_require_memory(&cli, 4.0 * V * drift_intlist_max(&Ks), "--K, --V"); */
void drift_require_memory(const drift_cli_t *cli, double bytes, const char *options);

/* The default real model, models/SmolLM2-135M-Instruct.Q4_1.gguf (in the current directory, else
 * in the source tree's models/), or NULL when it has not been fetched (./lab models get
 * smollm2-135m). */
const char *drift_real_checkpoint(void);
/* The shipped checkpoint, for programs whose --checkpoint was not given: "models/stories260K.bin"
 * when the caller stands in the repository (the path reads as the user typed it), else the
 * source tree's copy. */
const char *drift_default_checkpoint(void);

/* Dies (exit 2, one line) unless every format is an LM head input (drift_lmhead_input_ok). */
void drift_lmhead_require_inputs(const drift_format_t *formats, int n);

/* "<program>: <message>" on stderr, exit 2. The program name is the last drift_set_program's
 * (or "drift" before any). */
noreturn void drift_die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Names the program for drift_die and every other message (drift_cli_parse calls it; a tool
 * calls it first in main) and registers drift_stdout_check_at_exit: from then on a failed write
 * to stdout ends the program with status 2. */
void drift_set_program(const char *name);
/* drift_die with drift_why_oom's text: "<program>: out of memory allocating <what> (<size>)". */
noreturn void drift_die_oom(double bytes, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* For the option parser's fuzz target only: called by drift_die after the message, instead of
 * returning to exit(2) it may longjmp back to the target. NULL: exit(2). */
void drift_set_die_hook(void (*hook)(void));

/* ---- the one option syntax (cli_args.c), shared by experiments and tools -----------------
 * An option is --name VALUE or --name=VALUE; a flag is --name alone (--name=X is refused); -h is
 * --help; every program takes --help and --version. A word that is not an accepted name is
 * refused with the nearest accepted one suggested ("did you mean '--K'?"). */

/* The name of the running program as drift_die prints it ("formats", "drift-calc argmax"). */
const char *drift_program(void);
/* Optimal-string-alignment distance (insert, delete, substitute, swap two neighbours: 1 each),
 * letters compared without case; words of 64 characters or more get their longer length. */
int drift_edit_distance(const char *a, const char *b);
/* The entry of names[0..n) nearest to word when it is close enough to be its typo (at most
 * max(1, strlen(word) / 3) edits, and fewer than the name has characters); NULL otherwise.
 * Ties go to the first. NULL entries are skipped. */
const char *drift_suggest(const char *word, const char *const *names, int n);
/* "did you mean 'PREFIXNAME'? " (with a trailing blank, for the start of an "(... accepted: ...)"
 * clause), or "" when nothing is near. */
void drift_suggest_text(char *buf, size_t size, const char *word, const char *const *names, int n, const char *prefix);
/* Splits "--name" or "--name=value": the name without dashes into name (cut to size - 1), *value
 * the text after the first '=' (possibly "") or NULL. DRIFT_EINVAL when arg does not start with
 * "--" and a name. */
DRIFT_MUST_CHECK int drift_opt_split(char *name, size_t size, const char **value, const char *arg);
/* When *value is NULL (no "=value"), takes argv[*i + 1] as the value and advances *i; dies
 * "--name: needs a value (accepted: --name METAVAR or --name=METAVAR)" when there is no next
 * word or it starts with "--". Returns 0. */
int drift_opt_value(const char **value, int *i, int argc, char **argv, const char *name, const char *metavar);
/* value's index in names[0..n), or dies "OPT: unknown value 'V' (did you mean ...? accepted: a, b)". */
int drift_name_pick(const char *opt, const char *value, const char *const *names, int n);
/* chosen[i] = 1 for each names[i] in the comma list (every i for "all"), 0 for the rest: a
 * selection from a table of named cases that the caller runs in the table's order. Dies as
 * drift_name_pick on a name that is not in names. */
void drift_name_set(int *chosen, const char *opt, const char *list, const char *const *names, int n);

/* A tool subcommand's option (drift-calc round, ...): value non-NULL for an option that takes a
 * value (it receives the text), NULL for a flag (then *flag = flag_value). */
typedef struct {
    const char *name;   /* without dashes */
    const char **value; /* receives the value; NULL: a flag */
    int *flag;          /* a flag's destination */
    int flag_value;
    const char *metavar; /* "F", "SPEC": named when the value is missing */
} drift_arg_opt_t;

/* Parses argv[1..argc) with the one syntax: options into opts, every other word into pos[] in
 * order (at most maxpos). "--" ends the options; "-", a negative number and -inf/-nan are
 * words, not options. --help (or -h): usage(stdout) and exit 0; --version: "<program> (driftlab
 * VERSION)" and exit 0. Refused with one line and exit 2: an unknown option (the nearest named,
 * every accepted one listed), a value given to a flag, a missing value, a word beyond maxpos,
 * an option given twice, two flags that set one destination to different values (--fma --nofma).
 * Returns the number of words. */
int drift_args_parse(
    const drift_arg_opt_t *opts, int nopts, const char **pos, int maxpos, int argc, char **argv, void (*usage)(FILE *));

/* The format named by value (drift_format_parse: canonical names and aliases, any case), or
 * drift_die_format(opt, value). */
drift_format_t drift_format_arg(const char *opt, const char *value);
/* "OPT: unknown format 'V' (did you mean 'bf16'? accepted: fp64, ..., in any case, or PyTorch's
 * names ...)", exit 2. */
noreturn void drift_die_format(const char *opt, const char *value);

/* Every order spec drift_order_parse_card accepts, as one "accepted: ..." text (tc: models
 * listed from the enum, so a new one is never missing). */
const char *drift_order_grammar(void);
/* What tc:NAME takes, as one "accepted: ..." text: every tensor-core model (drift_tc_arch_name)
 * and every card of the one card table (cards.h), so a new one is never missing. */
const char *drift_tc_names(void);
/* For a tc:NAME that names neither a model nor a card: "OPT: unknown tensor-core model or card
 * 'NAME'[ in 'WITHIN'] (did you mean 'rtx4090'? accepted: <drift_tc_names>)", exit 2. within:
 * the whole value typed (a recipe), or NULL. */
noreturn void drift_die_tc(const char *opt, const char *name, const char *within);

/* Strict number parsing shared with tools: the whole string, no blank, no '+', a '-' only
 * first; no overflow; 0 or DRIFT_EINVAL. */
DRIFT_MUST_CHECK int drift_parse_long(long *out, const char *s);
/* decimal.h's syntax (decimal, hex, inf, nan), the exact value rounded once to double;
 * overflow to inf of a finite text is an error. */
DRIFT_MUST_CHECK int drift_parse_double(double *out, const char *s);

/* A prompt's token ids, "1,2,2,3": each as drift_parse_long reads it, in 0..hi, repeats allowed
 * (a prompt may repeat a token), no empty item; at most max. Dies "OPT: ..." (exit 2, one line)
 * otherwise. Returns the count (>= 1). */
int drift_parse_ids(const char *opt, const char *list, int *ids, int max, long hi);

const char *drift_profile_name(drift_profile_t p);

/* Creates dir with its parents when it is missing (dies, one line, when it cannot), so that
 * its lock can be taken before the run computes; what this call made is removed at exit for as
 * long as it is empty (the lock file first), so a run refused later leaves no directory. */
void drift_out_create(const char *dir);
/* "<out_dir>/<name><suffix>" into buf; dies if it does not fit. Creates out_dir. */
void drift_out_path(char *buf, size_t size, const drift_cli_t *cli, const char *suffix);

/* The command line that reproduces this run, for reports: "./lab run <name>" and the program's
 * own options, without --out, --threads and --quiet (they do not change the results), with
 * --seed and --profile added when they were left to their defaults. Truncated to size. */
void drift_cli_reproduce(char *buf, size_t size, const drift_cli_t *cli);

/* Progress on stderr unless --quiet: a bar on a terminal; otherwise (a log, ./lab report) a
 * timestamped line with the elapsed time and an estimate of what is left, at most every 10 s
 * and only for a phase longer than that. A new total starts a new phase, which the lines call
 * "stage N" (its place among the run's phases) unless drift_progress_phase named it just
 * before; within a phase it never goes back: a smaller done than one reported before (threads
 * finishing out of order) shows the larger. */
void drift_progress(const drift_cli_t *cli, size_t done, size_t total);
/* Starts a named phase ("planted heads", "seed 2"): its own count from 0 and clock, its name on
 * every line ("argmax_flip, seed 2: 48% ..."). NULL or "": unnamed. */
void drift_progress_phase(const drift_cli_t *cli, const char *name);

#ifdef __cplusplus
}
#endif

#endif
