/* tc_conformance.c — does the lab's tensor-core model reproduce the GPUs bit for bit, and
 * which feature tests tell the architectures apart?
 *
 * Question: `tc:ARCH` claims to be the arithmetic of a GPU's matrix unit. The claim is held
 * against the 240 000 outputs Khattak & Mikaitis measured on eight GPUs (V100, A100, A2, Ada,
 * L40S, H100, H200, B200; tests/tc_hw/, shipped with the repository): per GPU x input format
 * x output format, the samples run (every --stride-th of 5000), the mismatches (bitwise), and
 * the model's parameters (lib/ops/tc_model.c's TC_TABLE). Then the probes that separate the
 * architectures (Fasi et al.'s feature tests and the lab's probes of the clamps, the fp8
 * accumulator and AMD's block FMAs, tc_probe.h beside this file), printed per architecture, with the
 * block size each architecture shows to Fasi et al.'s block test.
 *
 * How to run:
 *   ./lab run tc_conformance                    all 5000 samples of every configuration
 *   build/bin/tc_conformance --profile quick    every 25th sample
 *   build/bin/tc_conformance --data /tmp/tc_hw.bin   the same stream uncompressed (xz -dk)
 *
 * What to look for: 0 mismatches on all 48 configurations (the six fp8 -> fp16 ones of H100,
 * H200 and B200 through the compiler's emulation of mma.sync with fp16 block FMAs,
 * DRIFT_TC_FP8_VIA_HMMA); a configuration a model does not cover would be "not modelled",
 * with its mismatch count; in the probe table each NVIDIA generation differs from the previous
 * one in at least one probe (extra bits, block size, clamps, fp8 accumulator), and the AMD
 * cores differ in rounding (RNE) and in where c joins.
 *
 * Outputs: data/tc_conformance.csv (per configuration), data/tc_conformance_probes.csv (per
 * probe and architecture), data/tc_conformance.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "drift.h"
#include "output.h"
#include "tc_hw.h"
#include "tc_model.h"
#include "tc_probe.h"

/* The architectures of the probe table: one per distinct row of TC_TABLE (A2/A30 compute as
 * A100, L40S as Ada, H200 as H100, RTX PRO 6000 as B200). */
static const drift_tc_arch_t ARCHS[] = {DRIFT_TC_V100, DRIFT_TC_A100, DRIFT_TC_ADA, DRIFT_TC_H100, DRIFT_TC_B200,
    DRIFT_TC_MI100, DRIFT_TC_MI250, DRIFT_TC_MI300X};
#define NARCH 8

enum { T_CONF, T_PROBE, T_MDCONF, T_MDPROBE };
static const drift_col_t CONF[] = {DRIFT_C_TEXT("gpu"), DRIFT_C_TEXT("arch"), DRIFT_C_TEXT("input"),
    DRIFT_C_TEXT("output"), DRIFT_C_INT("K"), DRIFT_C_INT("c_zero"), DRIFT_C_INT("samples"), DRIFT_C_INT("mismatches"),
    DRIFT_C_TEXT("status"), DRIFT_C_TEXT("family"), DRIFT_C_TEXT("algo"), DRIFT_C_INT("block"), DRIFT_C_INT("neab"),
    DRIFT_C_INT("min_exp"), DRIFT_C_TEXT("rounding"), DRIFT_C_HEX("first_model_hex"), DRIFT_C_HEX("first_gpu_hex")};
static const drift_col_t PROBE[] = {DRIFT_C_TEXT("probe"), DRIFT_C_TEXT("arch"), DRIFT_C_TEXT("input"),
    DRIFT_C_TEXT("output"), DRIFT_C_INT("supported"), DRIFT_C_HEX("result_hex"), DRIFT_C_NUM("result", "%.17g"),
    DRIFT_C_QUOTED("feature")};
static const drift_col_t MDCONF[] = {DRIFT_C_TEXT("GPU"), DRIFT_C_TEXT("tc:"), DRIFT_C_TEXT("input"),
    DRIFT_C_TEXT("output"), DRIFT_C_INT("K"), DRIFT_C_INT("samples"), DRIFT_C_INT("mismatches"), DRIFT_C_TEXT("status"),
    DRIFT_C_TEXT("model (block, neab, clamp, rounding)")};
static const drift_col_t MDPROBE[] = {DRIFT_C_TEXT("probe"), DRIFT_C_TEXT("separates"), DRIFT_C_TEXT("v100"),
    DRIFT_C_TEXT("a100"), DRIFT_C_TEXT("ada"), DRIFT_C_TEXT("h100"), DRIFT_C_TEXT("b200"), DRIFT_C_TEXT("mi100"),
    DRIFT_C_TEXT("mi250"), DRIFT_C_TEXT("mi300x")};
static const drift_table_spec_t TABLES[] = {{".csv", NULL, 0, CONF, 17}, {"_probes.csv", NULL, 0, PROBE, 8},
    {NULL, "Measured GPUs against the model (bitwise)", DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT, MDCONF, 9},
    {NULL, "Feature probes per architecture (result of one block FMA; - : no path)", DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT,
        MDPROBE, 10}};

static const char *fmt_in(drift_format_t f) { return drift_format_name(f); }

/* Table order: GPUs by generation (as the file's README lists them), inputs widest first, fp32 output first. */
static int rank_of(const char *s, const char *const *list, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(s, list[i])) return i;
    return n;
}
static int by_gpu(const void *x, const void *y)
{
    static const char *const GPUS[] = {"V100", "A100", "A2", "Ada", "L40S", "H100", "H200", "B200"};
    static const char *const FMTS[] = {"tf32", "fp16", "bf16", "E4M3", "E5M2"};
    const drift_tc_hw_count_t *a = x, *b = y;
    int d = rank_of(a->gpu, GPUS, 8) - rank_of(b->gpu, GPUS, 8);
    if (!d) d = rank_of(a->fmt, FMTS, 5) - rank_of(b->fmt, FMTS, 5);
    if (!d) d = (a->out == DRIFT_FP16) - (b->out == DRIFT_FP16);
    return d;
}

/* What --describe prints, the source of README's row and docs/experiments.md's section. */
static const char QUESTION[] =
    "Does the lab's tensor-core model reproduce eight real GPUs bit for bit, and which feature tests tell the architectures apart?";
static const char SUMMARY[] =
    "every measured output of the 48 configurations (V100, A100, A2, Ada, L40S, H100, H200, B200; fp16, "
    "bf16, tf32, fp8 inputs; fp32 and fp16 outputs) comes out of the model bit for bit; fp8 inputs with fp16 output on "
    "H100, H200 and B200 are the compiler's emulation of mma.sync (two fp16 block FMAs, then c in fp16). The probes show what "
    "changed between generations: extra alignment bits (V100 none, Ampere/Ada 1, Hopper/Blackwell 2), block size (4, 8, "
    "16), the clamps, Hopper's 13-bit fp8 accumulator, and AMD's different block FMAs.";

int main(int argc, char **argv)
{
    long stride = 1;
    const char *data = NULL;
    const drift_cli_opt_t opts[] = {
        {"stride", DRIFT_OPT_INT, &stride, "N", "run every N-th of each configuration's 5000 samples", 1, 5000,
            {"25", "1", "1"}},
        {"data", DRIFT_OPT_STRING, &data, "FILE",
            "measured outputs: the shipped tests/tc_hw/tc_hw.bin.xz (default) or the same stream uncompressed", 0, 0,
            {0}},
    };
    const drift_cli_spec_t spec = {.name = "tc_conformance",
        .question = QUESTION,
        .default_formats = "fp16,bf16,tf32,fp8e4m3,fp8e5m2",
        .default_orders = "seq",
        DRIFT_CLI_OPTS(opts),
        .no_orders = "replays the measured block FMAs of the data, whose order is the GPU's (tc:ARCH)",
        .cpu_only = "CPU emulation against stored GPU outputs",
        .summary = SUMMARY};
    drift_cli_t cli;
    drift_cli_parse(&cli, &spec, argc, argv);
    for (int f = 0; f < cli.nformats; f++)
        if (cli.formats[f] == DRIFT_FP32 || cli.formats[f] == DRIFT_FP64)
            drift_die("--formats: %s has no tensor-core data (accepted: fp16, bf16, tf32, fp8e4m3, fp8e5m2)",
                drift_format_name(cli.formats[f]));

    /* -- measure: the hardware data (read completely before any file is opened) -- */
    static drift_tc_hw_count_t cnt[DRIFT_TC_HW_MAXCFG];
    char why[1024] = "";
    drift_progress(&cli, 0, 2);
    int ncfg = drift_tc_hw_run(cnt, DRIFT_TC_HW_MAXCFG, data, stride, why, sizeof why);
    if (ncfg < 0) drift_die("--data: %s", why);
    qsort(cnt, (size_t)ncfg, sizeof cnt[0], by_gpu);
    drift_progress(&cli, 1, 2);

    /* -- write -- */
    drift_out_t out;
    drift_out_open(&out, &cli, TABLES, 4, 1);
    drift_out_meta(&out, T_CONF, "table",
        "per (GPU, input, output): every %ld-th of 5000 samples through drift_tc_dot, compared bit for bit", stride);
    drift_out_meta(&out, T_CONF, "data",
        "%s (Khattak & Mikaitis, MATLAB-tensor-core b12b5a7 model_validation, BSD 2-Clause; tests/tc_hw/README.md)",
        data ? data : "tests/tc_hw/tc_hw.bin.xz");
    drift_out_meta(&out, T_CONF, "columns",
        "c_zero = 1: the GPU's output was measured with c = 0 (H100/H200 fp8, fp32 output, WGMMA); "
        "status bit-exact | MISMATCH | not-modelled; block, neab, min_exp, rounding = the model's row (lib/ops/tc_model.c TC_TABLE; min_exp -100000: "
        "no clamp); first_*_hex = the first mismatching sample's values (0 when none)");
    drift_out_meta(&out, T_PROBE, "table",
        "per (probe, architecture): c + sum a[i] b[i] by drift_tc_dot (experiments/tc_conformance/tc_probe.c; "
        "inputs in the feature column and the .md); block = Fasi et al.'s block-size test (2: nothing truncated)");
    char runs[64];
    if (stride == 1)
        snprintf(runs, sizeof runs, "all of them run here");
    else
        snprintf(runs, sizeof runs, "every %ld-th run here", stride);
    drift_md_intro(&out,
        "The data are the 5000 block FMAs per (GPU, format) that Khattak & Mikaitis measured on eight GPUs (tests/tc_hw/, shipped; %s); "
        "each is recomputed with the GPU's `tc:` model and compared bit for bit. On H100 and H200 the fp8 outputs in fp32 were measured with c = 0 "
        "(WGMMA), the others with the sample's c.",
        runs);
    long mod_cfg = 0, mod_samples = 0, mod_mis = 0, un_cfg = 0, un_samples = 0, un_mis = 0;
    for (int i = 0; i < ncfg; i++) {
        const drift_tc_hw_count_t *c = &cnt[i];
        int keep = 0;
        for (int f = 0; f < cli.nformats; f++) keep |= cli.formats[f] == c->in;
        if (!keep) continue;
        drift_tc_model_t m;
        int rc = drift_tc_model(&m, c->arch, c->in, c->out);
        const char *status = c->unmodelled ? "not-modelled" : c->mismatches ? "MISMATCH" : "bit-exact";
        char params[128];
        if (rc)
            snprintf(params, sizeof params, "none");
        else if (m.min_exp <= -100000)
            snprintf(params, sizeof params, "%d, %d, none, %s", m.block, m.neab, drift_mode_name(m.rounding));
        else
            snprintf(params, sizeof params, "%d, %d, %d, %s", m.block, m.neab, m.min_exp, drift_mode_name(m.rounding));
        if (m.algo != DRIFT_TC_ALIGN_TRUNC && !rc) {
            size_t l = strlen(params);
            snprintf(params + l, sizeof params - l, " (%s)", drift_tc_algo_name(m.algo));
        }
        const char *an = drift_tc_arch_name(c->arch);
        drift_row(&out, T_CONF, DRIFT_TXT(c->gpu), DRIFT_TXT(an), DRIFT_TXT(fmt_in(c->in)),
            DRIFT_TXT(drift_format_name(c->out)), DRIFT_INT(c->K), DRIFT_INT(c->c0), DRIFT_INT(c->samples),
            DRIFT_INT(c->mismatches), DRIFT_TXT(status), DRIFT_TXT(rc ? "-" : m.family),
            DRIFT_TXT(rc ? "-" : drift_tc_algo_name(m.algo)), DRIFT_INT(rc ? 0 : m.block), DRIFT_INT(rc ? 0 : m.neab),
            DRIFT_INT(rc ? 0 : m.min_exp), DRIFT_TXT(rc ? "-" : drift_mode_name(m.rounding)),
            DRIFT_NUM(c->mismatches ? c->first_got : 0), DRIFT_NUM(c->mismatches ? c->first_want : 0));
        drift_row(&out, T_MDCONF, DRIFT_TXT(c->gpu), DRIFT_TXT(an), DRIFT_TXT(fmt_in(c->in)),
            DRIFT_TXT(drift_format_name(c->out)), DRIFT_INT(c->K), DRIFT_INT(c->samples), DRIFT_INT(c->mismatches),
            DRIFT_TXT(c->unmodelled ? "not modelled" : status), DRIFT_TXT(c->unmodelled ? "-" : params));
        if (c->unmodelled)
            un_cfg++, un_samples += c->samples, un_mis += c->mismatches;
        else
            mod_cfg++, mod_samples += c->samples, mod_mis += c->mismatches;
    }
    drift_md_end(&out, T_MDCONF);

    /* -- probes: every probe on every architecture -- */
    const drift_tc_probe_t *P;
    int np = drift_tc_probes(&P);
    char cell[NARCH][48];
    unsigned sep[NARCH][NARCH] = {{0}}; /* sep[x][y]: some probe gives x and y different results */
    double res[64][NARCH];
    int sup[64][NARCH];
    for (int p = 0; p < np && p < 64; p++) {
        for (int a = 0; a < NARCH; a++) {
            double r = 0;
            int rc = drift_tc_probe_run(&r, &P[p], ARCHS[a]);
            if (rc && rc != DRIFT_EUNSUPPORTED)
                drift_die("probe %s on %s: %s", P[p].name, drift_tc_arch_name(ARCHS[a]), drift_strerror(rc));
            sup[p][a] = !rc, res[p][a] = rc ? 0 : r;
            if (rc)
                snprintf(cell[a], sizeof cell[a], "-");
            else
                snprintf(cell[a], sizeof cell[a], "%a", r);
            drift_row(&out, T_PROBE, DRIFT_TXT(P[p].name), DRIFT_TXT(drift_tc_arch_name(ARCHS[a])),
                DRIFT_TXT(drift_format_name(P[p].in)), DRIFT_TXT(drift_format_name(P[p].out)), DRIFT_INT(!rc),
                DRIFT_NUM(r), DRIFT_NUM(r), DRIFT_TXT(P[p].feature));
        }
        for (int x = 0; x < NARCH; x++)
            for (int y = 0; y < NARCH; y++)
                if (sup[p][x] != sup[p][y] || (sup[p][x] && res[p][x] != res[p][y])) sep[x][y] = 1;
        char lbl[160];
        snprintf(lbl, sizeof lbl, "%s: %s (%s -> %s)", P[p].feature, P[p].what, drift_format_name(P[p].in),
            drift_format_name(P[p].out));
        drift_row(&out, T_MDPROBE, DRIFT_TXT(P[p].name), DRIFT_TXT(lbl), DRIFT_TXT(cell[0]), DRIFT_TXT(cell[1]),
            DRIFT_TXT(cell[2]), DRIFT_TXT(cell[3]), DRIFT_TXT(cell[4]), DRIFT_TXT(cell[5]), DRIFT_TXT(cell[6]),
            DRIFT_TXT(cell[7]));
    }
    /* Fasi et al.'s block-size test, fp16 and fp8 */
    const drift_format_t bin[] = {DRIFT_FP16, DRIFT_TF32, DRIFT_FP8E4M3};
    for (int t = 0; t < 3; t++) {
        int blk[NARCH];
        for (int a = 0; a < NARCH; a++) {
            int rc = drift_tc_probe_block(&blk[a], ARCHS[a], bin[t]);
            if (rc && rc != DRIFT_EUNSUPPORTED)
                drift_die("block probe on %s: %s", drift_tc_arch_name(ARCHS[a]), drift_strerror(rc));
            if (rc)
                blk[a] = 0, snprintf(cell[a], sizeof cell[a], "-");
            else if (blk[a] == 2)
                snprintf(cell[a], sizeof cell[a], "none seen");
            else
                snprintf(cell[a], sizeof cell[a], "%d", blk[a]);
            char nm[32];
            snprintf(nm, sizeof nm, "block-%s", drift_format_name(bin[t]));
            drift_row(&out, T_PROBE, DRIFT_TXT(nm), DRIFT_TXT(drift_tc_arch_name(ARCHS[a])),
                DRIFT_TXT(drift_format_name(bin[t])), DRIFT_TXT("fp32"), DRIFT_INT(!rc), DRIFT_NUM(blk[a]),
                DRIFT_NUM(blk[a]),
                DRIFT_TXT("block size: where 2^-18 stops being truncated by 2^16 - 2^16 (Fasi et al. sec. 3)"));
        }
        for (int x = 0; x < NARCH; x++)
            for (int y = 0; y < NARCH; y++)
                if (blk[x] && blk[y] && blk[x] != blk[y]) sep[x][y] = 1;
        char nm[32], lbl[96];
        snprintf(nm, sizeof nm, "block-%s", drift_format_name(bin[t]));
        snprintf(
            lbl, sizeof lbl, "block size (%s; none seen: exact or fp32-pairwise block)", drift_format_name(bin[t]));
        drift_row(&out, T_MDPROBE, DRIFT_TXT(nm), DRIFT_TXT(lbl), DRIFT_TXT(cell[0]), DRIFT_TXT(cell[1]),
            DRIFT_TXT(cell[2]), DRIFT_TXT(cell[3]), DRIFT_TXT(cell[4]), DRIFT_TXT(cell[5]), DRIFT_TXT(cell[6]),
            DRIFT_TXT(cell[7]));
    }
    drift_md_end(&out, T_MDPROBE);
    int pairs = 0, split = 0;
    char unsplit[256] = "";
    for (int x = 0; x < NARCH; x++)
        for (int y = x + 1; y < NARCH; y++) {
            pairs++;
            if (sep[x][y])
                split++;
            else {
                size_t l = strlen(unsplit);
                snprintf(unsplit + l, sizeof unsplit - l, "%s%s/%s", l ? ", " : "", drift_tc_arch_name(ARCHS[x]),
                    drift_tc_arch_name(ARCHS[y]));
            }
        }

    drift_md_text(&out, "**Takeaway.**\n\n");
    drift_md_text(&out, "- %ld configurations modelled, %ld samples run, %ld mismatches%s.\n", mod_cfg, mod_samples,
        mod_mis,
        mod_mis ? ": the model does NOT reproduce the hardware there (see the table)"
                : ": every measured output reproduced bit for bit");
    if (un_cfg)
        drift_md_text(&out,
            "- Not modelled (%ld configurations): %ld of %ld samples (%.1f%%) differ from the lab's model; the lab does not claim them (experiments/tc_conformance/tc_hw.h).\n",
            un_cfg, un_mis, un_samples, un_samples ? 100.0 * (double)un_mis / (double)un_samples : 0.0);
    drift_md_text(&out,
        "- The probes separate %d of the %d pairs of architectures in the table (a different result, "
        "or a path one has and the other lacks)%s%s; A2/A30 compute as A100, L40S as Ada, H200 as H100, RTX PRO 6000 as B200 (one table row each).\n",
        split, pairs, split == pairs ? "" : "; not separated: ", unsplit);
    drift_md_text(&out,
        "- Probe results are exact (%%a); the expected values of the NVIDIA probes are Fasi et al.'s published V100/A100 outputs and hand "
        "derivations, checked in tests/test_tc_probe.c.\n");
    drift_progress(&cli, 2, 2);
    drift_out_commit(&out);
    return 0;
}
