/* test_bad_input.c — the bad-input catalogue: every experiment and calc command
 * given input it must refuse. Each case must exit 2 before any computing (a 20 s timeout
 * catches one that computes instead), print exactly one line on stderr naming the option or
 * the file, and leave the output directory exactly as it was (names, sizes, contents). The
 * experiments get --out D, where D holds a previous result file; calc runs with D as its
 * working directory. */
#include "support.h"

#include <signal.h>
#include <sys/stat.h>

#include "outlock.h"

#define BIN DRIFT_BIN_DIR
#ifndef BAD_TIMEOUT
#define BAD_TIMEOUT "20" /* s: a case that computes instead of refusing ends here, and fails */
#endif

typedef struct {
    const char *prog;  /* program in build/bin, or "lab" for the front door */
    const char *args;  /* shell words; D is replaced by the output directory */
    const char *names; /* what the one line must contain */
} bad_t;

/* The common options, refused the same way by every experiment. */
#define COMMON(p)                                                                                                     \
    {p, "--seed ' -1'", "--seed"}, {p, "--seed +5", "--seed"}, {p, "--seed -1", "--seed"},                            \
        {p, "--seed 18446744073709551616", "--seed"}, {p, "--seed ''", "--seed"}, {p, "--profile fast", "--profile"}, \
        {p, "--formats bf16,bf16", "--formats"}, {p, "--formats bf16,,fp32", "--formats"},                            \
        {p, "--formats fp99", "--formats"}, {p, "--backend gpu", "--backend"}, {p, "--threads 1024", "--threads"},    \
        {p, "--threads 0", "--threads"}, {p, "--threads ' 2'", "--threads"}, {p, "--out /proc/driftlab_x", "--out"},  \
        {p, "--out D/keep.csv/sub", "--out"}, {p, "--out ''", "--out"}, {p, "--bogus 1", "--bogus"},                  \
    {                                                                                                                 \
        p, "--seed", "--seed"                                                                                         \
    }

static const bad_t CASES[] = {
    COMMON("formats"),
    COMMON("sum_order"),
    COMMON("sum_order_perms"),
    COMMON("matmul_drift"),
    COMMON("matmul_drift_splitk"),
    COMMON("batch_invariance"),
    COMMON("batch_invariance_cost"),
    COMMON("sampling_flip"),
    COMMON("argmax_flip"),
    /* lists: too long (refused with the limit, never cut), duplicates, empty items */
    {"matmul_drift", "--K $(seq -s, 1 70)", "--K"},
    {"batch_invariance", "--K $(seq -s, 1 70)", "--K"},
    {"matmul_drift", "--K 64,64", "--K"},
    {"matmul_drift", "--K 64,064", "--K"},
    {"matmul_drift", "--K 0", "--K"},
    {"matmul_drift", "--K ,64", "--K"},
    {"matmul_drift", "--accs fp32,,own", "--accs"},
    {"matmul_drift", "--accs fp32,fp32", "--accs"},
    {"matmul_drift", "--dists normal,,llm", "--dists"},
    {"matmul_drift", "--M +4", "--M"},
    {"matmul_drift", "--N ' 4'", "--N"},
    {"matmul_drift", "--orders seq", "--orders"},
    {"matmul_drift", "--backend cuda", "--backend"},
    {"batch_invariance", "--K 64,64", "--K"},
    {"batch_invariance", "--K ''", "--K"},
    {"batch_invariance", "--N 0", "--N"},
    {"batch_invariance", "--device z80", "--device"},
    {"batch_invariance_cost", "--device z80", "--device"},
    {"batch_invariance_cost", "--formats fp64", "--formats"},
    {"argmax_flip_realistic", "--K 65536 --V 1000000", "--K"},
    {"argmax_flip", "--orders seq,seq", "--orders"},
    {"argmax_flip", "--orders seq,,pairwise", "--orders"},
    {"argmax_flip", "--orders bogus", "--orders"},
    {"argmax_flip", "--V ' 4000'", "--V"},
    {"argmax_flip", "--K 64,64", "--K"},
    /* a planted tie swaps 16 pairs of distinct channels: K < 32 failed in the first tie trial,
     * after every larger K had been computed */
    {"argmax_flip", "--K 16", "--K"},
    {"argmax_flip", "--K 1024,31", "--K"},
    {"argmax_flip", "--profile full --K 4096,16", "--K"},
    {"argmax_flip", "--device ''", "--device"},
    {"argmax_flip", "--formats fp8e4m3", "--formats"},
    {"sum_order", "--orders seq,seq", "--orders"},
    {"sum_order", "--orders splitk:4,splitk:4", "--orders"},
    {"sum_order", "--trials +3", "--trials"},
    {"sampling_flip", "--K ' 256'", "--K"},
    {"sampling_flip", "--V 1e3", "--V"},
    {"sampling_flip", "--rows 0x10", "--rows"},
    {"formats_relerr", "--samples -1", "--samples"},
    {"formats", "--values 1,,2", "--values"},
    /* refused after the option check, where a missing --out is already made and locked: what
     * was made for it is gone again (D as it was) */
    {"sum_order", "--orders tc:h100 --out D/new/sub", "--orders"},
    {"formats", "--values 0.5,0x1p-1 --out D/new", "--values"},
    {"argmax_flip", "--K 16 --out D/new/a/b/", "--K"},
    /* options an experiment does not take are refused, never ignored (the spec says
     * so, default_formats NULL or no_orders, and the parser refuses) */
    {"layer_drift", "--formats bf16", "--formats"},
    {"real_gaps", "--formats fp16", "--formats"},
    {"speculative", "--formats bf16", "--formats"},
    {"allreduce_order", "--formats fp32", "--formats"},
    {"greedy_divergence", "--formats bf16", "--formats"},
    {"layer_drift", "--profile quick --formats fp32 --orders seq", "--formats"},
    {"formats", "--orders seq", "--orders"},
    {"formats", "--formats fp16 --orders pairwise", "--orders"},
    {"tc_conformance", "--orders tc:h100", "--orders"},
    {"kv_cache", "--orders seq", "--orders"},
    /* one value written two ways is one value given twice: lists compared after parsing */
    {"formats", "--formats fp32,FP32", "--formats"},
    {"formats", "--formats bf16,bfloat16", "--formats"},
    {"formats", "--values 0.5,0x1p-1", "--values"},
    {"formats", "--values 0.5,", "--values"},
    {"matmul_drift", "--K 64,64.0", "--K"},
    {"matmul_drift", "--K 64,0x40", "--K"},
    {"matmul_drift", "--K 64,,128", "--K"},
    {"matmul_drift", "--K 64,128,", "--K"},
    {"kv_cache", "--kv-formats fp32,FP32", "--kv-formats"},
    {"kv_cache", "--kv-formats fp16,half", "--kv-formats"},
    {"kv_cache", "--kv-formats fp32,", "--kv-formats"},
    {"kv_cache", "--kv-formats fp32,,fp16", "--kv-formats"},
    {"kv_cache", "--kv-formats int8:token,int8:token", "--kv-formats"},
    {"greedy_divergence", "--prompt-ids 1,", "--prompt-ids"},
    {"greedy_divergence", "--prompt-ids ,1", "--prompt-ids"},
    {"greedy_divergence", "--prompt-ids ' 1'", "--prompt-ids"},
    {"greedy_divergence", "--prompt-ids +1", "--prompt-ids"},
    {"drift-generate", "--prompt-ids 1,", "--prompt-ids"},
    {"drift-generate", "--prompt-ids 1,,2", "--prompt-ids"},
    /* deployments: the field and its accepted values named (deployment.h) */
    {"drift-generate", "--deployment vllm-like,card=a1000", "card=a1000: expected cpu or a card"},
    {"drift-generate", "--deployment vllm", "unknown preset 'vllm'"},
    {"drift-generate", "--deployment vllm-like,batch=64", "batch=64: expected alone, static:B or continuous:B"},
    {"drift-generate", "--deployment vllm-like --kv fp16", "--deployment: it sets the whole configuration"},
    {"drift-generate", "--deployment vllm-like --deployment hf-eager", "--deployment: give it once"},
    {"drift-generate", "--deployment @/nonexistent.dep", "cannot open /nonexistent.dep"},
    {"deployments", "--prompts 0", "--prompts"},
    {"deployments", "--formats bf16", "--formats"},
    {"drift-sweep", "formats --grid seed=1,01 --out D/s", "'01'"},
    {"drift-sweep", "formats --grid formats=fp32,FP32 --out D/s", "'FP32'"},
    {"drift-sweep", "formats --grid 'seed=1..3,0x2' --out D/s", "'0x2'"},
    /* options that contradict each other, or one given twice: the last word would win */
    {"drift-calc", "dot --format fp32 --order seq --fma --nofma a b", "--nofma"},
    {"drift-calc", "dot --format fp32 --order seq --nofma --fma a b", "--fma"},
    {"drift-calc", "sum --format fp32 --format=fp16 --order seq a", "--format"},
    {"drift-calc", "argmax --format fp32 --order seq --order pairwise a b", "--order"},
    /* the calculator: options first, then files; bounded input */
    {"drift-calc", "sum --format fp32 --order seq /dev/zero", "/dev/zero"},
    {"drift-calc", "sum --format fp32 --order seq /nonexistent/x", "/nonexistent/x"},
    {"drift-calc", "sum --format fp99 --order seq -", "--format"},
    {"drift-calc", "sum --format fp32 --order bogus -", "--order"},
    {"drift-calc", "dot --format bf16 --order tc:v100 /nonexistent/a /nonexistent/b", "--format"},
    {"drift-calc", "exact /nonexistent/x", "/nonexistent/x"},
    {"drift-calc", "round --format fp99 1", "--format"},
    {"drift-calc", "round --format fp16 ' 1'", "VALUE"},
    {"drift-calc", "argmax --format fp99 --order seq a b", "--format"},
    {"drift-calc", "bogus", "bogus"},
    {"lab", "bogus", "bogus"},
    /* drift-sweep: counts checked before anything is allocated (a range over the whole of
     * int64 overflowed the check and allocated until memory ran out), naming the axis */
    {"drift-sweep", "formats --grid 'seed=-9223372036854775808..9223372036854775807' --out D/s", "seed"},
    {"drift-sweep", "formats --grid 'seed=0..9223372036854775807' --out D/s", "seed"},
    {"drift-sweep", "formats --grid 'seed=1..1000 K=1..1000000' --out D/s", "K"},
    {"drift-sweep", "formats --grid 'seed=1..999999,1000000..1000001' --out D/s", "seed"},
    {"drift-sweep", "formats --grid seed=1 --jobs 9223372036854775807 --out D/s", "--jobs"},
    /* a newline or another control byte in a value or an option: one line, the byte escaped */
    {"drift-sweep", "formats --grid \"$(printf 'seed=1\\001')\" --out D/s", "seed"},
    {"drift-sweep", "formats --grid seed=1 --out D/s -- \"$(printf -- '--note\\na')\"", "--note\\x0aa"},
    {"drift-sweep", "\"$(printf 'for\\nmats')\" --grid seed=1 --out D/s", "for\\x0amats"},
    {"drift-sweep", "--merge D --out D/m", "not a sweep directory"},
    {"drift-sweep", "formats --grid seed=1 --slurm --sbatch \"$(printf -- '--time=1\\nrm -rf x')\" --out D/s",
        "--sbatch"},
    /* bounded input: a device is one endless line (getline allocated until memory ran out) */
    {"drift-sweep", "formats --file /dev/zero --out D/s", "/dev/zero"},
    {"drift-sweep", "formats --grid seed=1 --out D/$(printf 'x%.0s' $(seq 700))", "--out: path too long"},
    /* drift-sweep's own options in the one syntax: a typo of one is named, not passed to every run */
    {"drift-sweep", "formats --grid seed=1 --job 2 --out D/s", "did you mean '--jobs'?"},
    {"drift-sweep", "formats --grid seed=1 --shard=0 --out D/s", "--shard"},
    {"drift-sweep", "formats --grid seed=1 --quiet=1 --out D/s", "--quiet takes no value"},
    {"drift-sweep", "formats --grid seed=1 --jobs= --out D/s", "--jobs: empty value"},
    {"drift-sweep", "formats --grid seed=1 --out", "--out: needs a value"},
    {"drift-sweep", "formats --grid=seed=1,1 --out=D/s", "given twice"},
    /* drift-manifest: a name that is no experiment's (an empty one matched every file) */
    {"drift-manifest", "recover D ''", "EXPERIMENT"},
    {"drift-manifest", "recover D '../x'", "EXPERIMENT"},
    {"drift-manifest", "check D 'a b'", "EXPERIMENT"},
    {"drift-manifest", "recover D/$(printf 'x%.0s' $(seq 1100)) formats", "DIR: path too long"},
    {"drift-manifest", "check D/\"$(printf 'n\\nl')\"", "n\\x0al"}, /* one line, the newline escaped */
    /* the last flush of stdout is checked */
    {"drift-sweep", "--help >/dev/full", "stdout"},
};
#define NCASES (int)(sizeof CASES / sizeof CASES[0])

static char dir[64], errdir[64];

/* Every entry of D as "name size sum\n", sorted by readdir order made stable by the listing
 * tool: ls -la --time-style=+%s.%N plus the contents' checksum. */
static void snapshot(char *buf, size_t size)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "cd '%s' && ls -lAR --time-style=+%%s.%%N . ; cat keep.csv | cksum", dir);
    run_stdout(cmd, buf, size);
}

static void setup(void)
{
    tmpdir_make(dir, sizeof dir, "drift_bad");
    tmpdir_make(errdir, sizeof errdir, "drift_bad_err");
    char p[128];
    snprintf(p, sizeof p, "%s/keep.csv", dir);
    FILE *fp = fopen(p, "w");
    fputs("# a previous result\nx\n1\n", fp);
    fclose(fp);
}

static void teardown(void)
{
    tmpdir_remove(dir);
    tmpdir_remove(errdir);
}

/* args with each word "D" or prefix "D/" replaced by the directory. */
static void expand(char *out, size_t size, const char *args)
{
    size_t n = 0;
    for (const char *p = args; *p && n + 80 < size; p++) {
        int word_start = p == args || p[-1] == ' ';
        if (word_start && p[0] == 'D' && (p[1] == 0 || p[1] == ' ' || p[1] == '/'))
            n += (size_t)snprintf(out + n, size - n, "%s", dir);
        else
            out[n++] = *p;
    }
    out[n] = 0;
}

Test(bad_input, catalogue, .init = setup, .fini = teardown, .timeout = 600)
{
    cr_assert_geq(NCASES, 100, "the catalogue holds at least 100 bad inputs (has %d)", NCASES);
    static char before[16384], after[16384], err[4096];
    for (int i = 0; i < NCASES; i++) {
        const bad_t *c = &CASES[i];
        char args[1024], cmd[2048];
        expand(args, sizeof args, c->args);
        int is_exp = strncmp(c->prog, "drift-", 6) && strcmp(c->prog, "lab"); /* the tools get no --out */
        const char *out = is_exp && !strstr(c->args, "--out") ? " --out '" : "";
        if (!strcmp(c->prog, "lab"))
            snprintf(cmd, sizeof cmd, "cd '%s' && timeout " BAD_TIMEOUT " '%s/lab' %s </dev/null", dir,
                DRIFT_SOURCE_DIR, args);
        else
            /* in braces: a case's own redirection (>/dev/full) outlives run_capture's */
            snprintf(cmd, sizeof cmd, "cd '%s' && { timeout " BAD_TIMEOUT " '%s/%s' %s%s%s%s </dev/null; }", dir, BIN,
                c->prog, args, out, *out ? dir : "", *out ? "'" : "");
        snapshot(before, sizeof before);
        int st = run_capture(cmd, NULL, 0, err, sizeof err);
        snapshot(after, sizeof after);
        int lines = 0;
        for (const char *p = err; *p; p++) lines += *p == '\n';
        cr_expect_eq(st, 2, "case %d: %s %s: exit %d, not 2 (stderr: %s)", i, c->prog, c->args, st, err);
        cr_expect(lines == 1 && err[strlen(err) - 1] == '\n', "case %d: %s %s: %d lines on stderr, not one: %s", i,
            c->prog, c->args, lines, err);
        cr_expect(strstr(err, c->names) != NULL, "case %d: %s %s: the message does not name '%s': %s", i, c->prog,
            c->args, c->names, err);
        cr_expect_str_eq(after, before, "case %d: %s %s: the output directory changed", i, c->prog, c->args);
    }
}

/* A list of 30 values was once cut to 24 without a word. All 30 come back. */
Test(bad_input, long_list_is_not_cut, .init = setup, .fini = teardown, .timeout = 300)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
        "cd '%s' && '%s/matmul_drift' --profile quick --quiet --formats fp32 --kernels naive --accs fp32 --dists normal "
        "--M 1 --N 1 --K $(seq -s, 1 30) --out '%s' && grep -c '^naive\\|\"naive\"' '%s/matmul_drift.csv' >/dev/null",
        dir, BIN, dir, dir);
    cr_assert_eq(sh("%s", cmd), 0);
    char out[64];
    snprintf(cmd, sizeof cmd,
        "grep -v '^#' '%s/matmul_drift.csv' | awk -F, 'NR==1{for(i=1;i<=NF;i++) if($i==\"K\") k=i} NR>1{print $k}' | sort -un | wc -l",
        dir);
    run_stdout(cmd, out, sizeof out);
    cr_assert_eq(atoi(out), 30, "K values in the CSV: %s (30 given)", out);
}

/* Cases that need a directory prepared first (a sweep, a previous merge, a held lock): each
 * is refused with the status given, one line naming what is given, and D (everything in it,
 * recursively, with sizes and times) exactly as it was. */
typedef struct {
    const char *setup; /* shell, run in D before the snapshot */
    const char *cmd;   /* shell, run in D; BIN is the build's bin directory */
    int status;
    const char *names;
} prepared_t;

#define SWEEP_S "'" BIN "/drift-sweep' formats --grid seed=1,2 --out s --quiet -- --profile quick"

static const prepared_t PREPARED[] = {
    /* drift-sweep --merge deleted whatever --out named */
    {SWEEP_S " && mkdir p && echo x > p/thesis.txt", "'" BIN "/drift-sweep' --merge s --out p", 2, "'p'"},
    {SWEEP_S, "'" BIN "/drift-sweep' --merge s --out s", 2, "'s'"},
    {SWEEP_S, "'" BIN "/drift-sweep' --merge s --out s/sweep.txt", 2, "s/sweep.txt"},
    {SWEEP_S, "'" BIN "/drift-sweep' --merge s --out s/runs", 2, "s/runs"},
    {SWEEP_S, "'" BIN "/drift-sweep' --merge s --out s/runs/000000/new", 2, "inside the sweep's runs/"},
    {SWEEP_S, "'" BIN "/drift-sweep' --merge s --out keep.csv", 2, "keep.csv"},
    {SWEEP_S " && mkdir t && ln -s ../keep.csv t/link", "'" BIN "/drift-sweep' --merge s --out t/link", 2,
        "symbolic link"},
    {SWEEP_S " && echo note > s/merged/note.txt", "'" BIN "/drift-sweep' --merge s", 2, "note.txt"},
    /* a merge.manifest edited to list another file cannot make that file the merge's */
    {SWEEP_S " && echo x > s/merged/thesis.txt && echo 'file: thesis.txt 2 0' >> s/merged/merge.manifest",
        "'" BIN "/drift-sweep' --merge s", 2, "s/merged"},
    {SWEEP_S " && '" BIN "/drift-sweep' formats --grid seed=3 --out o --quiet -- --profile quick",
        "'" BIN "/drift-sweep' --merge s --out o/merged", 2, "o/merged"},
    /* the next sweep run refuses before it computes when its merge could not go in */
    {"mkdir -p r/merged && echo x > r/merged/thesis.txt",
        "'" BIN "/drift-sweep' formats --grid seed=1 --out r --quiet -- --profile quick", 2, "r/merged"},
    /* a FIFO where a listed file belongs: refused, not opened (the check hung) */
    {"'" BIN "/formats' --profile quick --quiet --out f && rm f/formats.md && mkfifo f/formats.md",
        "timeout 10 '" BIN "/drift-manifest' check f formats", 1, "not a regular file"},
    {"'" BIN "/formats' --profile quick --quiet --out f && rm f/formats.manifest && mkfifo f/formats.manifest",
        "timeout 10 '" BIN "/drift-manifest' check f formats", 1, "not a regular file"},
    {"mkdir -p s2 && mkfifo s2/sweep.txt", "timeout 10 '" BIN "/drift-sweep' --merge s2", 2, "not a regular file"},
};
#define NPREPARED (int)(sizeof PREPARED / sizeof PREPARED[0])

static void snapshot_all(char *buf, size_t size)
{
    char cmd[256];
    snprintf(
        cmd, sizeof cmd, "cd '%s' && ls -lAR --time-style=+%%s.%%N . && find . -type f -exec cksum {} + | sort", dir);
    run_stdout(cmd, buf, size);
}

Test(bad_input, prepared_directories_are_left_as_they_were, .timeout = 600)
{
    static char before[1 << 16], after[1 << 16], err[4096];
    for (int i = 0; i < NPREPARED; i++) {
        const prepared_t *c = &PREPARED[i];
        setup();
        cr_assert_eq(
            sh("cd '%s' && { %s; } >/dev/null 2>&1", dir, c->setup), 0, "case %d: setup failed: %s", i, c->setup);
        char cmd[2048];
        snprintf(cmd, sizeof cmd, "cd '%s' && %s </dev/null", dir, c->cmd);
        snapshot_all(before, sizeof before);
        int st = run_capture(cmd, NULL, 0, err, sizeof err);
        snapshot_all(after, sizeof after);
        int lines = 0;
        for (const char *p = err; *p; p++) lines += *p == '\n';
        cr_expect_eq(st, c->status, "case %d: %s: exit %d, not %d (stderr: %s)", i, c->cmd, st, c->status, err);
        cr_expect(lines == 1 && err[strlen(err) - 1] == '\n', "case %d: %s: %d lines on stderr, not one: %s", i, c->cmd,
            lines, err);
        cr_expect(
            strstr(err, c->names) != NULL, "case %d: %s: the message does not name '%s': %s", i, c->cmd, c->names, err);
        cr_expect_str_eq(after, before, "case %d: %s: the directory changed", i, c->cmd);
        teardown();
    }
}

/* Another run holds formats' lock on D (this test process, as a live run would): the run
 * refuses before it computes, one line naming D and the holder's pid, D untouched. */
Test(bad_input, a_second_writer_is_refused, .init = setup, .fini = teardown, .timeout = 60)
{
    char why[2048], cmd[1024], want[32];
    static char before[16384], after[16384], err[4096];
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid_t pid = fork();
    if (pid == 0) { /* the holder: a process of its own, as another run would be */
        char ok = drift_out_lock(why, sizeof why, dir, "formats") == 0 ? 'y' : 'n';
        (void)!write(fds[1], &ok, 1);
        for (;;) pause();
    }
    cr_assert_geq(pid, 0);
    char ok = 0;
    cr_assert_eq(read(fds[0], &ok, 1), 1);
    close(fds[0]);
    close(fds[1]);
    cr_assert_eq(ok, 'y', "the holder could not take the lock");
    snprintf(want, sizeof want, "pid %ld", (long)pid);
    snprintf(cmd, sizeof cmd, "timeout " BAD_TIMEOUT " '%s/formats' --profile quick --seed 9 --out '%s' </dev/null",
        BIN, dir);
    snapshot(before, sizeof before);
    int st = run_capture(cmd, NULL, 0, err, sizeof err);
    snapshot(after, sizeof after);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    cr_expect_eq(st, 2, "exit %d: %s", st, err);
    cr_expect(strchr(err, '\n') == err + strlen(err) - 1, "not one line: %s", err);
    cr_expect(strstr(err, dir) && strstr(err, want), "does not name %s and %s: %s", dir, want, err);
    cr_expect_str_eq(after, before, "the refused run changed the directory");
}

/* Every write checked, the last flush of stdout included: a full device is an error (status
 * 2, one line), not a success. The files, committed before the table is printed, are whole. */
Test(bad_input, full_stdout_is_an_error, .init = setup, .fini = teardown, .timeout = 60)
{
    char cmd[1024], err[4096];
    snprintf(cmd, sizeof cmd, "{ '%s/formats' --profile quick --out '%s' >/dev/full </dev/null; }", BIN, dir);
    int st = run_capture(cmd, NULL, 0, err, sizeof err);
    cr_expect_eq(st, 2, "exit %d: %s", st, err);
    cr_expect(strstr(err, "stdout") && strchr(err, '\n') == err + strlen(err) - 1, "%s", err);
    cr_expect_eq(sh("'%s/drift-manifest' check '%s' formats", BIN, dir), 0);
    snprintf(cmd, sizeof cmd, "{ '%s/drift-manifest' check '%s' formats >/dev/full; }", BIN, dir);
    cr_expect_eq(run_capture(cmd, NULL, 0, err, sizeof err), 0, "nothing written, nothing failed: %s", err);
}

/* An allocation that fails names what it was for, how large, and the options that size it (a
 * bare "out of memory" left the user to guess); the fresh --out it would have written is gone.
 * The address-space limit makes the 1.0 GB head fail: 100000 x 1280 doubles is 1.024e9 bytes
 * against 900 MB. Sanitizers reserve terabytes of shadow space, so under them it is skipped. */
Test(bad_input, out_of_memory_names_the_size, .init = setup, .fini = teardown, .timeout = 60)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    cr_skip_test("an address-space limit and a sanitizer's shadow memory do not mix");
#endif
    char cmd[1024], err[4096];
    static char before[16384], after[16384];
    snprintf(cmd, sizeof cmd,
        "cd '%s' && ulimit -v 900000 && '%s/kv_cache' --profile quick --quiet --vocab 100000 --dim 128 --heads 10 "
        "--kv-heads 2 --out new </dev/null",
        dir, BIN);
    snapshot(before, sizeof before);
    int st = run_capture(cmd, NULL, 0, err, sizeof err);
    snapshot(after, sizeof after);
    cr_expect_eq(st, 2, "exit %d: %s", st, err);
    cr_expect(strstr(err, "100000 x 1280") && strstr(err, "--vocab") && strstr(err, "1.0 GB"), "%s", err);
    cr_expect(strchr(err, '\n') == err + strlen(err) - 1, "not one line: %s", err);
    cr_expect_str_eq(after, before, "the output directory changed");
}

/* OMP_NUM_THREADS is read by libgomp, not by the option parser: 100000 crashed every program
 * at its first parallel loop (a segfault), and 0, -1 and abc ran under another thread count
 * than the one set. Every program refuses each with exit 2, its last line on stderr naming
 * the variable and the value (libgomp's own warning may come first: it prints at load time),
 * before it computes: D as it was. A nested list of counts is what OpenMP defines, accepted. */
Test(bad_input, omp_num_threads_is_checked, .init = setup, .fini = teardown, .timeout = 300)
{
    static const char *const VALUES[] = {"100000", "257", "0", "-1", "abc", "", "4,", "4,,2", " 4", "1e3"};
    static const char *const PROGS[] = {
        "formats --profile quick --out D",
        "argmax_flip --profile quick --out D",
        "layer_drift --profile quick --out D",
        "drift-calc sum --format fp32 --order seq -",
        "drift-generate --tokens 2",
        "drift-sweep formats --grid seed=1 --out D/s",
    };
    static char before[16384], after[16384], err[4096];
    for (size_t p = 0; p < sizeof PROGS / sizeof PROGS[0]; p++)
        for (size_t v = 0; v < sizeof VALUES / sizeof VALUES[0]; v++) {
            char args[1024], cmd[2048], want[64];
            expand(args, sizeof args, PROGS[p]);
            snprintf(cmd, sizeof cmd, "cd '%s' && echo 1 | OMP_NUM_THREADS='%s' timeout " BAD_TIMEOUT " '%s'/%s", dir,
                VALUES[v], BIN, args);
            snapshot(before, sizeof before);
            int st = run_capture(cmd, NULL, 0, err, sizeof err);
            snapshot(after, sizeof after);
            size_t len = strlen(err);
            const char *line = err; /* the start of the last line */
            for (const char *q = err; *q && q + 1 < err + len; q++)
                if (*q == '\n') line = q + 1;
            snprintf(want, sizeof want, "OMP_NUM_THREADS: '%s' is not a thread count", VALUES[v]);
            cr_expect_eq(st, 2, "%s with OMP_NUM_THREADS='%s': exit %d, not 2: %s", PROGS[p], VALUES[v], st, err);
            cr_expect(strstr(line, want) != NULL, "%s with OMP_NUM_THREADS='%s': the last line does not say \"%s\": %s",
                PROGS[p], VALUES[v], want, err);
            cr_expect_str_eq(
                after, before, "%s with OMP_NUM_THREADS='%s': the output directory changed", PROGS[p], VALUES[v]);
        }
    cr_expect_eq(sh("cd '%s' && OMP_NUM_THREADS=2,1 '%s/formats' --profile quick --quiet --out '%s/n' >/dev/null", dir,
                     BIN, dir),
        0, "a nested list of counts is refused");
}

/* A full device behind stdout: every tool's answer, --help and --version included (they
 * exited 0, or 1 without a word), is an error with status 2 and the cause named in the last
 * line on stderr (drift-generate's summary line comes before it). */
Test(bad_input, full_stdout_every_tool, .init = setup, .fini = teardown, .timeout = 120)
{
    static const char *const CMDS[] = {
        "drift-calc sum --format fp32 --order seq D/v.txt",
        "drift-calc dot --format fp32 --order seq D/v.txt D/v.txt",
        "drift-calc exact D/v.txt",
        "drift-calc round --format fp16 1.1",
        "drift-calc round --format fp16 1.1 2.2 3.3",
        "drift-calc cards",
        "drift-calc env",
        "drift-calc gaps D/g.csv",
        "drift-calc --help",
        "drift-calc --version",
        "drift-calc help",
        "drift-calc sum --help",
        "drift-generate --tokens 2",
        "drift-generate --help",
        "drift-generate --version",
        "drift-sweep --help",
        "drift-sweep --version",
        "drift-manifest --help",
        "formats --help",
        "formats --version",
        "formats --describe",
        "argmax_flip --help",
        /* a benchmark's result is its stdout: lost to a full device, it said nothing and exited 0 */
        "bench_exact_dot 1",
        "bench_round 1",
    };
    char p[128];
    snprintf(p, sizeof p, "%s/v.txt", dir);
    FILE *fp = fopen(p, "w");
    fputs("1\n2\n3\n", fp);
    fclose(fp);
    snprintf(p, sizeof p, "%s/g.csv", dir);
    fp = fopen(p, "w");
    fputs("1,2,3\n4,0.5,6\n", fp);
    fclose(fp);
    static char err[8192];
    for (size_t i = 0; i < sizeof CMDS / sizeof CMDS[0]; i++) {
        char args[512], cmd[1024];
        expand(args, sizeof args, CMDS[i]);
        snprintf(cmd, sizeof cmd, "{ timeout " BAD_TIMEOUT " '%s'/%s >/dev/full </dev/null; }", BIN, args);
        int st = run_capture(cmd, NULL, 0, err, sizeof err);
        size_t len = strlen(err);
        const char *line = err;
        for (const char *q = err; *q && q + 1 < err + len; q++)
            if (*q == '\n') line = q + 1;
        cr_expect_eq(st, 2, "%s >/dev/full: exit %d, not 2: %s", CMDS[i], st, err);
        cr_expect(strstr(line, "cannot write to stdout (No space left on device)") != NULL,
            "%s >/dev/full: the last line does not name the full device: %s", CMDS[i], err);
    }
}
