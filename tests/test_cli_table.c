/* test_cli_table.c — the command-line convention, as a table of command lines a new user types:
 * each must end with exactly its exit status and print exactly its first line (stdout and
 * stderr together, as a terminal shows them). Programs run from DRIFT_BIN_DIR, ./lab from
 * DRIFT_SOURCE_DIR with DRIFT_BUILD_DIR pointing at the build under test, all in a scratch
 * directory that holds the .npy files the calculator lines name (written here byte by byte,
 * numpy/lib/format.py's layout). Only lines that exit at once: --help, --version and
 * refusals (none runs an experiment or ./lab report), so the table takes a few seconds.
 *
 * The expected texts are the convention itself (cli.h): "PROGRAM: OPTION: what is wrong
 * (accepted: ...)", "did you mean 'X'?" within max(1, length/3) edits, status 2 for a refusal,
 * 0 for --help/--version, 77 for an experiment skipped for want of a GPU. A line marked 1 in
 * the last column is matched on its start only: the rest names the machine (why there is no
 * GPU) or a list that grows with the lab (benchmarks, fuzz targets). */
#include <dirent.h>

#include "support.h"

#include "drift.h"

typedef struct {
    const char *prog;  /* a program in DRIFT_BIN_DIR, or "lab" */
    const char *args;  /* shell words */
    int status;        /* exact exit status */
    const char *first; /* exact first line of the output */
    int prefix;        /* 1: first is the line's start only */
} line_t;

/* What tc:NAME accepts: the tensor-core models (tc_model.h's table, in its order) and the cards
 * (cards.h, as `drift-calc cards` lists them). */
#define TC_NAMES                                                                                                        \
    "tc:MODEL with MODEL one of v100, a100, h100, b200, ada, l40s, a2, a30, h200, rtxpro6000, mi100, mi250, mi300x, "   \
    "or tc:CARD with CARD one of v100, a100, a30, a2, rtx3090, rtx4090, l40s, h100, h100pcie, h200, b200, rtxpro6000, " \
    "mi100, mi250x, mi250, mi300x, in any case"

static const line_t LINES[] = {
    /* ./lab: no command is a failure that shows the help; --version; unknown commands get the nearest
     * (models is the lead's ./lab models get NAME: listed and suggested) */
    {"lab", "", 2, "usage: ./lab COMMAND [arguments]     (./lab --version: the version; options take --opt VALUE", 0},
    {"lab", "--version", 0, "lab (driftlab " DRIFT_VERSION ")", 0},
    {"lab", "--help", 0, "usage: ./lab COMMAND [arguments]     (./lab --version: the version; options take --opt VALUE",
        0},
    {"lab", "help", 0, "usage: ./lab COMMAND [arguments]     (./lab --version: the version; options take --opt VALUE",
        0},
    {"lab", "bogus", 2,
        "lab: unknown command 'bogus' (accepted: setup, build, test, list, run, plot, report, calc, generate, forecast, models, bench, sweep, fuzz, help)",
        0},
    {"lab", "raport", 2,
        "lab: unknown command 'raport' (did you mean 'report'? accepted: setup, build, test, list, run, plot, report, calc, generate, forecast, models, bench, sweep, fuzz, help)",
        0},
    {"lab", "gnerate", 2,
        "lab: unknown command 'gnerate' (did you mean 'generate'? accepted: setup, build, test, list, run, plot, report, calc, generate, "
        "forecast, models, bench, sweep, fuzz, help)",
        0},
    {"lab", "modles", 2,
        "lab: unknown command 'modles' (did you mean 'models'? accepted: setup, build, test, list, run, plot, report, calc, generate, forecast, models, bench, sweep, fuzz, help)",
        0},
    /* commands that take no arguments refuse one, instead of running (report rewrote data/) */
    {"lab", "report --bogus", 2,
        "lab: report: unexpected argument '--bogus' (report takes no arguments; see ./lab help)", 0},
    {"lab", "build --bogus", 2, "lab: build: unexpected argument '--bogus' (build takes no arguments; see ./lab help)",
        0},
    {"lab", "list --bogus", 2, "lab: list: unexpected argument '--bogus' (list takes no arguments; see ./lab help)", 0},
    {"lab", "setup --x", 2, "lab: setup: unexpected argument '--x' (setup takes no arguments; see ./lab help)", 0},
    {"lab", "help me", 2, "lab: help: unexpected argument 'me' (help takes no arguments; see ./lab help)", 0},
    {"lab", "list", 0, "  formats            The number formats, value by value", 0},
    /* run: the experiment's name suggested; --out without a value is the program's own complaint */
    {"lab", "run", 2, "lab: run: name an experiment (./lab list)", 0},
    {"lab", "run argmax_flp", 2,
        "lab: unknown experiment 'argmax_flp' (did you mean 'argmax_flip'? accepted: "
        "formats, formats_relerr, sum_order_perms, sum_order, matmul_drift, matmul_drift_splitk, batch_invariance, "
        "batch_invariance_cost, argmax_flip, argmax_flip_realistic, argmax_flip_mitigations, sampling_flip, tc_conformance, "
        "gpu_generations, gpu_generations_greedy, softmax_drift, attention_drift, kv_cache, kv_cache_chunked, determinism, "
        "greedy_divergence, allreduce_order, layer_drift, real_gaps, deployments, speculative, forecast)",
        0},
    {"lab", "run formats --out", 2, "formats: --out: needs a value (accepted: --out DIR or --out=DIR)", 0},
    {"lab", "run formats --out=", 2, "formats: --out: empty directory name", 0},
    {"lab", "run formats --version", 0, "formats (driftlab " DRIFT_VERSION ")", 0},
    {"lab", "run formats --bogus", 2,
        "formats: unknown option '--bogus' (accepted: --seed, --profile, --out, --formats, --backend, --threads, --quiet, --help, --version, --values)",
        0},
    /* options of the lab's own commands; bench and fuzz lists grow, so only their start is fixed */
    {"lab", "test --lnog", 2,
        "lab: test: unknown argument '--lnog' (did you mean '--long'? accepted: --long, --sanitize)", 0},
    {"lab", "plot formats --data", 2, "lab: plot: --data: needs a value (accepted: --data DIR or --data=DIR)", 0},
    {"lab", "plot formats --dta x", 2, "lab: plot: unknown argument '--dta' (did you mean '--data'? accepted: --data)",
        0},
    {"lab", "bench nope", 2, "lab: bench: unknown benchmark 'nope' (accepted: ", 1},
    {"lab", "calc", 2, "usage: drift-calc COMMAND [options]   (options as --option VALUE or --option=VALUE)", 0},
    {"lab", "calc bogus", 2,
        "drift-calc: unknown command 'bogus' (accepted: round, sum, dot, exact, argmax, gaps, errlaw, forecast, cards, env, help)",
        0},
    {"lab", "calc --version", 0, "drift-calc (driftlab " DRIFT_VERSION ")", 0},
    {"lab", "fuzz", 2, "lab: fuzz: usage ./lab fuzz TARGET [SECONDS] (accepted targets: ", 1},
    /* one parser: --help, --version, -h; --opt=value; a flag given a value; the nearest option */
    {"formats", "--version", 0, "formats (driftlab " DRIFT_VERSION ")", 0},
    {"formats", "--help", 0, "usage: formats [options]   (each as --option VALUE or --option=VALUE)", 0},
    {"formats", "-h", 0, "usage: formats [options]   (each as --option VALUE or --option=VALUE)", 0},
    {"formats", "--k 3", 2,
        "formats: unknown option '--k' (accepted: --seed, --profile, --out, --formats, --backend, --threads, --quiet, --help, --version, --values)",
        0},
    {"formats_relerr", "--sample 3", 2,
        "formats_relerr: unknown option '--sample' (did you mean '--samples'? accepted: "
        "--seed, --profile, --out, --formats, --backend, --threads, --quiet, --help, --version, --samples)",
        0},
    {"formats_relerr", "--samples", 2,
        "formats_relerr: --samples: needs a value (accepted: --samples N or --samples=N)", 0},
    {"formats_relerr", "--samples=0", 2, "formats_relerr: --samples: 0 is out of range (accepted: 1..10000000)", 0},
    {"formats", "--seed=3 --profile=fast", 2,
        "formats: --profile: unknown value 'fast' (accepted: quick, default, full)", 0},
    {"formats", "--quiet=1", 2, "formats: --quiet takes no value (found '--quiet=1')", 0},
    {"formats", "--help=1", 2, "formats: --help takes no value (found '--help=1')", 0},
    /* formats by any of their names, in any case: an alias and its canonical name are one format,
     * so naming both is 'given twice' (the alias table of lib/core/format.c, checked from outside) */
    {"formats", "--formats bfloat16,bf16", 2, "formats: --formats: 'bf16' given twice", 0},
    {"formats", "--formats BF16,bf16", 2, "formats: --formats: 'bf16' given twice", 0},
    {"formats", "--formats half,FP16", 2, "formats: --formats: 'FP16' given twice", 0},
    {"formats", "--formats float16,float32,single", 2, "formats: --formats: 'single' given twice", 0},
    {"formats", "--formats=fp8_e4m3fn,e4m3", 2, "formats: --formats: 'e4m3' given twice", 0},
    {"formats", "--formats fp8_e5m2,E5M2", 2, "formats: --formats: 'E5M2' given twice", 0},
    {"formats", "--formats float64,double", 2, "formats: --formats: 'double' given twice", 0},
    {"formats", "--formats tf32,TF32", 2, "formats: --formats: 'TF32' given twice", 0},
    {"formats", "--formats bf61", 2,
        "formats: --formats: unknown format 'bf61' (did you mean 'bf16'? accepted: "
        "fp64, fp32, tf32, fp16, bf16, fp8e4m3, fp8e5m2, in any case, or PyTorch's names bfloat16, float16, half, float32, float64, float8_e4m3fn, float8_e5m2)",
        0},
    {"formats", "--formats fp8", 2,
        "formats: --formats: unknown format 'fp8' (accepted: fp64, fp32, tf32, fp16, bf16, fp8e4m3, fp8e5m2, in any case, "
        "or PyTorch's names bfloat16, float16, half, float32, float64, float8_e4m3fn, float8_e5m2)",
        0},
    /* the common options in both spellings; --backend gpu is told the name cuda, not 'did you mean cpu' */
    {"formats", "stray", 2, "formats: unexpected argument 'stray' (options start with --; see --help)", 0},
    {"formats", "--out=", 2, "formats: --out: empty directory name", 0},
    {"formats", "--seed --quiet", 2, "formats: --seed: needs a value (accepted: --seed N or --seed=N)", 0},
    {"formats", "--threads=0", 2,
        "formats: --threads: '0' is not a thread count (accepted: 1..256, 4 per core on this machine)", 0},
    {"formats", "--backend=cuda", 2, "formats: --backend: formats runs on the CPU only (accepted: auto, cpu)", 0},
    {"sum_order", "--backend gpu", 2,
        "sum_order: --backend: unknown value 'gpu' (the GPU backend is called cuda; accepted: auto, cpu, cuda)", 0},
    {"sum_order", "--backend=cpus", 2,
        "sum_order: --backend: unknown value 'cpus' (did you mean 'cpu'? accepted: auto, cpu, cuda)", 0},
    {"sum_order", "--orders tc:h100", 2,
        "sum_order: --orders: tc orders are tensor-core dot products, not sums (accepted: "
        "seq, rev, pairwise, blocked:B, splitk:S[:tree], warp:W, kahan, neumaier, random:SEED)",
        0},
    {"matmul_drift", "--k 64", 2,
        "matmul_drift: unknown option '--k' (did you mean '--K'? accepted: "
        "--seed, --profile, --out, --formats, --backend, --threads, --quiet, --help, --version, --kernels, --accs, --dists, --K, --M, --N)",
        0},
    /* cards wherever a device or a tc: model is asked for (lib/ops/cards.h): tc:RTX4090 is tc:ada */
    {"argmax_flip", "--device RTX4090 --formats fp8e4m3", 2,
        "argmax_flip: --formats: 'fp8e4m3' is not an LM head input format here (accepted: bf16, fp16, tf32, fp32)", 0},
    {"argmax_flip", "--device z80", 2,
        "argmax_flip: --device: unknown device 'z80' (accepted: a card of ./lab calc cards)", 0},
    {"argmax_flip", "--orders tc:RTX4090,tc:ada", 2,
        "argmax_flip: --orders: 'tc:ada' given twice ('tc:RTX4090' is the same order)", 0},
    {"argmax_flip", "--orders=tc:h100,tc:H100-SXM", 2,
        "argmax_flip: --orders: 'tc:H100-SXM' given twice ('tc:h100' is the same order)", 0},
    {"argmax_flip", "--orders tc:b300", 2,
        "argmax_flip: --orders: unknown tensor-core model or card 'b300' in 'tc:b300' (did you mean 'b200'? accepted: " TC_NAMES
        ")",
        0},
    {"batch_invariance", "--device=A100 --N 0", 2, "batch_invariance: --N: 0 is out of range (accepted: 1..65536)", 0},
    /* a GPU experiment without a device: exit 77 (skipped), after its own option checks */
    {"determinism", "--runs 1", 2, "determinism: --runs: 1 is out of range (accepted: 2..1000)", 0},
    {"determinism", "--backend cpu", 77, "determinism: skipped: needs a CUDA device (", 1},
    /* the calculator: commands, options, shapes (H (2, 64), W (100, 64) and its transpose (64, 100)) */
    {"drift-calc", "", 2, "usage: drift-calc COMMAND [options]   (options as --option VALUE or --option=VALUE)", 0},
    {"drift-calc", "--version", 0, "drift-calc (driftlab " DRIFT_VERSION ")", 0},
    {"drift-sweep", "--version", 0, "drift-sweep (driftlab " DRIFT_VERSION ")", 0},
    {"drift-manifest", "--version", 0, "drift-manifest (driftlab " DRIFT_VERSION ")", 0},
    {"drift-manifest", "--help", 0, "usage: drift-manifest check|recover DIR [EXPERIMENT]", 0},
    {"drift-generate", "--version", 0, "drift-generate (driftlab " DRIFT_VERSION ")", 0},
    /* benchmarks: the one syntax too (--version was a round count, 5x was 5, --rep was refused without a hint) */
    {"lab", "bench round --version", 0, "bench_round (driftlab " DRIFT_VERSION ")", 0},
    {"bench_gemm", "--help", 0,
        "usage: bench_gemm [--threads N] [--reps N] [--sizes N,N,...] [--tc-size N]   (each 1..100000, at most 8 sizes; 1, 5, 512,1024, 256)",
        0},
    {"bench_gemm", "--rep 3", 2,
        "bench_gemm: unknown option '--rep' (did you mean '--reps'? accepted: --threads, --reps, --sizes, --tc-size, --help, --version)",
        0},
    {"bench_gemm", "--sizes=64,,128", 2,
        "bench_gemm: --sizes: an empty item in '64,,128' (accepted: comma-separated integers in 1..100000)", 0},
    {"bench_round", "5x", 2, "bench_round: ROUNDS: expected an integer in 1..1000, found '5x'", 0},
    {"bench_threads", "1 matmul_drift fast", 2,
        "bench_threads: PROFILE: unknown value 'fast' (accepted: quick, default, full)", 0},
    {"drift-generate", "--tokns 3", 2, "drift-generate: unknown option '--tokns' (did you mean '--tokens'? see --help)",
        0},
    {"drift-generate", "--json=1", 2, "drift-generate: --json takes no value (found '--json=1')", 0},
    /* a card where the decoder's recipe asks for a tensor-core model: accepted (the --tokens
     * refusal after it shows the recipe went through), an unknown name refused with the nearest */
    {"drift-generate", "--recipe bf16/tc:rtx4090/fp32/bf16 --tokens 0", 2,
        "drift-generate: --tokens: expected an integer in 1 .. 1048576, found '0'", 0},
    {"drift-generate", "--recipe-lmhead BF16/tc:RTX-4090/fp32 --tokens 0", 2,
        "drift-generate: --tokens: expected an integer in 1 .. 1048576, found '0'", 0},
    {"drift-generate", "--recipe bf16/tc:rtx490/fp32/bf16", 2,
        "drift-generate: --recipe: unknown tensor-core model or card 'rtx490' in 'bf16/tc:rtx490/fp32/bf16' (did you mean 'rtx4090'? accepted: " TC_NAMES
        ")",
        0},
    {"drift-generate", "--recipe-mlp-up fp16/tc:H10/fp32", 2,
        "drift-generate: --recipe-mlp-up: unknown tensor-core model or card 'H10' in 'fp16/tc:H10/fp32' (did you mean 'h100'? accepted: " TC_NAMES
        ")",
        0},
    {"drift-generate", "--recipe bf16/tc:tpu/fp32/bf16", 2,
        "drift-generate: --recipe: unknown tensor-core model or card 'tpu' in 'bf16/tc:tpu/fp32/bf16' (accepted: " TC_NAMES
        ")",
        0},
    {"lab", "generate --recipe bf16/tc:rtx490/fp32/bf16", 2,
        "drift-generate: --recipe: unknown tensor-core model or card 'rtx490' in 'bf16/tc:rtx490/fp32/bf16' (did you mean 'rtx4090'? accepted: " TC_NAMES
        ")",
        0},
    {"drift-calc", "dot --format bf16 --order tc:rtx490 H.npy H.npy", 2,
        "drift-calc dot: --order: unknown tensor-core model or card 'rtx490' in 'tc:rtx490' (did you mean 'rtx4090'? accepted: " TC_NAMES
        ")",
        0},
    {"drift-calc", "--help", 0, "usage: drift-calc COMMAND [options]   (options as --option VALUE or --option=VALUE)",
        0},
    {"drift-calc", "help", 0, "usage: drift-calc COMMAND [options]   (options as --option VALUE or --option=VALUE)", 0},
    {"drift-calc", "agrmax", 2,
        "drift-calc: unknown command 'agrmax' (did you mean 'argmax'? accepted: round, sum, dot, exact, argmax, gaps, errlaw, forecast, cards, env, help)",
        0},
    {"drift-calc", "argmax_flp", 2,
        "drift-calc: unknown command 'argmax_flp' (accepted: round, sum, dot, exact, argmax, gaps, errlaw, forecast, cards, env, help)",
        0},
    {"drift-calc", "argmax --version", 0, "drift-calc argmax (driftlab " DRIFT_VERSION ")", 0},
    {"drift-calc", "argmax --fromat fp32", 2,
        "drift-calc argmax: unknown option '--fromat' (did you mean '--format'? accepted: --format, --order, --acc, --logits, --help, --version)",
        0},
    {"drift-calc", "argmax --format=fp32 --order=seq H.npy W.npy", 0,
        "format,order,acc,logits,K,V,exact_top1,exact_top2,exact_v1_hex,exact_v1,exact_v2_hex,exact_v2,exact_gap_hex,exact_gap,tie,computed_top1,computed_top2,"
        "computed_v1_hex,computed_v1,computed_v2_hex,computed_v2,flipped",
        0},
    {"drift-calc", "argmax --format fp32 --order seq H.npy Wt.npy", 2,
        "drift-calc argmax: FILE_W: Wt.npy has shape (64, 100), H H.npy has shape (2, 64): W must be (V, 64), one row per token (this one is (K, V): save its transpose, W.T)",
        0},
    {"drift-calc", "argmax --format fp32 --order seq H3.npy W.npy", 2,
        "drift-calc argmax: FILE_H: H3.npy has shape (2, 2, 16) (accepted: (K,) one hidden state, or (N, K) N of them; W W.npy is (100, 64))",
        0},
    {"drift-calc", "argmax --format fp32 --order seq H.npy", 2,
        "drift-calc argmax: expected two files FILE_H FILE_W, got 1", 0},
    {"drift-calc", "argmax --format bfloat16 --order tc:H100 H.npy W.npy", 0,
        "format,order,acc,logits,K,V,exact_top1,exact_top2,exact_v1_hex,exact_v1,exact_v2_hex,exact_v2,exact_gap_hex,exact_gap,tie,computed_top1,computed_top2,"
        "computed_v1_hex,computed_v1,computed_v2_hex,computed_v2,flipped",
        0},
    {"drift-calc", "round --format=Half 1", 0, "input,format,mode,result_hex,result,bits,class", 0},
    {"drift-calc", "round --format fp16 --mode rn 1", 2,
        "drift-calc round: --mode: unknown value 'rn' (did you mean 'rne'? accepted: rne, rz, rna, ru, rd, sr)", 0},
    {"drift-calc", "round --format fp16 --subnormal keep 1", 2,
        "drift-calc round: unknown option '--subnormal' (did you mean '--subnormals'? accepted: --format, --mode, --subnormals, --overflow, --seed, --help, --version)",
        0},
    {"drift-calc", "round --format fp16 --overflow=saturate -70000", 0,
        "input,format,mode,result_hex,result,bits,class", 0},
    {"drift-calc", "sum --format fp32 --order seq --fma x", 2,
        "drift-calc sum: unknown option '--fma' (accepted: --format, --order, --acc, --help, --version)", 0},
    {"drift-calc", "dot --help", 0,
        "usage: drift-calc dot --format F --order SPEC [--acc A] [--fma|--nofma] [--c C] FILE_A FILE_B", 0},
    {"drift-calc", "gaps --help", 0, "usage: drift-calc gaps LOGITS", 0},
    {"drift-calc", "gaps W.npy", 0,
        "row,V,tie,top1,top2,v1_hex,v1,v2_hex,v2,gap_hex,gap,ulp_fp32,gap_ulps_fp32,can_flip_fp32,flips_fp32,ulp_bf16,gap_ulps_bf16,"
        "can_flip_bf16,flips_bf16,ulp_fp16,gap_ulps_fp16,can_flip_fp16,flips_fp16",
        0},
    {"drift-calc", "gaps H3.npy", 2,
        "drift-calc gaps: LOGITS: H3.npy has shape (2, 2, 16) (accepted: (N, V), N rows of V logits, or (V,))", 0},
    {"drift-calc", "gaps", 2,
        "drift-calc gaps: expected one LOGITS file (or - for stdin), got none (usage: gaps LOGITS)", 0},
    {"drift-calc", "cards", 0, "card,product,tc_model,multiprocessors,unit,source", 0},
    {"drift-calc", "cards x", 2,
        "drift-calc cards: unexpected argument 'x' (this command takes no arguments; see --help)", 0},
    {"drift-calc", "env --bogus", 2, "drift-calc env: unknown option '--bogus' (accepted: --help, --version)", 0},
    {"drift-calc", "exact --nope", 2, "drift-calc exact: unknown option '--nope' (accepted: --help, --version)", 0},
};
#define NLINES (int)(sizeof LINES / sizeof LINES[0])

static char dir[64];

/* DIR/name: a version-1.0 .npy of float32 values, all equal to v, of the given shape text. */
static void write_npy(const char *name, const char *shape, size_t count, float v)
{
    char path[128], hdr[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    size_t len = (size_t)snprintf(hdr, sizeof hdr, "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }", shape);
    while ((10 + len + 1) % 64) hdr[len++] = ' ';
    hdr[len++] = '\n';
    FILE *fp = fopen(path, "wb");
    cr_assert(fp);
    fwrite("\x93NUMPY\x01\x00", 1, 8, fp);
    fputc((int)(len & 0xff), fp);
    fputc((int)(len >> 8), fp);
    fwrite(hdr, 1, len, fp);
    for (size_t i = 0; i < count; i++) fwrite(&v, sizeof v, 1, fp);
    fclose(fp);
}

static void setup(void)
{
    tmpdir_make(dir, sizeof dir, "drift_cli_table");
    write_npy("H.npy", "(2, 64)", 128, 1.0f);
    write_npy("W.npy", "(100, 64)", 6400, 0.5f);
    write_npy("Wt.npy", "(64, 100)", 6400, 0.5f);
    write_npy("H3.npy", "(2, 2, 16)", 64, 1.0f);
}

static void teardown(void) { tmpdir_remove(dir); }

Test(cli_table, every_line_has_its_status_and_first_line, .init = setup, .fini = teardown, .timeout = 300)
{
    cr_assert_geq(NLINES, 60, "the table holds at least 60 command lines (has %d)", NLINES);
    static char out[65536];
    for (int i = 0; i < NLINES; i++) {
        const line_t *l = &LINES[i];
        char cmd[2048]; /* the subshell's stderr is its stdout: run_capture's file gets both, in order */
        if (!strcmp(l->prog, "lab"))
            snprintf(cmd, sizeof cmd,
                "(exec 2>&1; cd '%s' && DRIFT_BUILD_DIR='%s/..' exec timeout 20 '%s/lab' %s </dev/null)", dir,
                DRIFT_BIN_DIR, DRIFT_SOURCE_DIR, l->args);
        else
            snprintf(cmd, sizeof cmd, "(exec 2>&1; cd '%s' && exec timeout 20 '%s/%s' %s </dev/null)", dir,
                DRIFT_BIN_DIR, l->prog, l->args);
        int st = run_capture(cmd, out, sizeof out, NULL, 0);
        char *nl = strchr(out, '\n');
        if (nl) *nl = 0;
        cr_expect_eq(st, l->status, "line %d: %s %s: exit %d, want %d (%s)", i, l->prog, l->args, st, l->status, out);
        if (l->prefix)
            cr_expect(!strncmp(out, l->first, strlen(l->first)),
                "line %d: %s %s: first line\n  '%s'\ndoes not start with\n  '%s'", i, l->prog, l->args, out, l->first);
        else
            cr_expect_str_eq(
                out, l->first, "line %d: %s %s: first line\n  '%s'\nwant\n  '%s'", i, l->prog, l->args, out, l->first);
        /* a refusal is one line, nothing after it (the help is the exception: ./lab and
         * drift-calc alone print their usage and fail) */
        if (l->status == 2 && nl && strncmp(l->first, "usage:", 6))
            cr_expect_eq(
                nl[1], 0, "line %d: %s %s: more than one line after the refusal: %s", i, l->prog, l->args, nl + 1);
    }
}

/* Every program the build makes answers --version with "NAME (driftlab VERSION)" and exit 0:
 * listed from the build directory, so a new program is never missed. Tests and fuzz targets
 * are not programs a user runs; the CUDA build's conformance checks (check_*) and GPU
 * benchmarks (bench_gpu_*) are run by cuda/check.sh on a device and are not held to it yet. */
Test(cli_table, every_program_answers_version, .timeout = 300)
{
    DIR *d = opendir(DRIFT_BIN_DIR);
    cr_assert(d, "cannot list %s", DRIFT_BIN_DIR);
    int n = 0;
    static char out[4096];
    for (struct dirent *e; (e = readdir(d));) {
        const char *name = e->d_name;
        if (name[0] == '.' || !strncmp(name, "test_", 5) || !strncmp(name, "long_", 5) || !strncmp(name, "fuzz_", 5) ||
            !strncmp(name, "check_", 6) || !strncmp(name, "bench_gpu_", 10))
            continue;
        char cmd[1024], want[320];
        snprintf(cmd, sizeof cmd, "(exec 2>&1; cd /tmp && exec timeout 20 '%s/%s' --version </dev/null)", DRIFT_BIN_DIR,
            name);
        int st = run_capture(cmd, out, sizeof out, NULL, 0);
        snprintf(want, sizeof want, "%s (driftlab %s)\n", name, DRIFT_VERSION);
        cr_expect_eq(st, 0, "%s --version: exit %d (%s)", name, st, out);
        cr_expect_str_eq(out, want, "%s --version", name);
        n++;
    }
    closedir(d);
    cr_assert_geq(n, 30, "only %d programs in %s", n, DRIFT_BIN_DIR);
}
