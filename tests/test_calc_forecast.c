/* test_calc_forecast.c — `drift-calc forecast` (./lab forecast --logits): a user's dump of
 * per-step top-k logits ranked by the risk that another deployment parts the text.
 *
 * By hand, Gaussian law with sd 1/8 and pi = 1 (all values dyadic, so every gap is exact):
 *   text 0: steps (1.375, 1, 0.5) and (2.25, 2, 0): gaps 3/8 and 1/4, risks Phi(-3), Phi(-2);
 *           P = 1 - (1 - Phi(-3)) (1 - Phi(-2)), Phi(-3) = 0.00134989803163009,
 *           Phi(-2) = 0.0227501319481792 (Abramowitz & Stegun 26.2);
 *   text 1: one step (3, 3, 1): a tie, risk 1/2;
 *   text 2: one step (10, 2, 1): gap 8 = 64 sd, risk 0 in doubles.
 * Ranked: text 1, text 0, text 2. The round trip: the forecast experiment's own dump
 * (--dump-logits) forecast with its pairs table's law gives its p_all_samples column. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support.h"

#define CALC DRIFT_BIN_DIR "/drift-calc"

static char dir[64];
static void setup(void) { tmpdir_make(dir, sizeof dir, "drift_fcst"); }
static void teardown(void) { tmpdir_remove(dir); }

static const char *write_file(const char *name, const char *text)
{
    static char path[4][256];
    static int k;
    char *p = path[k++ % 4];
    snprintf(p, 256, "%s/%s", dir, name);
    FILE *fp = fopen(p, "w");
    cr_assert(fp);
    fputs(text, fp);
    fclose(fp);
    return p;
}

#define DUMP_CSV "# text,step,logits\n0,0,1.375,1,0.5\n0,1,2.25,2,0\n1,0,3,3,1\n2,0,10,2,1\n"

Test(calc_forecast, csv_dump_by_hand, .init = setup, .fini = teardown)
{
    const char *f = write_file("d.csv", DUMP_CSV);
    char cmd[512];
    static char out[4096];
    snprintf(cmd, sizeof cmd, CALC " forecast --law gauss --scale 0.125 --pi 1 '%s'", f);
    cr_assert_eq(run_stdout(cmd, out, sizeof out), 0);
    double p0 = 1 - (1 - 0.00134989803163009) * (1 - 0.0227501319481792);
    char want[1024];
    snprintf(want, sizeof want,
        "rank,text,steps,p_part,risk_step,risk_gap,risk_p,min_gap\n"
        "1,1,1,0.5,0,0,0.5,0\n"
        "2,0,2,%.9g,1,0.25,%.9g,0.25\n"
        "3,2,1,0,-1,nan,0,8\n",
        p0, 0.0227501319481792);
    cr_expect_str_eq(out, want);
    /* pi scales each risk; --tokens 1 keeps the first step only */
    snprintf(cmd, sizeof cmd, CALC " forecast --law gauss --scale 0.125 --pi 0.5 --tokens 1 '%s'", f);
    cr_assert_eq(run_stdout(cmd, out, sizeof out), 0);
    snprintf(want, sizeof want,
        "rank,text,steps,p_part,risk_step,risk_gap,risk_p,min_gap\n1,1,1,0.25,0,0,0.25,0\n2,0,1,%.9g,0,0.375,%.9g,0.375\n",
        0.5 * 0.00134989803163009, 0.5 * 0.00134989803163009);
    cr_expect(!strncmp(out, want, strlen(want)), "%s", out);
}

Test(calc_forecast, bad_dumps_and_laws, .init = setup, .fini = teardown)
{
    static const struct {
        const char *name, *text, *opts, *says;
    } bad[] = {
        {"steps.csv", "0,0,1,0\n0,2,1,0\n", "--law gauss --scale 1 --pi 1", "has step 2 where step 1 comes next"},
        {"order.csv", "1,0,1,0\n0,0,1,0\n", "--law gauss --scale 1 --pi 1", "text 0 after text 1"},
        {"narrow.csv", "0,0,1\n", "--law gauss --scale 1 --pi 1", "has shape (1, 3)"},
        {"nan.csv", "0,0,1,nan\n", "--law gauss --scale 1 --pi 1", "must be finite"},
        {"ok.csv", DUMP_CSV, "--law cauchy --scale 1 --pi 1", "unknown law 'cauchy'"},
        {"ok2.csv", DUMP_CSV, "--law gauss --scale 0 --pi 1", "--scale: '0'"},
        {"ok3.csv", DUMP_CSV, "--law gauss --scale 1 --pi 1.5", "--pi: '1.5'"},
        {"ok4.csv", DUMP_CSV, "--law gauss --scale 1", "give --pair ID, or all of --law, --scale and --pi"},
        {"ok5.csv", DUMP_CSV, "--pair nope --data /nonexistent", "cannot read /nonexistent/forecast_pairs.csv"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *f = write_file(bad[i].name, bad[i].text);
        char cmd[768];
        static char out[4096], err[4096];
        snprintf(cmd, sizeof cmd, CALC " forecast %s '%s'", bad[i].opts, f);
        int rc = run_capture(cmd, out, sizeof out, err, sizeof err);
        cr_expect_eq(rc, 2, "%s: exit %d", bad[i].name, rc);
        cr_expect(strstr(err, bad[i].says), "%s: stderr '%s' lacks '%s'", bad[i].name, err, bad[i].says);
        cr_expect_eq(out[0], 0, "%s: printed '%s'", bad[i].name, out);
        cr_expect(strchr(err, '\n') == err + strlen(err) - 1, "%s: not one line: '%s'", bad[i].name, err);
    }
}

/* a float64 .npy of shape (P, T, K) written byte by byte (the format's spec, not the lab's
 * writer), with `cut` bytes of data missing */
static const char *npy(const char *name, const double *v, int P, int T, int K, int cut)
{
    static char paths[8][256];
    static int slot;
    char *path = paths[slot++ % 8], hdr[128];
    snprintf(path, 256, "%s/%s", dir, name);
    size_t len =
        (size_t)snprintf(hdr, sizeof hdr, "{'descr': '<f8', 'fortran_order': False, 'shape': (%d, %d, %d), }", P, T, K);
    while ((10 + len + 1) % 64) hdr[len++] = ' ';
    hdr[len++] = '\n';
    FILE *fp = fopen(path, "wb");
    cr_assert(fp);
    fwrite("\x93NUMPY\x01\x00", 1, 8, fp);
    fputc((int)len, fp);
    fputc(0, fp);
    fwrite(hdr, 1, len, fp);
    fwrite(v, 1, sizeof(double) * (size_t)(P * T * K) - (size_t)cut, fp);
    fclose(fp);
    return path;
}

Test(calc_forecast, npy_dump_shapes_and_ends, .init = setup, .fini = teardown)
{
    /* the hand texts as (3, 2, 3), NaN past the ends of texts 1 and 2 */
    const double v[18] = {1.375, 1, 0.5, 2.25, 2, 0, 3, 3, 1, NAN, NAN, NAN, 10, 2, 1, NAN, NAN, NAN};
    char cmd[512];
    static char out[4096], err[4096];
    snprintf(cmd, sizeof cmd, CALC " forecast --law gauss --scale 0.125 --pi 1 '%s'", npy("a.npy", v, 3, 2, 3, 0));
    cr_assert_eq(run_stdout(cmd, out, sizeof out), 0);
    cr_expect(strstr(out, "\n1,1,1,0.5,0,0,0.5,0\n2,0,2,"), "%s", out);
    /* K = 1, a truncated file, a step with one NaN, a text resumed after its end */
    const double partial[6] = {1, NAN, 2, 1, 0, 0};
    const double resumed[6] = {NAN, NAN, NAN, 2, 1, 0};
    const struct {
        const char *path, *says;
    } bad[] = {
        {npy("k1.npy", v, 3, 6, 1, 0), "K = 1 logits per step"},
        {npy("cut.npy", v, 3, 2, 3, 8), "cut.npy"},
        {npy("partial.npy", partial, 1, 2, 3, 0), "some logits are NaN or infinite"},
        {npy("resumed.npy", resumed, 1, 2, 3, 0), "resumes at step 1"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(cmd, sizeof cmd, CALC " forecast --law gauss --scale 1 --pi 1 '%s'", bad[i].path);
        cr_expect_eq(run_capture(cmd, out, sizeof out, err, sizeof err), 2, "%s", bad[i].path);
        cr_expect(strstr(err, bad[i].says), "stderr '%s' lacks '%s'", err, bad[i].says);
        cr_expect_eq(out[0], 0);
    }
}

/* The experiment's own dump, forecast with its own pairs table, gives its own forecasts: the
 * values of p_all_samples for the pair, in the same ranking. */
Test(calc_forecast, round_trip_through_the_experiment, .init = setup, .fini = teardown, .timeout = 600)
{
    if (access(DRIFT_SOURCE_DIR "/models/SmolLM2-135M-Instruct.Q4_1.gguf", R_OK)) {
        cr_log_warn("skipped: models/SmolLM2-135M-Instruct.Q4_1.gguf not fetched (./lab models get smollm2-135m)");
        return;
    }
    char cmd[1024];
    static char out[8192], err[8192];
    snprintf(cmd, sizeof cmd, DRIFT_BIN_DIR "/forecast --profile quick --quiet --out '%s/run' --dump-logits '%s/a.npy'",
        dir, dir);
    cr_assert_eq(run_capture(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
    snprintf(cmd, sizeof cmd, CALC " forecast --pair batch-alone --data '%s/run' '%s/a.npy'", dir, dir);
    cr_assert_eq(run_stdout(cmd, out, sizeof out), 0);
    /* the experiment's rows of the pair: prompt order = the dump's text order */
    char path[256];
    snprintf(path, sizeof path, "%s/run/forecast.csv", dir);
    char *csv = slurp(path);
    cr_assert(csv);
    double want[64];
    int n = 0, col = -1, pcol = -1;
    for (char *line = strtok(csv, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#') continue;
        char *save, *f = strtok_r(line, ",", &save);
        int k = 0;
        if (col < 0) { /* the header */
            for (; f; f = strtok_r(NULL, ",", &save), k++)
                if (!strcmp(f, "p_all_samples"))
                    col = k;
                else if (!strcmp(f, "pair"))
                    pcol = k;
            cr_assert(col >= 0 && pcol >= 0);
            continue;
        }
        int pair_ok = 0;
        double p = NAN;
        for (; f; f = strtok_r(NULL, ",", &save), k++) {
            if (k == pcol) pair_ok = !strcmp(f, "batch-alone");
            if (k == col) p = strtod(f, NULL);
        }
        if (pair_ok && n < 64) want[n++] = p;
    }
    free(csv);
    cr_assert(n >= 2, "%d rows of batch-alone", n);
    /* every text's p_part equals the experiment's, to its printed digits */
    int seen = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        int rank, text, steps;
        double p;
        if (sscanf(line, "%d,%d,%d,%lf", &rank, &text, &steps, &p) != 4) continue;
        cr_assert(text >= 0 && text < n);
        cr_expect(
            fabs(p - want[text]) <= 1e-5 * fabs(want[text]) + 1e-12, "text %d: %g, experiment %g", text, p, want[text]);
        seen++;
    }
    cr_expect_eq(seen, n);
}
