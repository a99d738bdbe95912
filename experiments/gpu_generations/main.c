/* gpu_generations.c — does the same model give different answers on different GPUs?
 *
 * Question: one LM head, and one whole transformer, computed with the tensor-core model of
 * each GPU generation (--archs, default tc:v100, tc:a100, tc:h100, tc:b200 and AMD's
 * tc:mi300x; tc:ada computes fp16/bf16 as tc:a100; recipes FORMAT/tc:ARCH/fp32/fp32,
 * arch_set.h). How often does the argmax, and the greedy text, differ between generations?
 *
 * What it measures, per seed (--seed, --seeds consecutive seeds) and input format (bf16,
 * fp16; V100 has no bf16 path, so it is absent from the bf16 rows):
 *   (1) realistic head: --rows hidden states (outlier channels, gen_logits.h) against a head
 *       of --V rows N(0, 1/K); every logit of every architecture (drift_recipe_gemm) and the
 *       exact logits of the same rounded inputs; argmax per architecture, with fp32 logits
 *       and with the logits stored in the input format; the logit differences between every
 *       two architectures in fp32 ulps and in units of the row's logit scale s = ||h||/sqrt(K);
 *   (2) close calls: --pairs planted top-2 pairs per gap (--gaps, in units of s; exact gaps,
 *       close_calls.h): per gap, how often two architectures (or one and exact) pick
 *       different tokens;
 *   (3) greedy text: SmolLM2-135M-Instruct (GGUF; stories260K with --checkpoint and in the
 *       quick profile) with every matmul (QKV, attention output, MLP, LM head) under the
 *       architecture's recipe decodes --prompts prompts per seed (SmolLM2: drawn by the seed
 *       from the lab's prompt set, in its chat template; llama2.c: BOS and a random first
 *       token) for --tokens greedy tokens (greedy_batch.h), in the --text-formats only (a
 *       real model's decode is the run's cost); per pair of
 *       architectures, the completions that differ, the first differing step, and there the
 *       exact (fp64 reference, teacher-forced on the common context) top-1/top-2 gap and the
 *       two generations' largest logit difference (parting.h).
 * Rates carry Wilson 95% intervals.
 *
 * How to run:
 *   ./lab run gpu_generations
 *   build/bin/gpu_generations --profile quick --archs a100,h100
 *   ./lab plot gpu_generations    plots/gpu_generations_{ulps,closecalls,greedy}.png
 *
 * What to look for: most logits differ between generations that compute differently, by a
 * few to a few tens of fp32 ulps, and H100 and B200 agree bit for bit; yet on realistic heads
 * the argmax does not move. At planted gaps of 1e-7..1e-6 s the generations disagree often.
 * Greedy texts part only where the exact top-1/top-2 gap is as small as the generations'
 * logit differences there. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch_greedy.h"
#include "arch_head.h"
#include "arch_set.h"
#include "chat_prompts.h"
#include "checkpoint.h"
#include "cli.h"
#include "llm_run.h"
#include "close_calls.h"
#include "dispatch.h"
#include "drift.h"
#include "gen_logits.h"
#include "gpu_generations_lab.h"
#include "metrics.h"
#include "pair_stats.h"
#include "philox.h"
#include "stats.h"

#define EXP "gpu_generations"
#define MAXA DRIFT_GG_MAXA
#define MAXG DRIFT_GG_MAXG
#define MAXS DRIFT_GG_MAXS
#define NBIN DRIFT_ULP_NBIN

int main(int argc, char **argv)
{
    long K_ = 0, V_ = 0, R_ = 0, P_ = 0, nseeds = 3, NR_ = 0, NT_ = 0;
    const char *archs_opt = "v100,a100,h100,b200,mi300x", *ckpt = NULL, *set = NULL, *tf_opt = NULL;
    drift_dbllist_t gaps = {{0}, 0};
    const drift_cli_opt_t opts[] = {
        {"K", DRIFT_OPT_INT, &K_, "N", "hidden size", 16, 1 << 16, {"256", "1024", "4096"}},
        {"V", DRIFT_OPT_INT, &V_, "N", "vocabulary (rows of the head)", 2, 1 << 20, {"256", "1024", "4096"}},
        {"rows", DRIFT_OPT_INT, &R_, "N", "hidden states per seed (realistic head)", 1, 1 << 16, {"16", "24", "64"}},
        {"pairs", DRIFT_OPT_INT, &P_, "N", "planted close calls per gap and seed", 1, 1 << 20, {"40", "150", "2000"}},
        {"gaps", DRIFT_OPT_DOUBLELIST, &gaps, "G,G,...", "planted exact top-2 gaps in units of s", 0, 0,
            {"1e-6,1e-4", "1e-7,1e-6,1e-5", "1e-7,3e-7,1e-6,3e-6,1e-5,1e-4"}},
        {"seeds", DRIFT_OPT_INT, &nseeds, "N", "consecutive seeds from --seed (default 3)", 1, MAXS, {0}},
        {"archs", DRIFT_OPT_STRING, &archs_opt, "LIST",
            "tensor-core architectures, in generation order (default v100,a100,h100,b200,mi300x; ada computes fp16/bf16 as a100)",
            0, 0, {0}},
        {"prompts", DRIFT_OPT_INT, &NR_, "N", "greedy text: prompts per seed", 1, 4096, {"2", "1", "16"}},
        {"tokens", DRIFT_OPT_INT, &NT_, "N", "greedy text: tokens each prompt generates", 1, 4096, {"8", "10", "64"}},
        {"text-formats", DRIFT_OPT_STRING, &tf_opt, "LIST", "greedy text: the --formats it decodes in", 0, 0,
            {"bf16,fp16", "bf16", "bf16,fp16"}},
        {"checkpoint", DRIFT_OPT_STRING, &ckpt, "FILE",
            "greedy text: checkpoint, llama2.c .bin or GGUF (default SmolLM2-135M-Instruct; stories260K in the quick profile)",
            0, 0, {0}},
        {"prompt-set", DRIFT_OPT_STRING, &set, "FILE",
            "greedy text: the prompt set a GGUF model's prompts are drawn from (default prompts/lab-prompts.txt)", 0, 0,
            {0}},
    };
    const drift_cli_spec_t spec = {.name = EXP,
        .question =
            "Does the same model give different answers on different GPU generations (tensor-core models of V100 to B200 and MI300X)?",
        .default_formats = "bf16,fp16",
        .default_orders = "seq",
        .opts = opts,
        .nopts = (int)(sizeof opts / sizeof opts[0]),
        .no_orders = "sweeps GPU architectures (--archs), each a tc:ARCH order",
        .cpu_only = "CPU emulation of the tensor cores only",
        .summary =
            "the same LM head computed with each chosen GPU generation's tensor-core arithmetic (its block size, extra "
            "alignment bits and rounding): the tables count the fp32 logits that differ bit for bit between generations, "
            "how often the argmax and a greedy text of SmolLM2-135M follow, and the exact top-2 gap where they do. Generations "
            "that share a row of the architecture table (H100 and B200; Ada and A100 for fp16 and bf16) compute identically "
            "and cannot differ; the takeaway in the fragment states what this run found."};
    drift_cli_t cli;
    drift_cli_parse(&cli, &spec, argc, argv);
    for (int f = 0; f < cli.nformats; f++)
        if (cli.formats[f] != DRIFT_BF16 && cli.formats[f] != DRIFT_FP16 && cli.formats[f] != DRIFT_TF32)
            drift_die("--formats: %s has no tensor-core LM head here (accepted: bf16, fp16, tf32)",
                drift_format_name(cli.formats[f]));
    if (gaps.n > MAXG) drift_die("--gaps: at most %d values", MAXG);
    for (int g = 0; g < gaps.n; g++)
        if (!(gaps.v[g] > 0 && gaps.v[g] < 1)) drift_die("--gaps: %g is not in (0, 1) (gaps in units of s)", gaps.v[g]);
    drift_tc_arch_t arch[MAXA];
    int na = 0;
    char err[DRIFT_LLM_ERR_MAX];
    if (drift_arch_set_parse(arch, &na, MAXA, archs_opt, err, sizeof err)) drift_die("--archs: %s", err);
    const size_t K = (size_t)K_, V = (size_t)V_, R = (size_t)R_, NP = (size_t)P_;
    const int nf = cli.nformats, ns = (int)nseeds, ng = gaps.n, NR = (int)NR_, NT = (int)NT_;
    if (K <= DRIFT_PLANT_FINE + 1) drift_die("--K: at least %d", DRIFT_PLANT_FINE + 2);
    if (V * K > ((size_t)1 << 28)) drift_die("--V x --K: at most 2^28 weights (%zu x %zu)", V, K);
    /* every logit of every architecture and pair is held for the medians: bound what that takes */
    const int npair = drift_pair_count(na); /* (a, b) with b > a, b == na: exact */
    if ((size_t)(na + 1) * R * V > ((size_t)1 << 27) ||
        (size_t)ns * R * V * (size_t)nf * (size_t)npair > ((size_t)1 << 27))
        drift_die(
            "--rows x --V: too many logits to hold (%zu x %zu per seed, %d seeds, %d architectures; at most 2^27 in all)",
            R, V, ns, na);
    int text_f[4] = {0}, ntf = 0; /* 1: the format's greedy text is decoded */
    {
        char buf[256];
        if (strlen(tf_opt) >= sizeof buf) drift_die("--text-formats: too long");
        strcpy(buf, tf_opt);
        for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
            drift_format_t tf;
            int hit = -1;
            if (drift_format_parse(&tf, t))
                drift_die("--text-formats: unknown format '%s' (accepted: formats of --formats)", t);
            for (int f = 0; f < cli.nformats; f++)
                if (cli.formats[f] == tf) hit = f;
            if (hit >= 0) ntf += !text_f[hit], text_f[hit] = 1;
        }
        /* a format not in --formats is skipped, not refused: --formats fp16 against the profile's bf16,fp16 decodes fp16 */
    }
    if (drift_llm_run_choose(&ckpt, &cli, NULL)) return DRIFT_EXIT_SKIPPED;
    drift_checkpoint_t ck;
    if (drift_checkpoint_read(&ck, ckpt, err, sizeof err)) drift_die("--checkpoint: %s", err);
    if (set && !ck.gguf)
        drift_die("--prompt-set: a llama2.c checkpoint holds no tokenizer (its prompts are BOS and a random token)");
    const int VT = ck.cfg.vocab_size;
    if (VT < 4) drift_die("--checkpoint: a vocabulary of %d has no token to prompt with", VT);
    /* the prompts of every seed, decoded together: [seed][prompt] */
    int **prompts = calloc((size_t)ns * NR, sizeof *prompts), *plen = calloc((size_t)ns * NR, sizeof *plen),
        *ptag = calloc((size_t)ns * NR, sizeof *ptag);
    if (!prompts || !plen || !ptag)
        drift_die_oom((double)ns * NR * 3 * sizeof(int *), "the prompts (--prompts: fewer)");
    int maxlen = 0, minlen = 1 << 30;
    for (int si = 0; si < ns; si++) {
        uint64_t seed = cli.seed + (uint64_t)si;
        drift_chat_prompt_t *cp = NULL;
        if (ck.gguf && drift_chat_prompts_load(&cp, &ck, set ? set : DRIFT_SOURCE_DIR "/prompts/lab-prompts.txt", NR,
                           seed, EXP ".prompt", 512, err, sizeof err))
            drift_die("--prompt-set: %s", err);
        for (int r = 0; r < NR; r++) {
            int i = si * NR + r, n = cp ? cp[r].n : 2;
            if (!(prompts[i] = malloc((size_t)n * sizeof(int)))) drift_die_oom((double)n * sizeof(int), "a prompt");
            if (cp)
                memcpy(prompts[i], cp[r].tok, (size_t)n * sizeof(int)), ptag[i] = cp[r].index;
            else { /* BOS and a random first token (not 0-2: unk, bos, eos) */
                drift_stream_t s;
                drift_stream_init(&s, seed, drift_fnv1a32(EXP ".prompt"), (uint32_t)r, 0);
                prompts[i][0] = 1, prompts[i][1] = ptag[i] = 3 + (int)drift_stream_below(&s, (uint32_t)VT - 3);
            }
            plen[i] = n, maxlen = n > maxlen ? n : maxlen, minlen = n < minlen ? n : minlen;
        }
        if (cp) drift_chat_prompts_free(cp, NR);
    }
    char pdesc[600];
    if (ck.gguf)
        snprintf(pdesc, sizeof pdesc, "drawn by the seed from %s, in the model's chat template, %d to %d tokens",
            set ? set : "prompts/lab-prompts.txt", minlen, maxlen);
    else
        snprintf(pdesc, sizeof pdesc, "BOS and a random first token");
    if (maxlen + NT - 1 > ck.cfg.seq_len)
        drift_die("--tokens: the prompt (%d) and %d tokens must fit the context of %d", maxlen, NT, ck.cfg.seq_len);
    /* kept logits of the greedy texts, one model's weights (double and float) and KV caches (a slot per prompt), the exact
     * model's weights, the head's logits */
    const double params =
        (double)ck.cfg.n_layers * ck.cfg.dim *
            (2.0 * ck.cfg.dim + 2.0 * ck.cfg.dim * ck.cfg.n_kv_heads / ck.cfg.n_heads + 3.0 * ck.cfg.hidden_dim) +
        2.0 * VT * ck.cfg.dim;
    drift_require_memory(&cli,
        8.0 * na * ns * NR * (double)(NT + 1) * VT + 20.0 * params +
            16.0 * ns * NR * ck.cfg.n_layers * (double)(maxlen + NT) * ck.cfg.dim +
            8.0 * (na + 1) * (double)R * V * (2 + nf * ns),
        "--prompts, --tokens, --rows, --V");

    /* recipes and greedy models per (format, arch); ok = the architecture has a path for the format */
    drift_recipe_t rec[4][MAXA];
    int ok[4][MAXA], gok[MAXA];
    drift_arch_greedy_t *ag[4];
    for (int f = 0; f < nf; f++) {
        ag[f] = NULL;
        if (text_f[f] && drift_arch_greedy_create(&ag[f], &ck, cli.formats[f], arch, na, ns * NR, gok, err, sizeof err))
            drift_die("%s greedy models: %s", drift_format_name(cli.formats[f]), err);
        for (int a = 0; a < na; a++)
            if ((ok[f][a] = drift_arch_head_recipe(&rec[f][a], cli.formats[f], arch[a]) == 0),
                text_f[f] && ok[f][a] != gok[a])
                drift_die("%s on %s: the LM head and the transformer disagree on the tensor-core path",
                    drift_format_name(cli.formats[f]), drift_tc_arch_name(arch[a]));
    }

    /* -- measure -- */
#define PIDX(a, b) drift_pair_index((a), (b), na)
#define OKP(f, a, b) (ok[f][a] && ((b) == na || ok[f][b]))
    /* the (format, a, b) with a path for both (b == na: exact), in that order; shown in the fragment's
     * head tables: each against exact and adjacent generations */
    drift_gg_pair_t fab[4 * (MAXA + 1) * MAXA / 2];
    int nfab = 0;
    for (int f = 0; f < nf; f++)
        for (int a = 0; a < na; a++)
            for (int b = a + 1; b <= na; b++)
                if (OKP(f, a, b)) fab[nfab] = (drift_gg_pair_t){f, a, b, PIDX(a, b), b == na || b == a + 1}, nfab++;
#define EACH(q, F)                                            \
    for (const drift_gg_pair_t *q = fab; q < fab + nfab; q++) \
        if (q->f == (F))
    drift_count_t *arg = calloc((size_t)ns * nf * 2 * npair, sizeof *arg);        /* [seed][f][logits][pair] */
    unsigned char *rowdiff = calloc((size_t)ns * nf * R * 2 * npair, 1);          /* [seed][f][row][logits][pair] */
    drift_count_t *close = calloc((size_t)ns * nf * MAXG * npair, sizeof *close); /* [seed][f][gap][pair] */
    drift_count_t *gcnt = calloc((size_t)ns * nf * npair, sizeof *gcnt);          /* [seed][f][pair], greedy */
    long *hist = calloc((size_t)nf * npair * NBIN, sizeof *hist); /* [f][pair][bin], fp32 logits, all seeds */
    int64_t **ulps = calloc((size_t)nf * npair, sizeof *ulps);    /* [f][pair]: all seeds' ulp distances */
    double **sdiff = calloc((size_t)nf * npair, sizeof *sdiff);
    size_t nlog = (size_t)ns * R * V, nparts = 0;
    double *Wd = malloc(V * K * sizeof *Wd);
    drift_gg_part_t *parts = malloc((size_t)ns * nf * npair * NR * sizeof *parts);
    drift_parting_t *pbuf = malloc((size_t)ns * NR * npair * sizeof *pbuf); /* [seed][prompt][pair] */
    double *topgap = malloc((size_t)ns * nf * NR * NT * sizeof *topgap);    /* computed top-1/top-2 gaps, all steps */
    if (!arg || !rowdiff || !close || !gcnt || !hist || !ulps || !sdiff || !Wd || !parts || !pbuf || !topgap)
        drift_die_oom(8.0 * (double)V * K + (double)ns * nf * R * 2 * npair +
                          (double)ns * nf * npair * NR * sizeof *parts + 8.0 * ns * nf * NR * NT,
            "the %zu x %zu head and the tables of %d seeds x %d formats x %d pairs (--V, --K, --rows: smaller)",
            (size_t)V, (size_t)K, ns, nf, npair);
    for (int t = 0; t < nf * npair; t++) {
        ulps[t] = malloc(nlog * sizeof **ulps), sdiff[t] = malloc(nlog * sizeof **sdiff);
        if (!ulps[t] || !sdiff[t])
            drift_die_oom(16.0 * (double)nlog, "the distances of %zu logits (--seeds, --rows, --V: smaller)", nlog);
    }
    size_t steps = (size_t)ns * nf * 2 + ntf, done = 0, ntopgap = 0, topgap_at[MAXS + 1];
    long unreached = 0; /* planted pairs whose exact gap missed the target by more than DRIFT_PLANT_TOL */
    for (int si = 0; si < ns; si++) {
        uint64_t seed = cli.seed + (uint64_t)si;
        drift_stream_t s;
        drift_hidden_model_t model;
        drift_stream_init(&s, seed, drift_fnv1a32(EXP ".model"), (uint32_t)K, 0);
        if (drift_hidden_model(&model, K, &s)) drift_die("hidden model failed");
        if (drift_gen_head(Wd, NULL, NULL, NULL, V, K, seed, drift_fnv1a32(EXP ".W")))
            drift_die_oom(
                8.0 * (double)V * K, "generating the %zu x %zu head (--V, --K: smaller)", (size_t)V, (size_t)K);
        double *H0 = malloc(R * K * sizeof *H0);
        if (!H0)
            drift_die_oom(
                (double)R * K * sizeof *H0, "%zu hidden rows of %zu (--rows, --K: smaller)", (size_t)R, (size_t)K);
        for (size_t r = 0; r < R; r++) {
            drift_stream_init(&s, seed, drift_fnv1a32(EXP ".h"), (uint32_t)K, (uint32_t)r);
            drift_gen_hidden(H0 + r * K, &model, &s);
        }
        for (int f = 0; f < nf; f++) {
            drift_format_t in = cli.formats[f];
            drift_progress(&cli, done++, steps);
            /* (1) realistic head: every logit of every architecture and the exact ones (arch_head.h) */
            drift_count_t *ca = &arg[((size_t)si * nf + f) * 2 * npair];
            int rc = drift_arch_head_compare(ca, rowdiff + ((size_t)si * nf + f) * R * 2 * npair, ulps + f * npair,
                sdiff + f * npair, (size_t)si * R * V, hist + (size_t)f * npair * NBIN, H0, Wd, R, V, K, in, rec[f],
                ok[f], na);
            if (rc) drift_die("%s logits: %s", drift_format_name(in), drift_strerror(rc));
            drift_progress(&cli, done++, steps);
            /* (2) close calls: planted pairs (close_calls.h) */
            for (int g = 0; g < ng; g++)
                if (drift_close_call_counts(&close[(((size_t)si * nf + f) * MAXG + g) * npair], &unreached, &model, V,
                        K, gaps.v[g], in, rec[f], ok[f], na, seed, drift_fnv1a32(EXP ".close"), (uint32_t)(g * 4 + f),
                        NP))
                    drift_die("planted close calls failed (out of memory or an unreachable gap)");
        }
        free(H0);
    }
    /* (3) greedy text: every architecture decodes every seed's prompts (one model at a time); where do pairs part? */
    double *tg = malloc((size_t)ns * NR * NT * sizeof *tg);
    if (!tg) drift_die_oom(8.0 * ns * NR * NT, "the top-2 gaps of %d prompts x %d tokens", ns * NR, NT);
    for (int f = 0; f < nf; f++) {
        if (!text_f[f]) continue;
        drift_progress(&cli, done++, steps);
        int rc = drift_arch_greedy_run(ag[f], pbuf, tg, (const int *const *)prompts, plen, NT, err, sizeof err);
        if (rc)
            drift_die("%s greedy decoding: %s", drift_format_name(cli.formats[f]),
                rc == DRIFT_ENOMEM ? "out of memory" : err);
        int any = 0; /* the gaps were written when some architecture has a path */
        for (int a = 0; a < na; a++) any |= ok[f][a];
        for (int si = 0; si < ns && any; si++) /* topgap is in (seed, format, prompt, step) order */
            memcpy(topgap + (size_t)(si * nf + f) * NR * NT, tg + (size_t)si * NR * NT, (size_t)NR * NT * sizeof *tg);
        for (int si = 0; si < ns; si++)
            for (int r = 0; r < NR; r++) EACH(q, f) if (q->b < na)
                {
                    const drift_parting_t *p = &pbuf[((size_t)si * NR + r) * npair + q->p];
                    drift_count_t *c = &gcnt[((size_t)si * nf + f) * npair + q->p];
                    c->n++, c->k += p->step >= 0;
                    if (p->step >= 0) parts[nparts++] = (drift_gg_part_t){si, f, r, q->a, q->b, ptag[si * NR + r], *p};
                }
    }
    free(tg);
    /* parts[] in (seed, format, prompt, pair) order, as the report reads it */
    for (size_t i = 1; i < nparts; i++)
        for (size_t j = i; j > 0 && (parts[j - 1].si > parts[j].si ||
                                        (parts[j - 1].si == parts[j].si && parts[j - 1].f > parts[j].f));
             j--) {
            drift_gg_part_t t = parts[j];
            parts[j] = parts[j - 1], parts[j - 1] = t;
        }
    /* topgap: the formats that ran, packed per seed */
    for (int si = 0; si < ns; si++) {
        topgap_at[si] = ntopgap;
        for (int f = 0; f < nf; f++) {
            int any = 0;
            for (int a = 0; a < na; a++) any |= ok[f][a];
            if (!text_f[f] || !any) continue;
            memmove(topgap + ntopgap, topgap + (size_t)(si * nf + f) * NR * NT, (size_t)NR * NT * sizeof *topgap);
            ntopgap += (size_t)NR * NT;
        }
    }
    topgap_at[ns] = ntopgap;
    drift_progress(&cli, steps, steps);

    const drift_gpu_gen_lab_t lab = {&cli, archs_opt, ckpt, K, V, R, NP, nf, ns, ng, na, npair, NR, NT, ck.cfg.dim,
        ck.cfg.n_layers, VT, gaps.v, arch, (const int(*)[MAXA])ok, fab, nfab, arg, rowdiff, close, gcnt, hist, ulps,
        sdiff, nlog, parts, nparts, topgap, topgap_at, unreached, text_f, pdesc, ck.gguf != NULL};
    drift_gpu_gen_write(&lab); /* gpu_generations_report.c */
    for (int t = 0; t < nf * npair; t++) free(ulps[t]), free(sdiff[t]);
    for (int f = 0; f < nf; f++) drift_arch_greedy_free(ag[f]);
    drift_checkpoint_free(&ck);
    free(ulps), free(sdiff), free(arg), free(rowdiff), free(close), free(gcnt), free(hist), free(Wd);
    for (int i = 0; i < ns * NR; i++) free(prompts[i]);
    free(parts), free(pbuf), free(topgap), free(prompts), free(plen), free(ptag);
    return 0;
}
