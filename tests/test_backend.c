/* test_backend.c — the recipe dispatcher's backend routing (backend.h, dispatch.h) and
 * --backend in every experiment, without a device.
 *
 * The dispatcher is tested against a fake accelerator registered here: a table whose hooks
 * compute with the CPU kernels themselves (so a correct device is "the CPU twin") and can be
 * told to flip one bit, refuse (EUNSUPPORTED) or fail. What must hold, each case below:
 *   - a twin kernel's device result is compared bit for bit with the CPU: equal passes,
 *     one flipped bit is a one-line mismatch naming the kernel and the first differing element;
 *   - EUNSUPPORTED from the device computes on the CPU and is counted as such;
 *   - bad shapes and recipes give exactly the CPU path's codes, and the device is not called;
 *   - tensor-core and device-only paths are measured (no twin), not checked.
 * The programs: every registered experiment refuses --backend cuda without a device (exit 2,
 * one line on stderr, no file), and --backend auto on a machine without one writes the same
 * data as --backend cpu (byte for byte apart from the lines naming the run: date, argv, the
 * .md's Reproduce line; wall-clock numbers, which are not data). With a
 * device those two tests print "skipped: CUDA device present" (cuda/check.sh covers it). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "dispatch.h"
#include "dispatch_attention.h"
#include "drift.h"
#include "gemm.h"
#include "order.h"
#include "recipe.h"
#include "support.h"

/* ---- the fake accelerator ------------------------------------------------------------------- */

static struct {
    int available;  /* what available() answers */
    int refuse;     /* every hook returns this code when nonzero */
    long flip;      /* index of the output whose lowest bit is flipped; -1: none */
    int calls;      /* hook calls */
    int mismatches; /* handler calls */
    char line[512]; /* the handler's line */
} fake = {1, 0, -1, 0, 0, ""};

static void flip_bit(double *x)
{
    uint64_t u;
    memcpy(&u, x, sizeof u);
    u ^= 1;
    memcpy(x, &u, sizeof u);
}

static int fake_available(char *err, size_t errsz)
{
    if (!fake.available) snprintf(err, errsz, "fake: no device");
    return fake.available;
}

static void fake_describe(char *buf, size_t size) { snprintf(buf, size, "fake device 1.0"); }

static int after(int rc, double *out, size_t n)
{
    if (!rc && fake.flip >= 0 && (size_t)fake.flip < n) flip_bit(&out[fake.flip]);
    return rc;
}

static int fake_gemm(double *C, const double *A, const double *B, size_t M, size_t N, size_t K,
    const drift_gemm_kernel_t *k, const drift_gemm_opts_t *o, char *ran, size_t ran_size)
{
    fake.calls++;
    if (fake.refuse) return fake.refuse;
    snprintf(ran, ran_size, "fake");
    return after(drift_gemm(C, A, B, M, N, K, k, o), C, M * N);
}

static int fake_gemm_spec(double *C, const double *A, const double *B, size_t M, size_t N, size_t K, const char *spec,
    const drift_gemm_opts_t *o, char *ran, size_t ran_size)
{
    fake.calls++;
    drift_gemm_kernel_t k;
    if (strcmp(spec, "splitk:4:atomic")) return DRIFT_EUNSUPPORTED;
    cr_assert_eq(drift_gemm_kernel_parse(&k, "splitk:4"), 0);
    snprintf(ran, ran_size, "fake atomic");
    return drift_gemm(C, A, B, M, N, K, &k, o);
}

static int fake_sum(
    double *out, const double *x, size_t n, size_t batch, const drift_order_t *o, const drift_acc_t *acc)
{
    fake.calls++;
    if (fake.refuse) return fake.refuse;
    for (size_t r = 0; r < batch; r++) {
        int rc = drift_sum(&out[r], x + r * n, n, o, acc);
        if (rc) return rc;
    }
    return after(0, out, batch);
}

static int fake_dot(double *out, const double *a, const double *b, size_t n, size_t batch, const drift_order_t *o,
    const drift_acc_t *acc)
{
    fake.calls++;
    if (fake.refuse) return fake.refuse;
    for (size_t r = 0; r < batch; r++) {
        int rc = drift_dot(&out[r], a + r * n, b + r * n, n, NULL, o, acc);
        if (rc) return rc;
    }
    return after(0, out, batch);
}

static int fake_round(double *out, const double *in, size_t n, drift_format_t f, const drift_round_opts_t *o)
{
    fake.calls++;
    if (fake.refuse) return fake.refuse;
    for (size_t i = 0; i < n; i++) out[i] = drift_round(in[i], f, o, 0);
    return after(0, out, n);
}

static const char *fake_message(void) { return "fake failure"; }

static int fake_attention(double *out, const double *q, size_t nq, size_t q_pos, const drift_kv_cache_t *kv,
    const unsigned char *key_mask, const drift_attn_opts_t *o)
{
    fake.calls++;
    if (fake.refuse) return fake.refuse;
    int rc = drift_attention(out, q, nq, q_pos, kv, key_mask, o, NULL, 0);
    return after(rc, out, nq * (size_t)o->heads * (size_t)o->head_dim);
}

static const drift_backend_ops_t FAKE = {.name = "fake",
    .available = fake_available,
    .describe = fake_describe,
    .gemm = fake_gemm,
    .gemm_spec = fake_gemm_spec,
    .sum = fake_sum,
    .dot = fake_dot,
    .round = fake_round,
    .attention = fake_attention,
    .message = fake_message};

static void on_mismatch(const char *line)
{
    fake.mismatches++;
    snprintf(fake.line, sizeof fake.line, "%s", line);
}

static void use_fake(void)
{
    drift_backend_register(&FAKE);
    cr_assert_eq(drift_backend_use(1, NULL, 0), 0);
    drift_backend_on_mismatch(on_mismatch);
}

static drift_recipe_t recipe(const char *s)
{
    drift_recipe_t r;
    cr_assert_eq(drift_recipe_parse(&r, s, NULL, 0), 0, "recipe %s", s);
    return r;
}

/* A (3 x 5) and B (5 x 4): small integers and halves, every product exact in fp32 */
static void inputs(double *A, double *B)
{
    for (int i = 0; i < 15; i++) A[i] = (i % 7) - 3 + 0.5 * (i % 2);
    for (int i = 0; i < 20; i++) B[i] = (i % 5) - 2 + 0.25 * (i % 3);
}

/* ---- selection ------------------------------------------------------------------------------ */

Test(backend, nothing_registered_is_a_reason_not_a_crash)
{
    drift_backend_register(NULL);
    char why[256] = "";
    cr_assert_eq(drift_backend_use(1, why, sizeof why), DRIFT_EUNSUPPORTED);
    cr_expect(strstr(why, "no CUDA backend"), "why: %s", why);
    cr_expect_eq(drift_backend_active(), 0);
}

Test(backend, no_device_is_a_reason)
{
    fake.available = 0;
    drift_backend_register(&FAKE);
    char why[256] = "";
    cr_assert_eq(drift_backend_use(1, why, sizeof why), DRIFT_EUNSUPPORTED);
    cr_expect_str_eq(why, "fake: no device");
    cr_expect_eq(drift_backend_active(), 0);
}

/* ---- twin check ----------------------------------------------------------------------------- */

Test(backend, twin_gemm_agrees_bit_for_bit)
{
    use_fake();
    double A[15], B[20], C[12], ref[12];
    inputs(A, B);
    drift_recipe_t r = recipe("fp32/splitk:2/fp32/fp32");
    cr_assert_eq(drift_recipe_gemm(C, A, B, 3, 4, 5, &r, 1, 0), 0);
    cr_assert_eq(drift_backend_use(0, NULL, 0), 0);
    cr_assert_eq(drift_recipe_gemm(ref, A, B, 3, 4, 5, &r, 1, 0), 0);
    cr_expect_eq(memcmp(C, ref, sizeof C), 0);
    cr_expect_eq(fake.calls, 1);
    drift_backend_stats_t s = drift_backend_stats();
    cr_expect_eq(s.checked, 1);
    cr_expect_eq(fake.mismatches, 0);
}

Test(backend, one_flipped_bit_is_a_one_line_mismatch_naming_kernel_and_element)
{
    use_fake();
    fake.flip = 6; /* row 1, column 2 of a 3 x 4 result */
    double A[15], B[20], C[12];
    inputs(A, B);
    drift_recipe_t r = recipe("fp32/seq/fp32/fp32");
    cr_assert_eq(drift_recipe_gemm(C, A, B, 3, 4, 5, &r, 1, 0), DRIFT_ERANGE);
    cr_expect_eq(fake.mismatches, 1);
    cr_expect(strstr(fake.line, "gemm naive fp32->fp32"), "line: %s", fake.line);
    cr_expect(strstr(fake.line, "[1,2]"), "line: %s", fake.line);
    cr_expect(!strchr(fake.line, '\n'), "one line: %s", fake.line);
    cr_expect_str_eq(drift_backend_message(), fake.line);
}

Test(backend, dot_and_sum_are_checked_too)
{
    use_fake();
    double a[5] = {1, 0x1p-30, -1, 3, 0.1}, b[5] = {1, 1, 1, 0.5, 3}, y;
    drift_recipe_t r = recipe("fp64/pairwise/fp32/fp32");
    cr_assert_eq(drift_recipe_dot(&y, a, b, 5, NULL, &r), 0);
    cr_assert_eq(drift_recipe_sum(&y, a, 5, &r), 0);
    cr_expect_eq(fake.calls, 2);
    fake.flip = 0;
    cr_expect_eq(drift_recipe_sum(&y, a, 5, &r), DRIFT_ERANGE);
    cr_expect(strstr(fake.line, "sum fp64/pairwise/fp32/fp32"), "line: %s", fake.line);
    cr_expect_eq(drift_recipe_dot(&y, a, b, 5, NULL, &r), DRIFT_ERANGE);
    cr_expect(strstr(fake.line, "dot fp64/pairwise/fp32/fp32"), "line: %s", fake.line);
}

/* attention (dispatch_attention.h): decode and prefill calls checked, a flipped bit named by
 * kernel and [query-head row, column] */
Test(backend, attention_is_checked_call_by_call)
{
    use_fake();
    enum { H = 2, D = 4, N = 6 };
    double q[N * H * D], k[N * D], v[N * D], out[N * H * D], ref[N * H * D];
    for (int i = 0; i < N * H * D; i++) q[i] = (i % 5) - 2 + 0.25 * (i % 3);
    for (int i = 0; i < N * D; i++) k[i] = (i % 3) - 1 + 0.5 * (i % 2), v[i] = (i % 4) - 1.5;
    drift_attn_opts_t o = drift_attn_opts(H, 1, D, DRIFT_BF16);
    cr_assert_eq(drift_attn_kernel_parse(&o.kernel, "flash:4,2", NULL, 0), 0);
    drift_kv_format_t kf = {DRIFT_KV_FLOAT, DRIFT_BF16};
    cr_assert_eq(drift_dispatch_attention_prefill(out, q, k, v, N, &kf, 4, &o, NULL, 0), 0);
    cr_assert_eq(drift_attention_prefill(ref, q, k, v, N, &kf, 4, &o, NULL, 0), 0);
    cr_expect_eq(memcmp(out, ref, sizeof out), 0);
    cr_expect_eq(fake.calls, 2, "one device call per chunk (4 + 2 tokens)");
    cr_expect_eq(drift_backend_stats().checked, 1, "the prefill is checked as one result");
    drift_kv_cache_t kv;
    cr_assert_eq(drift_kv_init(&kv, 1, D, N, &kf, NULL, 0), 0);
    cr_assert_eq(drift_kv_append(&kv, k, v, N, NULL, 0), 0);
    cr_expect_eq(drift_dispatch_attention_decode(out, q, &kv, &o, NULL, 0), 0);
    fake.flip = 5; /* head 1, column 1 */
    char err[512] = "";
    cr_expect_eq(drift_dispatch_attention_decode(out, q, &kv, &o, err, sizeof err), DRIFT_ERANGE);
    cr_expect_eq(fake.mismatches, 1);
    cr_expect(strstr(fake.line, "attention flash:4,2") && strstr(fake.line, "[1,1]"), "line: %s", fake.line);
    cr_expect_str_eq(err, fake.line);
    fake.flip = -1;
    fake.refuse = DRIFT_EUNSUPPORTED; /* the device has no path: the CPU's result stands, counted */
    cr_expect_eq(drift_dispatch_attention(out, q, 1, N - 1, &kv, NULL, &o, NULL, 0), 0);
    cr_expect_eq(drift_backend_stats().on_cpu, 1);
    fake.refuse = 0;
    o.head_dim = 0; /* bad options: the CPU's code, the device not called */
    int calls = fake.calls;
    cr_expect_eq(drift_dispatch_attention(out, q, 1, N - 1, &kv, NULL, &o, NULL, 0), DRIFT_EINVAL);
    cr_expect_eq(fake.calls, calls);
    drift_kv_free(&kv);
}

Test(backend, conversions_are_checked)
{
    use_fake();
    double in[4] = {1.0 / 3, 65520, -0x1p-30, 2.5}, out[4];
    cr_assert_eq(drift_dispatch_round(out, in, 4, DRIFT_FP16, NULL), 0);
    for (int i = 0; i < 4; i++) cr_expect_eq(out[i], drift_rne(in[i], DRIFT_FP16));
    fake.flip = 3;
    cr_expect_eq(drift_dispatch_round(out, in, 4, DRIFT_FP16, NULL), DRIFT_ERANGE);
    cr_expect(strstr(fake.line, "round to fp16") && strstr(fake.line, "[3]"), "line: %s", fake.line);
}

/* ---- what the device does not take, and what it has no twin for ----------------------------- */

Test(backend, unsupported_on_the_device_runs_on_the_cpu_and_is_counted)
{
    use_fake();
    fake.refuse = DRIFT_EUNSUPPORTED;
    double A[15], B[20], C[12], ref[12];
    inputs(A, B);
    drift_recipe_t r = recipe("fp32/splitk:2:tree/fp32/fp32");
    cr_assert_eq(drift_recipe_gemm(C, A, B, 3, 4, 5, &r, 1, 0), 0);
    cr_assert_eq(drift_backend_use(0, NULL, 0), 0);
    cr_assert_eq(drift_recipe_gemm(ref, A, B, 3, 4, 5, &r, 1, 0), 0);
    cr_expect_eq(memcmp(C, ref, sizeof C), 0);
    drift_backend_stats_t s = drift_backend_stats();
    cr_expect_eq(s.on_cpu, 1);
    cr_expect_eq(s.checked, 0);
}

Test(backend, a_device_failure_is_an_error_with_the_hook_message)
{
    use_fake();
    fake.refuse = DRIFT_EIO;
    double A[15], B[20], C[12];
    inputs(A, B);
    drift_recipe_t r = recipe("fp32/seq/fp32/fp32");
    cr_assert_eq(drift_recipe_gemm(C, A, B, 3, 4, 5, &r, 1, 0), DRIFT_EIO);
    cr_expect(strstr(drift_backend_message(), "fake failure"), "message: %s", drift_backend_message());
}

Test(backend, tensor_cores_are_measured_not_checked)
{
    use_fake();
    fake.flip = 0; /* a "hardware" that differs from the model: no mismatch, it is a measurement */
    double A[15], B[20], C[12];
    inputs(A, B);
    drift_recipe_t r = recipe("bf16/tc:h100/fp32/fp32");
    cr_assert_eq(drift_recipe_gemm(C, A, B, 3, 4, 5, &r, 1, 0), 0);
    cr_expect_eq(fake.mismatches, 0);
    cr_expect_eq(drift_backend_stats().measured, 1);
}

Test(backend, device_only_paths_need_a_device)
{
    double A[15], B[20], C[12];
    inputs(A, B);
    drift_gemm_opts_t o = drift_gemm_opts(DRIFT_FP32, DRIFT_FP32);
    char ran[64] = "";
    drift_backend_register(NULL);
    cr_expect_eq(drift_dispatch_gemm_spec(C, A, B, 3, 4, 5, "cublas", &o, ran, sizeof ran), DRIFT_EUNSUPPORTED);
    use_fake();
    cr_expect_eq(drift_dispatch_gemm_spec(C, A, B, 3, 4, 5, "splitk:4:atomic", &o, ran, sizeof ran), 0);
    cr_expect_str_eq(ran, "fake atomic");
    cr_expect_eq(drift_backend_stats().measured, 1);
}

/* Bad arguments: the codes the CPU path gives for the same call (asked with the backend off),
 * and the device is never reached. */
Test(backend, bad_shapes_and_recipes_give_the_cpu_codes)
{
    double A[15], B[20], C[12];
    inputs(A, B);
    drift_gemm_kernel_t bad = {.family = DRIFT_GEMM_TILED, .bm = 0, .bn = 4, .bk = 4};
    drift_gemm_kernel_t naive = {.family = DRIFT_GEMM_NAIVE};
    drift_gemm_opts_t o = drift_gemm_opts(DRIFT_FP32, DRIFT_FP32), sr = o;
    sr.acc.mode = DRIFT_SR;
    drift_recipe_t r = recipe("fp32/seq/fp32/fp32");
    struct {
        const double *A;
        size_t M;
        const drift_gemm_kernel_t *k;
        const drift_gemm_opts_t *o;
    } cases[] = {{NULL, 3, &naive, &o}, {A, 3, &bad, &o}, {A, 3, &naive, &sr}, {A, (size_t)1 << 62, &naive, &o}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cr_assert_eq(drift_backend_use(0, NULL, 0), 0);
        int cpu =
            cases[i].M > 3 ? DRIFT_ENOMEM : drift_gemm(C, cases[i].A, B, cases[i].M, 4, 5, cases[i].k, cases[i].o);
        cr_assert_neq(cpu, 0, "case %zu is bad input", i);
        use_fake();
        fake.calls = 0;
        if (cases[i].M <= 3)
            cr_expect_eq(
                drift_dispatch_gemm(C, cases[i].A, B, cases[i].M, 4, 5, cases[i].k, cases[i].o), cpu, "case %zu", i);
        cr_expect_eq(fake.calls, 0, "case %zu reached the device", i);
    }
    /* a recipe the CPU refuses: tc without a path for the input */
    drift_recipe_t tc = recipe("fp32/seq/fp32/fp32");
    cr_assert_eq(drift_order_parse(&tc.order, "tc:v100"), 0);
    tc.in = DRIFT_BF16; /* V100 tensor cores take fp16 only */
    cr_assert_eq(drift_backend_use(0, NULL, 0), 0);
    int cpu = drift_recipe_gemm(C, A, B, 3, 4, 5, &tc, 1, 0);
    use_fake();
    fake.calls = 0;
    cr_expect_eq(drift_recipe_gemm(C, A, B, 3, 4, 5, &tc, 1, 0), cpu);
    double y;
    cr_expect_eq(drift_recipe_dot(&y, A, B, 5, NULL, &tc), drift_recipe_check(&tc, NULL, 0));
    cr_expect_eq(fake.calls, 0);
    (void)r;
}

/* ---- the programs --------------------------------------------------------------------------- */

static int device_present(void)
{
    const drift_backend_ops_t *ops = drift_backend_registered();
    char why[256];
    return ops && ops->available && ops->available(why, sizeof why) == 1;
}

/* The registered experiments, from experiments/registry.tsv. */
static int experiments(char names[][64], int max)
{
    FILE *fp = fopen(DRIFT_SOURCE_DIR "/experiments/registry.tsv", "r");
    cr_assert(fp);
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, fp) && n < max) {
        if (line[0] == '#' || line[0] == '\n') continue;
        char *tab = strchr(line, '\t');
        if (!tab) continue;
        *tab = 0;
        snprintf(names[n++], 64, "%.63s", line);
    }
    fclose(fp);
    return n;
}

Test(backend_programs, cuda_without_a_device_is_one_line_exit_2_and_no_file)
{
    if (device_present()) {
        printf("skipped: CUDA device present (cuda/check.sh runs the experiments on it)\n");
        return;
    }
    char names[64][64], dir[64], err[2048];
    int n = experiments(names, 64);
    cr_assert_gt(n, 4);
    for (int i = 0; i < n; i++) {
        tmpdir_make(dir, sizeof dir, "drift_backend");
        char cmd[512];
        snprintf(
            cmd, sizeof cmd, "'%s/%s' --backend cuda --profile quick --out '%s/out'", DRIFT_BIN_DIR, names[i], dir);
        int rc = run_capture(cmd, NULL, 0, err, sizeof err);
        cr_expect_eq(rc, 2, "%s: exit %d", names[i], rc);
        size_t len = strlen(err);
        cr_expect(
            len > 0 && err[len - 1] == '\n' && !memchr(err, '\n', len - 1), "%s: not one line: %s", names[i], err);
        cr_expect(strstr(err, "--backend"), "%s: the line names the option: %s", names[i], err);
        cr_expect_eq(count_entries(dir), 0, "%s: wrote files", names[i]);
        tmpdir_remove(dir);
    }
}

/* Same data apart from what describes the run: the date and argv metadata lines, the .md's
 * "Reproduce:" line (it holds the command, --backend included), and wall-clock measurements:
 * *_timing.csv files and .md numbers marked "(measured ...)" (as tools/compare_runs.sh), and the
 * run's manifest (it records argv and checksums of files whose argv lines differ). */
static void expect_same_files(const char *a, const char *b, const char *exp)
{
    const char *script = tmpfile_with(0,
        "set -o pipefail\n"
        "strip() { grep -v -e '^# date:' -e '^# argv:' -e '^Reproduce:' \"$1\" |"
        " sed -E 's/[0-9.eE+-]+ [(]measured/(measured/g'; }\n"
        "cd \"$1\" || exit 3\n"
        "for f in *; do\n"
        "  case $f in *_timing.csv | *.manifest) continue ;; esac\n"
        "  [ -s \"$f\" ] || echo \"empty: $f\"\n"
        "  cmp -s <(strip \"$f\") <(strip \"$2/$f\") || { echo \"differs: $f\"; diff <(strip \"$f\") <(strip \"$2/$f\") | head -4; }\n"
        "done\n"
        "[ \"$(ls | wc -l)\" = \"$(ls \"$2\" | wc -l)\" ] || echo 'different file sets'\n");
    char cmd[768], out[4096];
    snprintf(cmd, sizeof cmd, "bash '%s' '%s' '%s'", script, a, b);
    cr_assert_eq(run_stdout(cmd, out, sizeof out), 0);
    cr_expect_str_eq(out, "", "%s: --backend auto and cpu differ: %s", exp, out);
    remove(script);
}

Test(backend_programs, auto_without_a_device_writes_the_cpu_data)
{
    if (device_present()) {
        printf("skipped: CUDA device present (auto runs on it)\n");
        return;
    }
    /* the experiments that compute through the dispatcher (the others refuse cuda outright):
     * GEMMs, softmax, attention and the decoder's GEMMs and attention (lib/llm/model.c) */
    /* small sizes: the point is the backend's path, not the science (this suite also runs
     * under ASan + UBSan) */
    static const char *const EXPS[][2] = {
        {"matmul_drift", "--K 64 --M 4 --N 4 --kernels naive,splitk:4,tc:h100 --formats fp32,bf16"},
        {"matmul_drift_splitk", "--M 4 --N 4 --splitk-K 128 --formats fp32,bf16"},
        {"batch_invariance", "--K 256 --N 64 --M-max 64"}, {"argmax_flip", "--K 256 --V 1000 --reps 2 --ties 2"},
        {"argmax_flip_realistic", "--K 256 --V 1000 --rows 8 --reps 2"},
        {"argmax_flip_mitigations", "--K 256 --V 1000 --rows 8 --reps 2"},
        {"sampling_flip", "--K 128 --V 512 --rows 4 --draws 8 --ties 2"},
        {"attention_drift",
            "--L 24 --bc 8 --heads 2 --kv-heads 1 --dim 8 --check-rows 2 --decode-len 24 --pad 3 --formats fp32,bf16"},
        {"kv_cache", "--kv-formats fp32,bf16 --heads 2 --kv-heads 1 --dim 8 --queries 2 --vocab 32"},
        {"kv_cache_chunked", "--kv-formats fp32,bf16 --heads 2 --kv-heads 1 --dim 8 --prefill-len 16 --chunks 4"},
        {"greedy_divergence", "--requests 2 --tokens 3 --batch-max 2 --configs vendor-fp32"},
        {"layer_drift", "--layers 1 --tokens 2"}, {"real_gaps", "--sequences 1 --tokens 2"},
        {"allreduce_order", "--ranks-max 2 --elements 16 --tokens 2"},
        {"speculative", "--prompts 1 --tokens 2 --draft 1"}};
    char dir[64], a[160], b[160], err[2048];
    for (size_t i = 0; i < sizeof EXPS / sizeof *EXPS; i++) {
        tmpdir_make(dir, sizeof dir, "drift_backend");
        snprintf(a, sizeof a, "%s/auto", dir);
        snprintf(b, sizeof b, "%s/cpu", dir);
        char cmd[512];
        snprintf(cmd, sizeof cmd, "'%s/%s' --backend auto --profile quick %s --seed 3 --quiet --out '%s'",
            DRIFT_BIN_DIR, EXPS[i][0], EXPS[i][1], a);
        cr_assert_eq(run_capture(cmd, NULL, 0, err, sizeof err), 0, "%s: %s", EXPS[i][0], err);
        snprintf(cmd, sizeof cmd, "'%s/%s' --backend cpu --profile quick %s --seed 3 --quiet --out '%s'", DRIFT_BIN_DIR,
            EXPS[i][0], EXPS[i][1], b);
        cr_assert_eq(run_capture(cmd, NULL, 0, NULL, 0), 0, "%s", EXPS[i][0]);
        expect_same_files(a, b, EXPS[i][0]);
        tmpdir_remove(dir);
    }
}

Test(backend_programs, auto_says_once_which_backend_ran)
{
    if (device_present()) {
        printf("skipped: CUDA device present\n");
        return;
    }
    char dir[64], err[2048], cmd[512];
    tmpdir_make(dir, sizeof dir, "drift_backend");
    snprintf(cmd, sizeof cmd,
        "'%s/batch_invariance' --backend auto --profile quick --K 256 --N 64 --M-max 64 --out '%s'", DRIFT_BIN_DIR,
        dir);
    cr_assert_eq(run_capture(cmd, NULL, 0, err, sizeof err), 0, "%s", err);
    cr_expect(strstr(err, "batch_invariance: backend: cpu ("), "stderr: %s", err);
    cr_expect(!strstr(strstr(err, "backend: cpu") + 1, "backend: cpu"), "said more than once: %s", err);
    tmpdir_remove(dir);
}

Test(backend_programs, determinism_without_a_device_is_skipped_with_its_reason)
{
    if (device_present()) {
        printf("skipped: CUDA device present\n");
        return;
    }
    /* exit 77 (DRIFT_EXIT_SKIPPED), one line saying why, and nothing in --out: a skipped run
     * leaves no empty CSV that could pass for data */
    char dir[64], err[2048], cmd[512], out[128];
    tmpdir_make(dir, sizeof dir, "drift_backend");
    snprintf(cmd, sizeof cmd, "'%s/determinism' --profile quick --out '%s/sub'", DRIFT_BIN_DIR, dir);
    cr_assert_eq(run_capture(cmd, NULL, 0, err, sizeof err), 77, "%s", err);
    cr_expect(strstr(err, "determinism: skipped: needs a CUDA device"), "stderr: %s", err);
    cr_expect(strchr(err, '\n') == err + strlen(err) - 1, "not one line: %s", err);
    snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", dir);
    run_stdout(cmd, out, sizeof out);
    cr_expect_eq(atoi(out), 0, "a skipped run left files in %s", dir);
    /* a bad option is still a bad option (exit 2), GPU or not */
    snprintf(cmd, sizeof cmd, "'%s/determinism' --runs 1 --out '%s'", DRIFT_BIN_DIR, dir);
    cr_expect_eq(run_capture(cmd, NULL, 0, err, sizeof err), 2, "%s", err);
    tmpdir_remove(dir);
}
