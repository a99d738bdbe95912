/* test_run_words.c — what a run prints names the run that was made: every registered
 * experiment, at the quick profile into its own --out with another seed, must not point the
 * reader at data/ (the report's run, not this one), every file it names under its --out must
 * exist, and every plot command it prints must plot this run (`--data <out>`: without it,
 * ./lab plot draws the newest run in runs/, another one). Checked in its stdout; the Markdown
 * fragment is data and keeps the report's words (output.h). GPU experiments are left out (they write nothing without a device); an
 * experiment that skips (exit 77, e.g. no real model fetched) is passed over. */
#include <criterion/criterion.h>
#include <glob.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "support.h"

#define REGISTRY DRIFT_SOURCE_DIR "/experiments/registry.tsv"

/* Each path in text that starts with out/ names a file (or a glob) that must exist. */
static void paths_exist(const char *exp, const char *what, const char *text, const char *out)
{
    size_t n = strlen(out);
    for (const char *p = strstr(text, out); p; p = strstr(p + 1, out)) {
        if (p[n] != '/') continue;
        size_t len = strcspn(p, " \n\t)`,;'\"|");
        while (len > n + 1 && (p[len - 1] == '.' || p[len - 1] == ':')) len--;
        char path[PATH_MAX];
        cr_assert(len < sizeof path);
        memcpy(path, p, len);
        path[len] = 0;
        glob_t g;
        int rc = glob(path, 0, NULL, &g);
        size_t found = rc == 0 ? g.gl_pathc : 0;
        globfree(&g);
        cr_expect(found > 0, "%s: %s names %s, which the run did not write", exp, what, path);
    }
}

/* No path that starts with "data/": the run's files are in out. */
static void no_data_dir(const char *exp, const char *what, const char *text)
{
    for (const char *p = strstr(text, "data/"); p; p = strstr(p + 1, "data/")) {
        int starts = p == text || strchr(" (`[\"'\n", p[-1]);
        cr_expect(!starts, "%s: %s names %.40s (the report's data/, not this run's --out)", exp, what, p);
    }
}

/* Every "./lab plot NAME" is followed by " --data out". */
static void plots_this_run(const char *exp, const char *what, const char *text, const char *out)
{
    static const char PLOT[] = "./lab plot ";
    char want[PATH_MAX + 16];
    snprintf(want, sizeof want, " --data %s", out);
    for (const char *p = strstr(text, PLOT); p; p = strstr(p + 1, PLOT)) {
        const char *q = p + sizeof PLOT - 1;
        q += strspn(q, "abcdefghijklmnopqrstuvwxyz0123456789_");
        cr_expect(!strncmp(q, want, strlen(want)), "%s: %s says '%.60s', which plots another run", exp, what, p);
    }
}

Test(run_words, every_experiment_names_its_own_out_dir, .timeout = 600)
{
    char dir[64];
    tmpdir_make(dir, sizeof dir, "words");
    FILE *reg = fopen(REGISTRY, "r");
    cr_assert(reg, "cannot read %s", REGISTRY);
    char line[1024];
    int ran = 0;
    while (fgets(line, sizeof line, reg)) {
        if (line[0] == '#' || line[0] == '\n') continue;
        char name[128] = "", needs[64] = "";
        char *tab = strchr(line, '\t');
        cr_assert(tab && tab - line < (long)sizeof name);
        memcpy(name, line, (size_t)(tab - line));
        char *tab2 = strchr(tab + 1, '\t');
        if (tab2) snprintf(needs, sizeof needs, "%.*s", (int)strcspn(tab2 + 1, "\n"), tab2 + 1);
        if (!strcmp(needs, "gpu")) continue;
        char out[PATH_MAX], log[PATH_MAX + 8], md[PATH_MAX + 200];
        snprintf(out, sizeof out, "%s/%s", dir, name);
        snprintf(log, sizeof log, "%s.out", out);
        int rc = sh("'%s/%s' --profile quick --seed 2 --out '%s' >'%s' 2>&1", DRIFT_BIN_DIR, name, out, log);
        if (rc == 77) continue;
        cr_assert_eq(rc, 0, "%s exited %d (%s)", name, rc, log);
        ran++;
        char *said = slurp(log);
        snprintf(md, sizeof md, "%s/%s.md", out, name);
        no_data_dir(name, "stdout", said);
        paths_exist(name, "stdout", said, out);
        plots_this_run(name, "stdout", said, out);
        free(said);
    }
    fclose(reg);
    cr_assert(ran >= 10, "only %d experiments ran", ran);
    tmpdir_remove(dir);
}

/* The words follow --archs: two generations that share a row of the architecture table (Ada
 * and A100 for bf16 and fp16) compute the head identically, so the run must say the logits are
 * bit-identical and nothing it prints may claim they differ (the summary once described the
 * default generations whatever --archs chose). */
Test(run_words, archs_that_compute_alike_are_said_to, .timeout = 300)
{
    char dir[64];
    tmpdir_make(dir, sizeof dir, "drift_words_archs");
    int rc = sh(
        "'%s/gpu_generations' --profile quick --archs a100,ada --out '%s/g' >'%s/g.out' 2>&1", DRIFT_BIN_DIR, dir, dir);
    cr_assert_eq(rc, 0);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/g.out", dir);
    char *said = slurp(path);
    snprintf(path, sizeof path, "%s/g/gpu_generations.md", dir);
    char *frag = slurp(path);
    cr_assert(said && frag);
    cr_expect(strstr(frag, "Bit-identical logits: bf16 a100/ada, fp16 a100/ada"),
        "the fragment does not say the logits are identical");
    static const char *const claims[] = {"different fp32 logits", "large share"};
    for (size_t i = 0; i < sizeof claims / sizeof claims[0]; i++) {
        cr_expect(!strstr(said, claims[i]), "stdout claims '%s' for two generations that compute alike", claims[i]);
        cr_expect(
            !strstr(frag, claims[i]), "the fragment claims '%s' for two generations that compute alike", claims[i]);
    }
    free(said), free(frag);
    tmpdir_remove(dir);
}

/* "a" or "a to b", each end printed with fmt (ends that print alike: one number). */
static void range_said(char *buf, size_t size, const char *fmt, double a, double b)
{
    char x[40], y[40];
    snprintf(x, sizeof x, fmt, a < b ? a : b);
    snprintf(y, sizeof y, fmt, a < b ? b : a);
    if (strcmp(x, y))
        snprintf(buf, size, "%s to %s", x, y);
    else
        snprintf(buf, size, "%s", x);
}

/* The words follow --configs: layer_drift run with two of its four configurations names those
 * two and no other in its intro, takeaway and stdout summary, and the numbers the summary gives
 * are the CSV's (the summary once said "bf16 and fp16 compute sit four decades above fp32"
 * whatever ran). The CSV's rows after the first and the last layer are read back here:
 * error after layer 1 in units of u (fp32: 2^-24; LayerCast's bf16 weights: 2^-8), decades of
 * LayerCast above fp32 after the last layer, and the growth from layer 1 to the last in the
 * takeaway (over the two). */
Test(run_words, layer_drift_configs_are_the_ones_named, .timeout = 120)
{
    char dir[64];
    tmpdir_make(dir, sizeof dir, "drift_words_configs");
    int rc = sh("'%s/layer_drift' --profile quick --configs fp32,layercast --out '%s/l' >'%s/l.out' 2>&1",
        DRIFT_BIN_DIR, dir, dir);
    cr_assert_eq(rc, 0);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/l.out", dir);
    char *said = slurp(path);
    snprintf(path, sizeof path, "%s/l/layer_drift.md", dir);
    char *frag = slurp(path);
    snprintf(path, sizeof path, "%s/l/layer_drift.csv", dir);
    char *csv = slurp(path);
    cr_assert(said && frag && csv);
    /* first[model][config], last[model][config]: config 0 fp32, 1 layercast; model 0 stories260K, 1 synthetic */
    double first[2][2] = {{0}}, last[2][2] = {{0}};
    int got = 0;
    for (char *l = strtok(csv, "\n"); l; l = strtok(NULL, "\n")) {
        if (l[0] == '#' || !strncmp(l, "model,", 6)) continue;
        char model[32], config[32], block[32];
        int layers, layer, depth;
        double mean, mx;
        cr_assert_eq(sscanf(l, "%31[^,],%d,%31[^,],%d,%31[^,],%d,%lf,%lf", model, &layers, config, &layer, block,
                         &depth, &mean, &mx),
            8, "%s", l);
        cr_assert(
            !strcmp(config, "fp32") || !strcmp(config, "layercast"), "a row of a configuration not asked for: %s", l);
        int m = !strcmp(model, "synthetic"), c = !strcmp(config, "layercast");
        if (strcmp(block, "mlp")) continue;
        if (layer == 0) first[m][c] = mean, got++;
        if (layer == layers - 1) last[m][c] = mean, got++;
    }
    cr_assert_eq(got, 8, "expected the mlp rows after the first and the last layer of 2 models x 2 configurations");
    char want[256], r[96];
    range_said(r, sizeof r, "%.2g", first[0][0] / 0x1p-24, first[1][0] / 0x1p-24);
    snprintf(want, sizeof want, "is %s u for fp32", r);
    cr_expect(strstr(said, want), "stdout lacks '%s': %s", want, said);
    range_said(r, sizeof r, "%.2g", first[0][1] / 0x1p-8, first[1][1] / 0x1p-8);
    snprintf(want, sizeof want, " and %s u for LayerCast (", r);
    cr_expect(strstr(said, want), "stdout lacks '%s': %s", want, said);
    range_said(r, sizeof r, "%.1f", log10(last[0][1] / last[0][0]), log10(last[1][1] / last[1][0]));
    snprintf(want, sizeof want, "after the last layer LayerCast sits %s decades above fp32.", r);
    cr_expect(strstr(said, want), "stdout lacks '%s': %s", want, said);
    /* the takeaway's growth from layer 1 to the last: over the two configurations that ran */
    range_said(r, sizeof r, "%.3g", last[0][0] / first[0][0], last[0][1] / first[0][1]);
    snprintf(want, sizeof want, "stories260K (5 layers): mean error x%s from layer 1 to 5;", r);
    cr_expect(strstr(frag, want), "the fragment lacks '%s'", want);
    cr_expect(strstr(frag, "under fp32 and LayerCast, against"), "the fragment's intro names other configurations");
    /* nothing about the two configurations that did not run */
    static const char *const absent[] = {"fp16", "u for bf16", "sits with bf16", "bf16 is", "bf16 sits", "tensor-core"};
    for (size_t i = 0; i < sizeof absent / sizeof absent[0]; i++) {
        cr_expect(
            !strstr(said, absent[i]), "stdout says '%s' of a configuration that did not run: %s", absent[i], said);
        cr_expect(!strstr(frag, absent[i]), "the fragment says '%s' of a configuration that did not run", absent[i]);
    }
    free(said), free(frag), free(csv);
    tmpdir_remove(dir);
}
