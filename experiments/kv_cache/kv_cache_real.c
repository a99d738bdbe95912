/* kv_cache_real.c — kv_cache's real-model part (kv_cache_real.h). */
#include "kv_cache_real.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "deployment.h"
#include "drift.h"
#include "llm_run.h"
#include "pair_stats.h"
#include "stats.h"

void kv_real_prepare(
    kv_real_t *R, const drift_cli_t *cli, const char *list, long N, long T, const char *ckpt, const char *set)
{
    memset(R, 0, sizeof *R);
    R->N = (int)N, R->T = (int)T;
    char err[DRIFT_LLM_ERR_MAX];
    if (!N) return;
    snprintf(R->base_spec, sizeof R->base_spec, REAL_PRESET ",kv=bf16");
    if ((R->base = drift_deploy_run_find(R->runs, &R->nrun, DRIFT_KV_MAX + 1, R->base_spec, 0, err, sizeof err)) < 0)
        drift_die("--real-kv: %s", err);
    drift_kv_format_t f[DRIFT_KV_MAX];
    R->nkv = drift_kv_format_list(
        f, R->kvn, "--real-kv", list, "fp64, fp32, tf32, fp16, fp8e4m3, fp8e5m2, int8:token, int8:head");
    for (int c = 0; c < R->nkv; c++) {
        if (f[c].storage == DRIFT_KV_FLOAT && f[c].fmt == DRIFT_BF16)
            drift_die("--real-kv: bf16 is the baseline (the preset's own cache), not a format to compare with it");
        snprintf(R->spec[c], sizeof R->spec[0], REAL_PRESET ",kv=%.31s", R->kvn[c]);
        if ((R->run_of[c] =
                    drift_deploy_run_find(R->runs, &R->nrun, DRIFT_KV_MAX + 1, R->spec[c], 0, err, sizeof err)) < 0)
            drift_die("--real-kv: %s", err);
    }
    if (!ckpt && !(ckpt = drift_real_checkpoint())) {
        if (!cli->quiet)
            fprintf(stderr,
                "kv_cache: the real-model part is skipped: no models/SmolLM2-135M-Instruct.Q4_1.gguf (./lab models get smollm2-135m), or give --checkpoint FILE\n");
        return;
    }
    if (drift_checkpoint_read(&R->ck, ckpt, err, sizeof err)) drift_die("--checkpoint: %s", err);
    if (!R->ck.gguf)
        drift_die("--checkpoint: %s: the real-model part needs a GGUF model (its tokenizer and chat template)", ckpt);
    if (T >= R->ck.cfg.seq_len)
        drift_die("--real-tokens: at most %d on this model (its context)", R->ck.cfg.seq_len - 1);
    if (drift_chat_prompts_load(&R->pr, &R->ck, set ? set : DRIFT_SOURCE_DIR "/prompts/lab-prompts.txt", R->N,
            cli->seed, "kv_cache.prompts", R->ck.cfg.seq_len - R->T, err, sizeof err))
        drift_die("--prompt-set: %s", err);
    R->ckpt = strrchr(ckpt, '/') ? strrchr(ckpt, '/') + 1 : ckpt;
    R->on = 1;
}

static void kv_real_progress(void *cli, size_t done, size_t total) { drift_progress(cli, done, total); }

/* Every run decodes every prompt, then each format's text is held against the baseline's. */
void kv_real_run(kv_real_t *R, drift_cli_t *cli)
{
    if (!R->on) return;
#ifdef _OPENMP
    omp_set_num_threads(
        1); /* the model's GEMMs are a few dozen wide: a parallel region each costs more than it saves */
    const int workers = cli->threads > 0 ? cli->threads : omp_get_num_procs();
#else
    const int workers = 1;
#endif
    drift_progress_phase(cli, "real model: decode");
    if (drift_deploy_runs(
            R->runs, R->nrun, &R->ck, R->pr, R->N, R->T, "kv_cache.batch", workers, kv_real_progress, cli))
        drift_die("a real-model decode failed (or out of memory for its model)");
    R->pt = calloc((size_t)R->nkv * (size_t)R->N, sizeof *R->pt);
    if (!R->pt)
        drift_die_oom((double)R->nkv * R->N * sizeof *R->pt, "the partings of %d formats x %d prompts", R->nkv, R->N);
    for (int c = 0; c < R->nkv; c++)
        for (int i = 0; i < R->N; i++) {
            const drift_gen_t *a = &R->runs[R->base].g[i], *b = &R->runs[R->run_of[c]].g[i];
            if (drift_parting(&R->pt[c * R->N + i], a->token, NULL, b->token, NULL, a->n < b->n ? a->n : b->n,
                    R->ck.cfg.vocab_size, R->pr[i].tok, R->pr[i].n, NULL))
                drift_die("the parting of two decodes failed");
        }
}

/* The per-prompt and per-format CSVs and the Markdown table (before the takeaway). */
void kv_real_write(kv_real_t *R, drift_out_t *out, int t_rows, int t_sum, int t_md)
{
    if (!R->on) {
        drift_md_text(out,
            "The real-model part (SmolLM2-135M decoded with its KV cache in each format) was not run: %s.\n\n",
            R->N ? "no models/SmolLM2-135M-Instruct.Q4_1.gguf on this machine" : "--real-prompts 0");
        return;
    }
    char base[DRIFT_DEPLOY_SPEC_MAX];
    drift_deployment_print(base, sizeof base, &R->runs[R->base].dep);
    drift_out_meta(out, t_rows, "table",
        "per (prompt, KV storage): %s, %d prompts of the lab's prompt set (chat template, drawn by seed %llu), %d greedy tokens under `%s,kv=F` against kv=bf16 (%s)",
        R->ckpt, R->N, (unsigned long long)R->pr[0].seed, R->T, REAL_PRESET, base);
    drift_out_meta(out, t_rows, "columns",
        "parted = the texts differ within the tokens; step = the first differing token (0-based, -1: none); "
        "token_bf16 / token_kv = the tokens chosen there; gap_bf16 / gap_kv = each run's own top-1 minus top-2 logit there (the deployment's gap, "
        "not the exact model's)");
    drift_out_meta(out, t_sum, "table",
        "per KV storage: the prompts whose text parts from the kv=bf16 run's, "
        "with the Wilson 95%% interval (the prompt is the unit), the parting steps, the kv=bf16 run's own top-1/top-2 gap there");
    drift_md_text(out,
        "%s decodes %d prompts of the lab's prompt set (chat template, drawn by the seed), %d greedy tokens each, "
        "under `%s` with only `kv` changed: an A100 alone in the `" REAL_PRESET
        "` preset. The baseline is the preset's own bf16 cache: "
        "K and V are rounded to bf16 before they are stored, so it holds what the kernels computed. "
        "The gap is the baseline run's own top-1 minus top-2 logit at the parting step (bf16 logits; the exact model's pass was not run).\n\n",
        R->ckpt, R->N, R->T, base);
    double *st = malloc((size_t)R->N * sizeof *st), *gp = malloc((size_t)R->N * sizeof *gp);
    if (!st || !gp) drift_die_oom(16.0 * R->N, "the summaries of %d prompts", R->N);
    for (int c = 0; c < R->nkv; c++) {
        long k = 0;
        int smin = -1, smax = -1;
        for (int i = 0; i < R->N; i++) {
            const drift_parting_t *p = &R->pt[c * R->N + i];
            const drift_gen_t *a = &R->runs[R->base].g[i], *b = &R->runs[R->run_of[c]].g[i];
            int s = p->step, on = s >= 0;
            double ga = on ? a->top1_logit[s] - a->top2_logit[s] : NAN,
                   gb = on ? b->top1_logit[s] - b->top2_logit[s] : NAN;
            if (on) st[k] = s, gp[k] = ga, k++, smin = smin < 0 || s < smin ? s : smin, smax = s > smax ? s : smax;
            drift_row(out, t_rows, DRIFT_INT(R->pr[i].index), DRIFT_TXT(R->pr[i].kind), DRIFT_INT(R->pr[i].n),
                DRIFT_TXT(R->kvn[c]), DRIFT_INT(on), DRIFT_INT(s), DRIFT_INT(on ? p->tok_a : -1),
                DRIFT_INT(on ? p->tok_b : -1), DRIFT_NUM(ga), DRIFT_NUM(gb));
        }
        double lo, hi, smed, gmed, gmax = -INFINITY;
        for (long j = 0; j < k; j++) gmax = gp[j] > gmax ? gp[j] : gmax;
        if (drift_wilson(&lo, &hi, k, R->N, DRIFT_Z95)) drift_die("no Wilson interval for %ld of %d", k, R->N);
        if (drift_median(&smed, st, (size_t)k) || drift_median(&gmed, gp, (size_t)k))
            drift_die("out of memory for a median");
        drift_row(out, t_sum, DRIFT_TXT(R->kvn[c]), DRIFT_TXT(R->spec[c]), DRIFT_INT(R->N), DRIFT_INT(R->T),
            DRIFT_INT(k), DRIFT_NUM((double)k / R->N), DRIFT_NUM(lo), DRIFT_NUM(hi), DRIFT_INT(smin),
            DRIFT_NUM(k ? smed : NAN), DRIFT_INT(smax), DRIFT_NUM(k ? gmed : NAN), DRIFT_NUM(k ? gmax : NAN));
        char rate[96], steps[64] = "-", gaps[64] = "-";
        drift_rate_text(rate, sizeof rate, k, R->N);
        if (k)
            snprintf(steps, sizeof steps, "%d / %.3g / %d", smin, smed, smax),
                snprintf(gaps, sizeof gaps, "%.3g / %.3g", gmed, gmax);
        drift_row(out, t_md, DRIFT_TXT(R->kvn[c]), DRIFT_TXT(rate), DRIFT_TXT(steps), DRIFT_TXT(gaps));
    }
    free(st), free(gp);
    drift_md_end(out, t_md);
}

/* The takeaway's line: which formats part texts from the baseline's, which never did, with bounds. */
void kv_real_takeaway(const kv_real_t *R, drift_out_t *out)
{
    if (!R->on) return;
    char parted[1024] = "", never[512] = "";
    for (int c = 0; c < R->nkv; c++) {
        long k = 0;
        for (int i = 0; i < R->N; i++) k += R->pt[c * R->N + i].step >= 0;
        char *d = k ? parted : never;
        size_t at = strlen(d), cap = k ? sizeof parted : sizeof never;
        if (k) {
            char rate[96];
            drift_rate_text(rate, sizeof rate, k, R->N);
            snprintf(d + at, cap - at, "%s%.31s %s", at ? "; " : "", R->kvn[c], rate);
        } else
            snprintf(d + at, cap - at, "%s%.31s", at ? ", " : "", R->kvn[c]);
    }
    double lo, hi;
    if (drift_wilson(&lo, &hi, 0, R->N, DRIFT_Z95)) drift_die("no Wilson interval for 0 of %d", R->N);
    drift_md_text(out,
        "- Real model (%s, `" REAL_PRESET ",kv=F` against its own bf16 cache; %d prompts x %d tokens): ", R->ckpt, R->N,
        R->T);
    if (parted[0]) drift_md_text(out, "texts parted under %s", parted);
    if (never[0])
        drift_md_text(
            out, "%snever under %s (0 of %d each, < %.2g %% at 95 %%)", parted[0] ? "; " : "", never, R->N, 100 * hi);
    drift_md_text(out, ".\n");
}

void kv_real_free(kv_real_t *R)
{
    if (!R->on) return;
    drift_deploy_runs_free(R->runs, R->nrun, R->N);
    drift_chat_prompts_free(R->pr, R->N);
    drift_checkpoint_free(&R->ck);
    free(R->pt);
}
