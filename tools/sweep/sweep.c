/* drift-sweep — run a sweep of one experiment over a grid of options, as one process, as local
 * parallel processes, as MPI ranks or as a Slurm job array, and merge the shares into exactly the
 * data one process would have written (see sweep.h for the directory and the run order).
 *
 *   drift-sweep formats --grid 'seed=1..4 formats=fp16,bf16' --jobs 2 -- --profile quick
 *   drift-sweep formats --grid ... --shard 1/3 --out DIR       one share (Slurm array task)
 *   mpirun -n 4 drift-sweep formats --grid ... --out DIR       rank k runs shares k, k+4, ...;
 *                                                             rank 0 merges when all succeeded
 *   drift-sweep --merge DIR                                    verify every share, merge
 *
 * MPI is compiled in when CMake finds it (DRIFT_HAVE_MPI) and used only when the program was
 * started by an MPI launcher (its environment says so), so the same binary runs anywhere. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef DRIFT_HAVE_MPI
#include <mpi.h>
#endif

#include "cli.h"
#include "digest.h"
#include "drift.h"
#include "envinfo.h"
#include "escape.h"
#include "manifest.h"
#include "output.h"
#include "sweep.h"
#include "table.h"

int sweep_quiet = 0;
/* The sweep directory, resolved: its runs' directories "DIR/runs/NNNNNN.part-HOST-PID" must be
 * an --out the experiments take (at most 800 characters), and no path built from it may be cut
 * (a cut path is a real, shorter one: removing "DIR/runs/000000" cut to "DIR" removed the sweep). */
#define SWEEP_DIR_MAX 640
#define SWEEP_MAX_JOBS 4096 /* local processes at once: beyond this the slot table is the problem */
static int rank_silent = 0; /* an MPI rank other than 0: errors are said once, by rank 0 */

/* One line, whatever the words it quotes hold: control bytes are written as \xHH (escape.h). */
static void vsay(const char *fmt, va_list ap)
{
    char buf[8192];
    vsnprintf(buf, sizeof buf, fmt, ap);
    fprintf(stderr, "drift-sweep: ");
    drift_escape_fputs(stderr, buf, NULL);
    fprintf(stderr, "\n");
}

noreturn void sweep_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (!rank_silent) vsay(fmt, ap);
    va_end(ap);
    exit(2);
}

void sweep_say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (!sweep_quiet) vsay(fmt, ap);
    va_end(ap);
}

static void usage(FILE *fp)
{
    fprintf(
        fp, "usage: drift-sweep EXP (--grid SPEC | --file SWEEPFILE) [options] [-- experiment options]\n"
            "       drift-sweep --merge DIR [--out MERGED]\n"
            "Runs experiment EXP once per point of a grid (the cartesian product of the axes, the last axis\n"
            "fastest), each run with its own options and directory, and merges the runs into one set of CSVs.\n\n"
            "  --grid SPEC      axes 'name=v1,v2,... name=A..B' (e.g. 'seed=1..64 K=1024,4096 formats=bf16,fp16');\n"
            "                   each run gets --name value\n"
            "  --file FILE      a sweep file: lines 'experiment: X', 'grid: SPEC', 'options: WORDS', 'shares: N'\n"
            "  --out DIR        the sweep directory (default sweeps/EXP-YYYYMMDD-HHMMSS, a new one each time;\n"
            "                   sweeps/EXP with --shard or under mpirun); with --merge, where the merge goes\n"
            "                   (default DIR/merged)\n"
            "  --shares N       deal the runs into N shares, run r in share r mod N (default: one share per run)\n"
            "  --shard I/N      run share I of N only (0 <= I < N), then stop: a Slurm array task\n"
            "  --jobs J         run J shares at once as local processes (default 1)\n"
            "  --gpus LIST      one GPU per worker: worker w (job slot, or MPI local rank) runs with\n"
            "                   CUDA_VISIBLE_DEVICES=LIST[w mod length] (--gpus 0,1,2,3), so its GPU is device 0\n"
            "  --bin DIR        where the experiment programs are (default: beside drift-sweep)\n"
            "  --no-merge       run the shares but do not merge\n"
            "  --slurm          write DIR/slurm/shares.sbatch (a job array), merge.sbatch and submit.sh; run nothing\n"
            "  --sbatch OPT     add '#SBATCH OPT' to the Slurm scripts (repeatable: --sbatch --time=01:00:00)\n"
            "  --quiet          no progress lines\n"
            "  --help\n"
            "Any other --option (with its value unless the next word is an option) and every word after '--'\n"
            "is passed to every run. A rerun runs only the shares whose manifest is missing or not this\n"
            "sweep's; --merge refuses (exit 2) while a share is missing, damaged, foreign or from another commit.\n"
            "Under mpirun each rank runs shares rank, rank+P, ... and rank 0 merges.\n"
#ifdef DRIFT_HAVE_MPI
            "engines: local, slurm, mpi\n"
#else
            "engines: local, slurm (mpi not built: install libopenmpi-dev and rebuild)\n"
#endif
    );
}

/* The command line as one shell-readable line, for the manifest. */
static void argv_line(char *buf, size_t size, int argc, char **argv)
{
    size_t len = 0;
    for (int i = 0; i < argc && len < size; i++) {
        const char *a = argv[i];
        int plain = *a != 0;
        for (const char *p = a; *p; p++)
            if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%", *p)) plain = 0;
        len += (size_t)snprintf(buf + len, size - len, i ? " " : "");
        if (len >= size) break;
        if (plain) {
            len += (size_t)snprintf(buf + len, size - len, "%s", a);
            continue;
        }
        len += (size_t)snprintf(buf + len, size - len, "'");
        for (const char *p = a; *p && len < size; p++)
            len += (size_t)snprintf(buf + len, size - len, *p == '\'' ? "'\\''" : "%c", *p);
        if (len < size) len += (size_t)snprintf(buf + len, size - len, "'");
    }
    if (len >= size) buf[size - 1] = 0;
}

static const char *env_first(const char *const *names)
{
    for (int i = 0; names[i]; i++) {
        const char *v = getenv(names[i]);
        if (v && *v) return v;
    }
    return NULL;
}

/* Started by an MPI launcher? Open MPI, MPICH/Hydra and PMIx launchers each say so. */
static const char *const MPI_SIZE_VARS[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", NULL};
static const char *const MPI_RANK_VARS[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", NULL};
static const char *const MPI_LRANK_VARS[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", NULL};
static const char *const MPI_LSIZE_VARS[] = {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", NULL};

static long env_long(const char *const *names, long dflt)
{
    const char *v = env_first(names);
    long n;
    return v && drift_parse_long(&n, v) == 0 ? n : dflt;
}

/* Worker w's GPU from "0,1,2": CUDA_VISIBLE_DEVICES for its runs (nothing when no list). One
 * process per GPU needs no option in the experiments: each sees its own GPU as device 0. */
static void use_gpu_of(const char *list, long w)
{
    if (!list) return;
    int n = 1;
    for (const char *p = list; *p; p++) n += *p == ',';
    long k = w % n;
    const char *p = list;
    while (k-- > 0) p = strchr(p, ',') + 1;
    char gpu[256];
    snprintf(gpu, sizeof gpu, "%.*s", (int)strcspn(p, ","), p);
    setenv("CUDA_VISIBLE_DEVICES", gpu, 1);
}

/* sweep.txt: written once (temporary + rename, so concurrent shares agree), compared after. */
static void ensure_definition(const char *dir, const char *def)
{
    char path[1000];
    snprintf(path, sizeof path, "%s/sweep.txt", dir);
    struct stat st;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
        sweep_die("--out: '%s' is not a regular file (a sweep directory's definition is one)", path);
    FILE *fp = drift_fopen_regular(path);
    if (fp) {
        sweep_text_t have = {0};
        char chunk[65536];
        size_t n;
        while ((n = fread(chunk, 1, sizeof chunk - 1, fp)) > 0) {
            chunk[n] = 0;
            sweep_text_add(&have, "%s", chunk);
        }
        fclose(fp);
        const char *buf = have.p ? have.p : "";
        if (strcmp(buf, def)) {
            const char *a = buf, *b = def;
            while (*a && *a == *b) a++, b++;
            while (a > buf && a[-1] != '\n') a--, b--;
            sweep_die("--out %s holds another sweep: its sweep.txt says '%.*s' where this one says '%.*s' "
                      "(choose another --out, or remove that directory)",
                dir, (int)strcspn(a, "\n"), a, (int)strcspn(b, "\n"), b);
        }
        free(have.p);
        return;
    }
    drift_file_t f;
    if (drift_file_open(&f, path) != 0 || fputs(def, f.fp) < 0 || drift_file_commit(&f) != 0) {
        drift_file_abort(&f);
        sweep_die("--out: cannot write '%s': %s", path, strerror(errno));
    }
}

static double mono_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* One line per share finished: how many of this process's shares are done and, until the last,
 * a linear estimate of the time left. The share is named as its manifest is
 * (share-I-of-N, I from 0): "share 15/16 done" was the last line and read as 15 of 16. */
static void say_done(long share, long nshares, long done, long ntodo, double t0)
{
    double el = mono_s() - t0;
    if (done < ntodo)
        sweep_say("%ld of %ld shares done (share-%ld-of-%ld), elapsed %.0f s, about %.0f s left", done, ntodo, share,
            nshares, el, el * (double)(ntodo - done) / (double)done);
    else
        sweep_say(
            "%ld of %ld shares done (share-%ld-of-%ld), elapsed %.0f s: all done", done, ntodo, share, nshares, el);
}

/* Runs the given shares, `jobs` at a time; returns the worst status (0, 1, 2). */
static int run_shares(
    const sweep_t *s, sweep_ctx_t *c, const long *todo, long ntodo, long jobs, const char *gpus, long worker_base)
{
    int worst = 0;
    long done = 0;
    const double t0 = mono_s();
    if (jobs <= 1) {
        use_gpu_of(gpus, worker_base);
        for (long i = 0; i < ntodo; i++) {
            int rc = sweep_run_share(s, c, todo[i]);
            if (rc == 0) say_done(todo[i], s->nshares, ++done, ntodo, t0);
            if (rc > worst) worst = rc;
            if (rc == 2) break; /* the options are refused: every other run would refuse them too */
        }
        return worst;
    }
    pid_t *slot = calloc((size_t)jobs, sizeof *slot);
    long *slot_share = calloc((size_t)jobs, sizeof *slot_share);
    if (!slot || !slot_share) sweep_die("out of memory for %ld job slots (--jobs: fewer)", jobs);
    long next = 0, running = 0;
    while (next < ntodo || running > 0) {
        while (running < jobs && next < ntodo && worst < 2) {
            long w = 0;
            while (slot[w]) w++;
            fflush(NULL);
            pid_t pid = fork();
            if (pid < 0) sweep_die("cannot fork: %s", strerror(errno));
            if (pid == 0) {
                use_gpu_of(gpus, w);
                _exit(sweep_run_share(s, c, todo[next]));
            }
            slot[w] = pid;
            slot_share[w] = todo[next++];
            running++;
        }
        int st;
        pid_t pid = wait(&st);
        if (pid < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (long w = 0; w < jobs; w++) {
            if (slot[w] != pid) continue;
            int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 1;
            if (WIFSIGNALED(st))
                fprintf(stderr, "drift-sweep: share %ld/%ld: its worker was killed by signal %d\n", slot_share[w],
                    s->nshares, WTERMSIG(st));
            else if (rc == 0)
                say_done(slot_share[w], s->nshares, ++done, ntodo, t0);
            if (rc > worst) worst = rc > 2 ? 1 : rc;
            slot[w] = 0;
            running--;
        }
        if (worst == 2) next = ntodo;
    }
    free(slot);
    free(slot_share);
    return worst;
}

typedef struct {
    sweep_t s;
    const char *out, *bindir, *merge_dir, *gpus;
    long shard, jobs;
    int no_merge, slurm;
    char **sbatch;
    int nsbatch;
} args_t;

static long need_long(int argc, char **argv, int *i, long min)
{
    if (*i + 1 >= argc) sweep_die("%s: missing value", argv[*i]);
    long v;
    if (drift_parse_long(&v, argv[*i + 1]) || v < min)
        sweep_die("%s: '%s' (accepted: an integer >= %ld)", argv[*i], argv[*i + 1], min);
    (*i)++;
    return v;
}

static const char *need_str(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc || !*argv[*i + 1]) sweep_die("%s: missing value", argv[*i]);
    return argv[++(*i)];
}

/* drift-sweep's own options: those with a value, then the flags. */
static const char *const OWN_VALUED[] = {
    "grid", "file", "out", "merge", "bin", "gpus", "jobs", "shares", "shard", "sbatch"};
static const char *const OWN_FLAGS[] = {"no-merge", "slurm", "quiet", "help", "version"};
#define NOWN_VALUED (int)(sizeof OWN_VALUED / sizeof OWN_VALUED[0])
#define NOWN_FLAGS (int)(sizeof OWN_FLAGS / sizeof OWN_FLAGS[0])

/* The one option syntax (cli.h) for drift-sweep's own options: "--out=DIR" is "--out DIR", a
 * flag takes no "=value", and a word near one of them ("--job 2") is refused with the name it
 * is near, instead of going to every run as the experiment's option. Words after "--" and the
 * experiment's options are left as they are. Returns a new argv (freed at exit). */
static char **own_syntax(int *argc_io, char **argv)
{
    int argc = *argc_io, n = 0;
    static char **out;
    out = sweep_xrealloc(NULL, (size_t)(2 * argc + 1) * sizeof *out);
    const char *names[NOWN_VALUED + NOWN_FLAGS];
    for (int k = 0; k < NOWN_VALUED; k++) names[k] = OWN_VALUED[k];
    for (int k = 0; k < NOWN_FLAGS; k++) names[NOWN_VALUED + k] = OWN_FLAGS[k];
    int rest = 0;
    for (int i = 0; i < argc; i++) {
        const char *o = argv[i], *value = NULL;
        char name[64];
        if (rest || i == 0 || strcmp(o, "--") == 0 || drift_opt_split(name, sizeof name, &value, o) != DRIFT_OK) {
            rest |= i > 0 && !strcmp(o, "--");
            out[n++] = argv[i];
            continue;
        }
        int valued = -1, flag = -1;
        for (int k = 0; k < NOWN_VALUED; k++)
            if (!strcmp(name, OWN_VALUED[k])) valued = k;
        for (int k = 0; k < NOWN_FLAGS; k++)
            if (!strcmp(name, OWN_FLAGS[k])) flag = k;
        if (flag >= 0 && value) sweep_die("--%s takes no value (found '%s')", name, o);
        if (valued < 0 && flag < 0) {
            const char *near = drift_suggest(name, names, NOWN_VALUED + NOWN_FLAGS);
            if (near)
                sweep_die("unknown option '--%s' (did you mean '--%s'? an option of the experiment goes after '--': "
                          "drift-sweep EXP --grid SPEC -- --%s ...)",
                    name, near, name);
        }
        if (valued >= 0 && value) {
            if (!*value) sweep_die("--%s: empty value (accepted: --%s VALUE or --%s=VALUE)", name, name, name);
            out[n++] = (char *)sweep_xstrdup(o); /* "--name" alone: cut at the '=' */
            out[n - 1][strchr(o, '=') - o] = 0;
            out[n++] = (char *)value;
            continue;
        }
        /* (an #SBATCH option is itself "--time=...": --sbatch takes any next word) */
        if (valued >= 0 && (i + 1 >= argc || (!strncmp(argv[i + 1], "--", 2) && strcmp(name, "sbatch"))))
            sweep_die("--%s: needs a value (accepted: --%s VALUE or --%s=VALUE)", name, name, name);
        out[n++] = argv[i];
    }
    out[n] = NULL;
    *argc_io = n;
    return out;
}

static void parse(args_t *a, int argc, char **argv)
{
    argv = own_syntax(&argc, argv);
    memset(a, 0, sizeof *a);
    a->shard = -1;
    a->jobs = 1;
    int i = 1;
    if (i < argc && argv[i][0] != '-') {
        if (strlen(argv[i]) >= SWEEP_NAME_MAX) sweep_die("experiment name too long: '%s'", argv[i]);
        snprintf(a->s.experiment, sizeof a->s.experiment, "%s", argv[i++]);
    }
    for (; i < argc; i++) {
        const char *o = argv[i];
        if (!strcmp(o, "--")) {
            for (i++; i < argc; i++) sweep_add_option(&a->s, argv[i]);
            break;
        } else if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
            usage(stdout);
            exit(drift_stdout_close_check());
        } else if (!strcmp(o, "--version")) {
            printf("drift-sweep (driftlab %s)\n", DRIFT_VERSION);
            exit(drift_stdout_close_check());
        } else if (!strcmp(o, "--grid")) {
            sweep_add_grid(&a->s, need_str(argc, argv, &i), "--grid");
        } else if (!strcmp(o, "--file")) {
            sweep_read_file(&a->s, need_str(argc, argv, &i));
        } else if (!strcmp(o, "--out")) {
            a->out = need_str(argc, argv, &i);
        } else if (!strcmp(o, "--merge")) {
            a->merge_dir = need_str(argc, argv, &i);
        } else if (!strcmp(o, "--bin")) {
            a->bindir = need_str(argc, argv, &i);
        } else if (!strcmp(o, "--gpus")) {
            a->gpus = need_str(argc, argv, &i);
            if (strstr(a->gpus, ",,") || a->gpus[0] == ',' || a->gpus[strlen(a->gpus) - 1] == ',' ||
                strpbrk(a->gpus, " \t"))
                sweep_die(
                    "--gpus: malformed list '%s' (accepted: N or N,N,... as CUDA_VISIBLE_DEVICES takes them)", a->gpus);
        } else if (!strcmp(o, "--jobs")) {
            a->jobs = need_long(argc, argv, &i, 1);
            if (a->jobs > SWEEP_MAX_JOBS)
                sweep_die("--jobs: %ld (accepted: 1..%d local processes)", a->jobs, SWEEP_MAX_JOBS);
        } else if (!strcmp(o, "--shares")) {
            long n = need_long(argc, argv, &i, 1);
            if (a->s.nshares && a->s.nshares != n)
                sweep_die("--shares: %ld differs from %ld given before", n, a->s.nshares);
            a->s.nshares = n;
        } else if (!strcmp(o, "--shard")) {
            const char *v = need_str(argc, argv, &i);
            char *slash = strchr(v, '/'), lhs[32];
            long k, n;
            if (!slash || (size_t)(slash - v) >= sizeof lhs)
                sweep_die("--shard: '%s' (accepted: I/N with 0 <= I < N)", v);
            snprintf(lhs, sizeof lhs, "%.*s", (int)(slash - v), v);
            if (drift_parse_long(&k, lhs) || drift_parse_long(&n, slash + 1) || n < 1 || k < 0 || k >= n)
                sweep_die("--shard: '%s' (accepted: I/N with 0 <= I < N)", v);
            if (a->s.nshares && a->s.nshares != n)
                sweep_die("--shard: %ld shares where %ld were given before", n, a->s.nshares);
            a->s.nshares = n;
            a->shard = k;
        } else if (!strcmp(o, "--no-merge")) {
            a->no_merge = 1;
        } else if (!strcmp(o, "--slurm")) {
            a->slurm = 1;
        } else if (!strcmp(o, "--sbatch")) {
            a->sbatch = realloc(a->sbatch, (size_t)(a->nsbatch + 1) * sizeof *a->sbatch);
            if (!a->sbatch) sweep_die("out of memory (--sbatch given %d times)", a->nsbatch + 1);
            a->sbatch[a->nsbatch++] = (char *)need_str(argc, argv, &i);
            for (const char *p = a->sbatch[a->nsbatch - 1]; *p; p++) /* one script line each */
                if ((unsigned char)*p < 0x20 || *p == 0x7f)
                    sweep_die("--sbatch: '%s' holds a control byte (accepted: one #SBATCH option)",
                        a->sbatch[a->nsbatch - 1]);
        } else if (!strcmp(o, "--quiet")) {
            sweep_quiet = 1;
        } else if (!strncmp(o, "--", 2) && o[2]) {
            /* An experiment option: passed to every run, with its value. */
            sweep_add_option(&a->s, o);
            if (i + 1 < argc && strncmp(argv[i + 1], "--", 2)) sweep_add_option(&a->s, argv[++i]);
        } else {
            sweep_die("unexpected argument '%s' (drift-sweep --help)", o);
        }
    }
}

static void definition_sha(char hex[65], const sweep_t *s)
{
    char *def = sweep_definition(s, 0);
    drift_sha256_t h;
    drift_sha256_init(&h);
    drift_sha256_update(&h, def, strlen(def));
    drift_sha256_hex(hex, &h);
    free(def);
}

static void self_dir(char *buf, size_t size, char *exe, size_t exesize)
{
    ssize_t n = readlink("/proc/self/exe", exe, exesize - 1);
    if (n <= 0) sweep_die("cannot find my own executable (/proc/self/exe)");
    exe[n] = 0;
    snprintf(buf, size, "%s", exe);
    char *slash = strrchr(buf, '/');
    if (slash) *slash = 0;
}

/* A directory of its own for a sweep started without --out: sweeps/EXP-YYYYMMDD-HHMMSS, with
 * -2, -3, ... when that one exists (two sweeps in one second), claimed by mkdir so that two
 * processes never get the same one. A second sweep of one experiment was refused as "another
 * sweep" until the user deleted the first. */
static void default_out(char *buf, size_t size, const char *experiment)
{
    char stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    if (!localtime_r(&now, &tm) || !strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm))
        snprintf(stamp, sizeof stamp, "%lld", (long long)now);
    sweep_mkdirs("sweeps");
    for (int k = 1; k < 1000; k++) {
        if (k == 1)
            snprintf(buf, size, "sweeps/%s-%s", experiment, stamp);
        else
            snprintf(buf, size, "sweeps/%s-%s-%d", experiment, stamp, k);
        if (mkdir(buf, 0777) == 0) return;
        if (errno != EEXIST) sweep_die("--out: cannot create '%s': %s (give --out DIR)", buf, strerror(errno));
    }
    sweep_die("--out: sweeps/%s-%s-2 .. -999 all exist (give --out DIR)", experiment, stamp);
}

/* What main parsed, freed at exit (whichever return or sweep_die ends the program). */
static args_t a;
static sweep_t merge_sweep;

static void free_parsed(void)
{
    sweep_free(&a.s);
    sweep_free(&merge_sweep);
    free(a.sbatch);
}

int main(int argc, char **argv)
{
    long mpi_size = env_long(MPI_SIZE_VARS, 1), mpi_rank = env_long(MPI_RANK_VARS, 0);
    rank_silent = mpi_rank != 0;
    drift_set_program("drift-sweep"); /* the library's refusals (drift_die) name the tool */
    atexit(free_parsed);
    if (argc == 2 && !strcmp(argv[1], "--version")) {
        printf("drift-sweep (driftlab %s)\n", DRIFT_VERSION);
        return drift_stdout_close_check();
    }
    parse(&a, argc, argv);
    drift_env_threads_check(); /* passed on to every run: refused once here, not in each */

    static char exe[PATH_MAX], bindir[PATH_MAX], line[16384], def_dir[PATH_MAX + 64];
    self_dir(bindir, sizeof bindir, exe, sizeof exe);
    if (a.bindir) snprintf(bindir, sizeof bindir, "%s", a.bindir);
    argv_line(line, sizeof line, argc, argv);
    drift_envinfo_t env;
    drift_envinfo_collect(&env);
    char host[256] = "unknown";
    gethostname(host, sizeof host - 1);

    sweep_ctx_t c = {.bindir = bindir, .commit = env.git, .host = host, .argv_line = line};

    if (a.merge_dir) {
        if (a.s.experiment[0] || a.s.naxes || a.s.noptions || a.shard >= 0 || a.slurm)
            sweep_die("--merge DIR takes no experiment, grid or run options (accepted: --merge DIR [--out MERGED])");
        if (mpi_rank != 0) return 0;
        if (strlen(a.merge_dir) > SWEEP_DIR_MAX || (a.out && strlen(a.out) > SWEEP_DIR_MAX))
            sweep_die("--merge: path too long (accepted: at most %d characters)", SWEEP_DIR_MAX);
        sweep_t *sp = &merge_sweep;
        snprintf(def_dir, sizeof def_dir, "%s/sweep.txt", a.merge_dir);
        struct stat st;
        if (stat(a.merge_dir, &st) != 0 || !S_ISDIR(st.st_mode))
            sweep_die("--merge: '%s' is not a sweep directory", a.merge_dir);
        if (lstat(def_dir, &st) != 0) sweep_die("--merge: '%s' is not a sweep directory (no sweep.txt)", a.merge_dir);
        if (!S_ISREG(st.st_mode))
            sweep_die("--merge: '%s' is not a regular file (a sweep directory's definition is one)", def_dir);
        sweep_read_file(sp, def_dir);
        sweep_finish(sp);
        definition_sha(c.def_sha, sp);
        c.dir = a.merge_dir;
        char merged[PATH_MAX + 16];
        snprintf(merged, sizeof merged, "%s/merged", a.merge_dir);
        return sweep_merge(sp, &c, a.out ? a.out : merged);
    }

    sweep_finish(&a.s);
    char exepath[PATH_MAX + SWEEP_NAME_MAX];
    snprintf(exepath, sizeof exepath, "%s/%s", bindir, a.s.experiment);
    if (access(exepath, X_OK) != 0)
        sweep_die("unknown experiment '%s': no program %s (./lab list names them; --bin DIR)", a.s.experiment, exepath);
    if (a.shard >= 0 && mpi_size > 1) sweep_die("--shard: give it to one process, not to %ld MPI ranks", mpi_size);
    if (a.slurm && mpi_size > 1) sweep_die("--slurm: writes scripts only; run it without mpirun");
#ifndef DRIFT_HAVE_MPI
    if (mpi_size > 1)
        sweep_die(
            "started by mpirun with %ld ranks, but built without MPI (install libopenmpi-dev, rebuild)", mpi_size);
#endif

    static char outbuf[PATH_MAX], absout[PATH_MAX];
    if (!a.out) {
        if (a.shard >= 0 || mpi_size > 1) /* every process of the sweep names the same directory */
            snprintf(outbuf, sizeof outbuf, "sweeps/%s", a.s.experiment);
        else
            default_out(outbuf, sizeof outbuf, a.s.experiment);
        a.out = outbuf;
    }
    definition_sha(c.def_sha, &a.s);
    struct stat ost;
    if (a.shard < 0 && !a.no_merge && !a.slurm && stat(a.out, &ost) == 0 && realpath(a.out, absout) &&
        strlen(absout) <= SWEEP_DIR_MAX) {
        /* The merge's target refused now, before anything is made or computed. */
        char merged[PATH_MAX + 16], twhy[8192], **old;
        int nold;
        c.dir = absout;
        snprintf(merged, sizeof merged, "%s/merged", c.dir);
        if (sweep_merge_target(twhy, sizeof twhy, &a.s, &c, merged, &old, &nold) != 0) sweep_die("%s", twhy);
        sweep_free_names(old, nold);
    }
    if (strlen(a.out) > SWEEP_DIR_MAX)
        sweep_die("--out: path too long (accepted: at most %d characters)", SWEEP_DIR_MAX);
    for (const char *p = a.out; a.slurm && *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            sweep_die("--slurm: --out '%s' holds a control byte (a script line would break)", a.out);
    sweep_mkdirs(a.out);
    if (!realpath(a.out, absout)) sweep_die("--out: cannot resolve '%s': %s", a.out, strerror(errno));
    if (strlen(absout) > SWEEP_DIR_MAX)
        sweep_die("--out: '%s' resolves to a path of %zu characters (accepted: at most %d)", a.out, strlen(absout),
            SWEEP_DIR_MAX);
    c.dir = absout;
    if (a.bindir) {
        static char absbin[PATH_MAX];
        if (!realpath(a.bindir, absbin)) sweep_die("--bin: cannot resolve '%s'", a.bindir);
        c.bindir = absbin;
    }
    char *def = sweep_definition(&a.s, 1);
    ensure_definition(c.dir, def);
    free(def);
    char sub[PATH_MAX + 16];
    const char *const subs[] = {"runs", "shares", "logs"};
    for (int i = 0; i < 3; i++) {
        snprintf(sub, sizeof sub, "%s/%s", c.dir, subs[i]);
        sweep_mkdirs(sub);
    }

    if (a.slurm) {
        sweep_write_slurm(&a.s, &c, exe, a.sbatch, a.nsbatch);
        printf("wrote %s/slurm/shares.sbatch (array of %ld tasks), merge.sbatch and submit.sh\n"
               "submit with: bash %s/slurm/submit.sh\n",
            c.dir, a.s.nshares, c.dir);
        if (a.s.nshares > 1000)
            printf("note: %ld array tasks; Slurm's MaxArraySize is 1001 unless the site raised it (--shares N)\n",
                a.s.nshares);
        return drift_stdout_close_check();
    }

    /* The shares this process answers for, less those already done by this commit. */
    long first = a.shard >= 0 ? a.shard : mpi_rank, step = a.shard >= 0 ? a.s.nshares : mpi_size;
    long *todo = malloc((size_t)a.s.nshares * sizeof *todo), ntodo = 0, ndone = 0, mine = 0;
    if (!todo) sweep_die("out of memory listing %ld shares (--shares: fewer)", a.s.nshares);
    for (long k = first; k < a.s.nshares; k += step) {
        char why[1024];
        mine++;
        if (sweep_check_share(&a.s, &c, k, why, sizeof why) == SHARE_OK)
            ndone++;
        else
            todo[ntodo++] = k;
        if (a.shard >= 0) break;
    }
    long workers = mpi_size > 1 ? env_long(MPI_LSIZE_VARS, 1) : a.jobs;
    if (workers > 1 && !getenv("OMP_NUM_THREADS")) {
        /* J processes on one machine: share its cores rather than oversubscribe them (the data
         * does not depend on the thread count). */
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN), t = ncpu / workers;
        char v[32];
        snprintf(v, sizeof v, "%ld", t < 1 ? 1 : t);
        setenv("OMP_NUM_THREADS", v, 1);
    }
    if (mpi_size > 1)
        sweep_say("rank %ld/%ld on %s: %ld of its %ld shares to run", mpi_rank, mpi_size, host, ntodo, mine);
    else if (a.shard >= 0)
        sweep_say("%s: share %ld/%ld of %ld runs: %s in %s", a.s.experiment, a.shard, a.s.nshares, a.s.nruns,
            ndone ? "done already, nothing to run" : "running it", c.dir);
    else
        sweep_say("%s: %ld runs in %ld shares; %ld of them done already, %ld to run%s in %s", a.s.experiment, a.s.nruns,
            a.s.nshares, ndone, ntodo, a.jobs > 1 ? " in parallel" : "", c.dir);
    int rc = run_shares(&a.s, &c, todo, ntodo, mpi_size > 1 ? 1 : a.jobs, a.gpus,
        mpi_size > 1 ? env_long(MPI_LRANK_VARS, mpi_rank) : 0);
    free(todo);
    if (drift_stdout_close_check()) return 2;

    int do_merge = a.shard < 0 && !a.no_merge;
#ifdef DRIFT_HAVE_MPI
    if (mpi_size > 1) {
        MPI_Init(&argc, &argv);
        int mine_rc = rc, all_rc = 0;
        MPI_Allreduce(&mine_rc, &all_rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        rc = all_rc;
        char merged[PATH_MAX + 16];
        snprintf(merged, sizeof merged, "%s/merged", c.dir);
        if (rc == 0 && do_merge && mpi_rank == 0) rc = sweep_merge(&a.s, &c, merged);
        MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
        MPI_Finalize();
        return rc;
    }
#endif
    if (rc) {
        if (rc == 1)
            fprintf(stderr, "drift-sweep: %s: some shares failed; run the same command again to finish them\n", c.dir);
        return rc;
    }
    if (!do_merge) return 0;
    char merged[PATH_MAX + 16];
    snprintf(merged, sizeof merged, "%s/merged", c.dir);
    return sweep_merge(&a.s, &c, merged);
}
