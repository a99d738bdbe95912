/* gpu_generations_greedy.c — does the same model write a different greedy text on different GPUs?
 *
 * Question: one whole transformer computed with the tensor-core model of each GPU generation
 * (--archs, default tc:v100, tc:a100, tc:h100, tc:b200 and AMD's tc:mi300x; tc:ada computes
 * fp16/bf16 as tc:a100; recipes FORMAT/tc:ARCH/fp32/fp32, arch_set.h). How often do the
 * greedy texts of two generations part, and how close to a tie is the step where they do?
 * (gpu_generations asks the same of one LM head, without the rest of the model.)
 *
 * What it measures, per seed (--seed, --seeds consecutive seeds) and input format
 * (--text-formats: bf16, fp16; V100 has no bf16 path, so it is absent from the bf16 rows):
 * SmolLM2-135M-Instruct (GGUF; stories260K with --checkpoint and in the quick profile) with
 * every matmul (QKV, attention output, MLP, LM head) under the architecture's recipe decodes
 * --prompts prompts per seed (SmolLM2: drawn by the seed from the lab's prompt set, in its
 * chat template; llama2.c: BOS and a random first token) for --tokens greedy tokens
 * (greedy_batch.h); per pair of architectures, the completions that differ, the first
 * differing step, and there the exact (fp64 reference, teacher-forced on the common context)
 * top-1/top-2 gap and the two generations' largest logit difference (parting.h).
 * Rates carry Wilson 95% intervals.
 *
 * How to run:
 *   ./lab run gpu_generations_greedy
 *   build/bin/gpu_generations_greedy --profile quick --archs a100,h100
 *   ./lab plot gpu_generations_greedy    plots/gpu_generations_greedy.png
 *
 * What to look for: greedy texts part only where the exact top-1/top-2 gap is as small as
 * the generations' logit differences there. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch_greedy.h"
#include "arch_set.h"
#include "chat_prompts.h"
#include "checkpoint.h"
#include "cli.h"
#include "drift.h"
#include "gpu_generations_greedy_lab.h"
#include "llm_run.h"
#include "pair_stats.h"
#include "philox.h"

#define EXP "gpu_generations_greedy"
/* The prompts' streams keep the name of gpu_generations, of which this greedy text was a part:
 * the same seed draws the same prompts as before the two were split. */
#define PROMPT_KEY "gpu_generations.prompt"
#define MAXA DRIFT_GGG_MAXA
#define MAXF DRIFT_GGG_MAXF
#define MAXS DRIFT_GGG_MAXS

int main(int argc, char **argv)
{
    long nseeds = 3, NR_ = 0, NT_ = 0;
    const char *archs_opt = "v100,a100,h100,b200,mi300x", *ckpt = NULL, *set = NULL, *tf_opt = NULL;
    const drift_cli_opt_t opts[] = {
        {"seeds", DRIFT_OPT_INT, &nseeds, "N", "consecutive seeds from --seed (default 3)", 1, MAXS, {0}},
        {"archs", DRIFT_OPT_STRING, &archs_opt, "LIST",
            "tensor-core architectures, in generation order (default v100,a100,h100,b200,mi300x; ada computes fp16/bf16 as a100)",
            0, 0, {0}},
        {"prompts", DRIFT_OPT_INT, &NR_, "N", "prompts per seed", 1, 4096, {"2", "1", "16"}},
        {"tokens", DRIFT_OPT_INT, &NT_, "N", "tokens each prompt generates", 1, 4096, {"8", "10", "64"}},
        /* a real model's decode is the run's cost: the default profile decodes bf16 only */
        {"text-formats", DRIFT_OPT_LIST, &tf_opt, "LIST", "input formats of the tensor cores (bf16, fp16, tf32)", 0, 0,
            {"bf16,fp16", "bf16", "bf16,fp16"}},
        {"checkpoint", DRIFT_OPT_STRING, &ckpt, "FILE",
            "checkpoint, llama2.c .bin or GGUF (default SmolLM2-135M-Instruct; stories260K in the quick profile)", 0, 0,
            {0}},
        {"prompt-set", DRIFT_OPT_STRING, &set, "FILE",
            "the prompt set a GGUF model's prompts are drawn from (default prompts/lab-prompts.txt)", 0, 0, {0}},
    };
    const drift_cli_spec_t spec = {.name = EXP,
        .question = "Does the real model's greedy text part between GPU generations' tensor-core models?",
        .default_orders = "seq",
        DRIFT_CLI_OPTS(opts),
        .no_orders =
            "decodes in the formats of --text-formats and sweeps GPU architectures (--archs), each a tc:ARCH order",
        .cpu_only = "CPU emulation of the tensor cores only",
        .summary =
            "a greedy text of SmolLM2-135M with every matmul computed with each chosen GPU generation's tensor-core "
            "arithmetic (its block size, extra alignment bits and rounding): the table counts the prompts whose "
            "completions part between two generations, and gives the first differing step and the exact top-2 gap "
            "there. Generations that share a row of the architecture table (H100 and B200; Ada and A100 for fp16 and "
            "bf16) compute identically and cannot part; the takeaway in the fragment states what this run found."};
    drift_cli_t cli;
    drift_cli_parse(&cli, &spec, argc, argv);
    drift_format_t fmt[MAXF];
    int nf = 0;
    {
        char buf[256];
        if (strlen(tf_opt) >= sizeof buf) drift_die("--text-formats: too long");
        strcpy(buf, tf_opt);
        for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
            drift_format_t tf = drift_format_arg("--text-formats", t);
            if (tf != DRIFT_BF16 && tf != DRIFT_FP16 && tf != DRIFT_TF32)
                drift_die("--text-formats: %s has no tensor-core path here (accepted: bf16, fp16, tf32)", t);
            for (int f = 0; f < nf; f++)
                if (fmt[f] == tf) drift_die("--text-formats: '%s' is the same format as an earlier one", t);
            fmt[nf++] = tf;
        }
    }
    drift_tc_arch_t arch[MAXA];
    int na = 0;
    char err[DRIFT_LLM_ERR_MAX];
    if (drift_arch_set_parse(arch, &na, MAXA, archs_opt, err, sizeof err)) drift_die("--archs: %s", err);
    const int ns = (int)nseeds, NR = (int)NR_, NT = (int)NT_, npair = drift_pair_count(na);
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
                           seed, PROMPT_KEY, 512, err, sizeof err))
            drift_die("--prompt-set: %s", err);
        for (int r = 0; r < NR; r++) {
            int i = si * NR + r, n = cp ? cp[r].n : 2;
            if (!(prompts[i] = malloc((size_t)n * sizeof(int)))) drift_die_oom((double)n * sizeof(int), "a prompt");
            if (cp)
                memcpy(prompts[i], cp[r].tok, (size_t)n * sizeof(int)), ptag[i] = cp[r].index;
            else { /* BOS and a random first token (not 0-2: unk, bos, eos) */
                drift_stream_t s;
                drift_stream_init(&s, seed, drift_fnv1a32(PROMPT_KEY), (uint32_t)r, 0);
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
     * model's weights */
    const double params =
        (double)ck.cfg.n_layers * ck.cfg.dim *
            (2.0 * ck.cfg.dim + 2.0 * ck.cfg.dim * ck.cfg.n_kv_heads / ck.cfg.n_heads + 3.0 * ck.cfg.hidden_dim) +
        2.0 * VT * ck.cfg.dim;
    drift_require_memory(&cli,
        8.0 * na * ns * NR * (double)(NT + 1) * VT + 20.0 * params +
            16.0 * ns * NR * ck.cfg.n_layers * (double)(maxlen + NT) * ck.cfg.dim,
        "--prompts, --tokens");

    /* greedy models per (format, arch); ok = the architecture has a path for the format, as its LM-head recipe says */
    int ok[MAXF][MAXA];
    drift_arch_greedy_t *ag[MAXF];
    for (int f = 0; f < nf; f++) {
        if (drift_arch_greedy_create(&ag[f], &ck, fmt[f], arch, na, ns * NR, ok[f], err, sizeof err))
            drift_die("%s greedy models: %s", drift_format_name(fmt[f]), err);
        for (int a = 0; a < na; a++) {
            drift_recipe_t head;
            if ((drift_arch_head_recipe(&head, fmt[f], arch[a]) == 0) != ok[f][a])
                drift_die("%s on %s: the LM head and the transformer disagree on the tensor-core path",
                    drift_format_name(fmt[f]), drift_tc_arch_name(arch[a]));
        }
    }

    /* -- measure: every architecture decodes every seed's prompts (one model at a time); where do pairs part? -- */
    drift_count_t *gcnt = calloc((size_t)ns * nf * npair, sizeof *gcnt); /* [seed][f][pair] */
    drift_ggg_part_t *parts = malloc((size_t)ns * nf * npair * NR * sizeof *parts);
    drift_parting_t *pbuf = malloc((size_t)ns * NR * npair * sizeof *pbuf); /* [seed][prompt][pair] */
    double *topgap = malloc((size_t)ns * nf * NR * NT * sizeof *topgap);    /* computed top-1/top-2 gaps, all steps */
    double *tg = malloc((size_t)ns * NR * NT * sizeof *tg);
    if (!gcnt || !parts || !pbuf || !topgap || !tg)
        drift_die_oom((double)ns * nf * npair * NR * (sizeof *parts + sizeof *pbuf) + 16.0 * ns * nf * NR * NT,
            "the partings and top-2 gaps of %d seeds x %d formats x %d pairs x %d prompts", ns, nf, npair, NR);
    size_t nparts = 0, ntopgap = 0, topgap_at[MAXS + 1];
    for (int f = 0; f < nf; f++) {
        drift_progress(&cli, (size_t)f, (size_t)nf);
        int rc = drift_arch_greedy_run(ag[f], pbuf, tg, (const int *const *)prompts, plen, NT, err, sizeof err);
        if (rc)
            drift_die("%s greedy decoding: %s", drift_format_name(fmt[f]), rc == DRIFT_ENOMEM ? "out of memory" : err);
        int any = 0; /* the gaps were written when some architecture has a path */
        for (int a = 0; a < na; a++) any |= ok[f][a];
        for (int si = 0; si < ns && any; si++) /* topgap is in (seed, format, prompt, step) order */
            memcpy(topgap + (size_t)(si * nf + f) * NR * NT, tg + (size_t)si * NR * NT, (size_t)NR * NT * sizeof *tg);
        for (int si = 0; si < ns; si++)
            for (int r = 0; r < NR; r++)
                for (int a = 0; a < na; a++)
                    for (int b = a + 1; b < na; b++) {
                        if (!ok[f][a] || !ok[f][b]) continue;
                        const int p = drift_pair_index(a, b, na);
                        const drift_parting_t *q = &pbuf[((size_t)si * NR + r) * npair + p];
                        drift_count_t *c = &gcnt[((size_t)si * nf + f) * npair + p];
                        c->n++, c->k += q->step >= 0;
                        if (q->step >= 0) parts[nparts++] = (drift_ggg_part_t){si, f, r, a, b, ptag[si * NR + r], *q};
                    }
    }
    free(tg);
    /* parts[] in (seed, format, prompt, pair) order, as the report reads it */
    for (size_t i = 1; i < nparts; i++)
        for (size_t j = i; j > 0 && (parts[j - 1].si > parts[j].si ||
                                        (parts[j - 1].si == parts[j].si && parts[j - 1].f > parts[j].f));
             j--) {
            drift_ggg_part_t t = parts[j];
            parts[j] = parts[j - 1], parts[j - 1] = t;
        }
    /* topgap: the formats that ran, packed per seed */
    for (int si = 0; si < ns; si++) {
        topgap_at[si] = ntopgap;
        for (int f = 0; f < nf; f++) {
            int any = 0;
            for (int a = 0; a < na; a++) any |= ok[f][a];
            if (!any) continue;
            memmove(topgap + ntopgap, topgap + (size_t)(si * nf + f) * NR * NT, (size_t)NR * NT * sizeof *topgap);
            ntopgap += (size_t)NR * NT;
        }
    }
    topgap_at[ns] = ntopgap;
    drift_progress(&cli, (size_t)nf, (size_t)nf);

    const drift_gpu_gen_greedy_lab_t lab = {&cli, archs_opt, ckpt, nf, ns, na, npair, NR, NT, ck.cfg.dim,
        ck.cfg.n_layers, VT, fmt, arch, (const int(*)[MAXA])ok, gcnt, parts, nparts, topgap, topgap_at, pdesc,
        ck.gguf != NULL};
    drift_gpu_gen_greedy_write(&lab); /* gpu_generations_greedy_report.c */
    for (int f = 0; f < nf; f++) drift_arch_greedy_free(ag[f]);
    drift_checkpoint_free(&ck);
    for (int i = 0; i < ns * NR; i++) free(prompts[i]);
    free(gcnt), free(parts), free(pbuf), free(topgap), free(prompts), free(plen), free(ptag);
    return 0;
}
