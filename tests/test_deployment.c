/* test_deployment.c — deployments as data (deployment.h): the spec grammar, the presets, and
 * one request decoded inside a deployment's batch.
 *
 * Expected values: SM counts and tensor-core generations from the vendors' documents (A100
 * whitepaper: 108 SMs; RTX 4090 = AD102 with 128 SMs, the Ada generation), hand-written
 * canonical specs, and invariants stated by the decoder's contract, checked against a second
 * path (drift_generate) rather than against the code under test. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "checkpoint.h"
#include "deployment.h"
#include "drift.h"

#define CKPT DRIFT_SOURCE_DIR "/models/stories260K.bin"

static void parse_ok(drift_deployment_t *d, const char *spec)
{
    char err[256] = "";
    cr_assert_eq(drift_deployment_parse(d, spec, err, sizeof err), 0, "%s: %s", spec, err);
}

Test(deployment, presets_parse_and_print_back)
{
    char names[200];
    drift_deployment_preset_names(names, sizeof names);
    cr_assert_str_eq(names, "hf-eager, vllm-like, llamacpp-cpu, llamacpp-cpu-avx512, lab-fp32");
    const char *list[] = {"hf-eager", "vllm-like", "llamacpp-cpu", "llamacpp-cpu-avx512", "lab-fp32"};
    for (size_t i = 0; i < sizeof list / sizeof *list; i++) {
        drift_deployment_t a, b;
        parse_ok(&a, list[i]);
        char s[DRIFT_DEPLOY_SPEC_MAX], t[DRIFT_DEPLOY_SPEC_MAX], diff[64];
        cr_assert_gt(drift_deployment_print(s, sizeof s, &a), 0);
        parse_ok(&b, s); /* the printed fields are a spec that gives the same deployment */
        cr_assert_gt(drift_deployment_print(t, sizeof t, &b), 0);
        cr_assert_str_eq(s, t);
        drift_deployment_diff(diff, sizeof diff, &a, &b);
        cr_assert_str_eq(diff, "");
    }
}

Test(deployment, vllm_like_spelled_out)
{
    drift_deployment_t d;
    parse_ok(&d, "vllm-like");
    char s[DRIFT_DEPLOY_SPEC_MAX];
    drift_deployment_print(s, sizeof s, &d);
    cr_assert_str_eq(s,
        "card=h100,engine=lab,weights=bf16,compute=bf16,act=bf16,gemm=vendor-like,attention=splitkv:auto,"
        "kv=bf16,batch=continuous:64,padded=no,prefill-chunk=256,prefix-cache=on,tp=1,allreduce=ring,"
        "draft=0,sampler=greedy");
    cr_assert_eq(d.nx.sms, 132); /* H100 SXM5: 132 SMs (NVIDIA H100 datasheet) */
}

Test(deployment, card_sets_tensor_cores_and_sms)
{
    drift_deployment_t a, b;
    parse_ok(&a, "vllm-like,card=a100");
    parse_ok(&b, "vllm-like,card=RTX-4090");
    cr_assert_eq(a.nx.sms, 108); /* A100 whitepaper: 108 SMs */
    cr_assert_eq(b.nx.sms, 128); /* RTX 4090 (AD102): 128 SMs */
    char ra[64], rb[64], diff[64];
    drift_recipe_print(ra, sizeof ra, &a.nx.mm[DRIFT_OP_QKV]);
    drift_recipe_print(rb, sizeof rb, &b.nx.mm[DRIFT_OP_LMHEAD]);
    cr_assert_str_eq(ra, "bf16/tc:a100/fp32/bf16");
    cr_assert_str_eq(rb, "bf16/tc:ada/fp32/bf16");
    drift_deployment_diff(diff, sizeof diff, &a, &b);
    cr_assert_str_eq(diff, "card"); /* one knob */
}

Test(deployment, fields_and_files)
{
    drift_deployment_t d;
    parse_ok(&d, "hf-eager,attention=flash:64,64,kv=fp8e4m3,tp=3,allreduce=tree");
    char s[DRIFT_DEPLOY_SPEC_MAX];
    drift_deployment_print(s, sizeof s, &d);
    cr_assert(strstr(s, "attention=flash:64,64,kv=fp8e4m3,"), "%s", s);
    cr_assert(strstr(s, "tp=3,allreduce=tree"), "%s", s);
    parse_ok(&d, "compute=fp32,card=cpu,gemm=batch-invariant"); /* fields alone change hf-eager */
    drift_deployment_print(s, sizeof s, &d);
    cr_assert(strstr(s, "card=cpu,engine=lab,weights=bf16,compute=fp32,act=bf16,"), "%s", s);
    char path[] = "/tmp/drift_deployment_XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    const char body[] = "# an A100 server\nvllm-like\ncard=a100   # 108 SMs\n\nkv=fp16\n";
    cr_assert_eq(write(fd, body, sizeof body - 1), (ssize_t)(sizeof body - 1));
    close(fd);
    char spec[64];
    snprintf(spec, sizeof spec, "@%s", path);
    drift_deployment_t f, g;
    parse_ok(&f, spec);
    parse_ok(&g, "vllm-like,card=a100,kv=fp16");
    char sf[DRIFT_DEPLOY_SPEC_MAX], sg[DRIFT_DEPLOY_SPEC_MAX];
    drift_deployment_print(sf, sizeof sf, &f);
    drift_deployment_print(sg, sizeof sg, &g);
    cr_assert_str_eq(sf, sg);
    unlink(path);
}

/* Every bad spec: refused, d untouched, one line naming the field and what is accepted. */
Test(deployment, bad_specs_name_the_field)
{
    static const struct {
        const char *spec, *says;
    } BAD[] = {
        {"", "empty spec"},
        {"vllm", "unknown preset 'vllm' (accepted: hf-eager, vllm-like"},
        {"vllm-like,card=a1000", "card=a1000: expected cpu or a card: v100, a100"},
        {"vllm-like,batch=continuous:0", "batch=continuous:0: expected alone, static:B or continuous:B"},
        {"vllm-like,batch=64", "batch=64: expected alone, static:B or continuous:B"},
        {"vllm-like,colour=red", "unknown field 'colour' (fields: card, engine"},
        {"vllm-like,kv=fp12", "kv=fp12:"},
        {"vllm-like,card=a100,card=h100", "card given twice"},
        {"vllm-like,", "empty field after ','"},
        {"vllm-like,tp=", "tp: empty value"},
        {"vllm-like,tp=0", "tp=0: expected ranks 1 .. 64"},
        {"vllm-like,padded=yes", "padded=yes needs batch=static:B"},
        {"llamacpp-cpu,batch=continuous:8", "use the preset llamacpp-cpu, or card=cpu,engine=llamacpp-cpu only"},
        {"llamacpp-cpu,kv=bf16", "use the preset llamacpp-cpu"},
        {"vllm-like,card=cpu,engine=llamacpp-cpu", "use the preset llamacpp-cpu"},
        {"engine=llamacpp-cpu", "engine=llamacpp-cpu runs on card=cpu"},
        {"hf-eager,card=cpu", "card=cpu has no tensor cores"},
        {"hf-eager,compute=fp8e4m3", "compute=fp8e4m3: expected bf16, fp16, tf32"},
        {"hf-eager,draft=4", "draft=4: expected 0"},
        {"hf-eager,sampler=top-p", "sampler=top-p: expected greedy"},
        {"hf-eager,sampler=greedy-ties:0", "sampler=greedy-ties:0: expected greedy or greedy-ties:EPS with EPS > 0"},
        {"hf-eager,sampler=greedy-ties:-1", "sampler=greedy-ties:-1: expected greedy"},
        {"hf-eager,sampler=greedy-ties:x", "sampler=greedy-ties:x: expected greedy"},
        {"hf-eager,sampler=greedy-ties:inf", "sampler=greedy-ties:inf: expected greedy"},
        {"hf-eager,gemm=cublas", "gemm=cublas: expected vendor-like or batch-invariant"},
        {"@/nonexistent/deploy.txt", "cannot open /nonexistent/deploy.txt"},
    };
    for (size_t i = 0; i < sizeof BAD / sizeof *BAD; i++) {
        drift_deployment_t d;
        memset(&d, 0x5a, sizeof d);
        char err[256] = "";
        int rc = drift_deployment_parse(&d, BAD[i].spec, err, sizeof err);
        cr_assert_lt(rc, 0, "'%s' accepted", BAD[i].spec);
        cr_assert(strstr(err, BAD[i].says), "'%s': message '%s' lacks '%s'", BAD[i].spec, err, BAD[i].says);
        cr_assert(!strchr(err, '\n'), "one line: %s", err);
        unsigned char *p = (unsigned char *)&d;
        for (size_t k = 0; k < sizeof d; k++) cr_assert_eq(p[k], 0x5a, "'%s' changed the deployment", BAD[i].spec);
    }
}

/* ---- requests inside batches, on stories260K ---------------------------------------------- */

static drift_checkpoint_t ck;
static void load(void)
{
    char err[DRIFT_LLM_ERR_MAX];
    cr_assert_eq(drift_checkpoint_read(&ck, CKPT, err, sizeof err), 0, "%s", err);
}
static void unload(void) { drift_checkpoint_free(&ck); }

static void decode(drift_gen_t *g, const char *spec, const int *prompt, int np, int prefix, int T, uint64_t seed)
{
    drift_deployment_t d;
    parse_ok(&d, spec);
    char err[DRIFT_LLM_ERR_MAX];
    drift_model_t *m;
    cr_assert_eq(drift_model_create(&m, &ck, &d.nx, 1, err, sizeof err), 0, "%s", err);
    cr_assert_eq(drift_deploy_generate(g, m, &d, prompt, np, prefix, T, seed, 1), 0);
    cr_assert_eq(g->n, T);
    drift_model_free(m);
}

/* token ids of stories260K's 512-token vocabulary */
static const int PROMPT[] = {1, 365, 471, 263, 431, 292, 227, 471, 263, 217, 326, 292, 365, 100, 289, 318, 246, 292,
    183, 446, 263, 480, 292, 107, 471, 289, 296, 471};
#define NP ((int)(sizeof PROMPT / sizeof *PROMPT))
#define SMALL "card=a100,gemm=batch-invariant,compute=fp32,weights=fp32,act=fp32,kv=fp32"

/* The tie-breaker: a gap below EPS is a tie given to the lower id. By hand: logits (1, 1.0625,
 * 0.25) have top-1 token 1, top-2 token 0, gap 1/16. */
Test(deployment, greedy_ties_pick_the_lower_id_below_eps)
{
    const double l[3] = {1, 1.0625, 0.25};
    cr_assert_eq(drift_greedy_tie(l, 3, 0.125), 0);
    cr_assert_eq(drift_greedy_tie(l, 3, 0.0625), 1); /* not below: the gap is exactly eps */
    cr_assert_eq(drift_greedy_tie(l, 3, 0.01), 1);
    const double m[3] = {0.25, 2, 1.9375}; /* top-1 token 1 has the lower id already */
    cr_assert_eq(drift_greedy_tie(m, 3, 1), 1);
    drift_deployment_t d;
    parse_ok(&d, "vllm-like,sampler=greedy-ties:0.125");
    cr_assert_eq(d.sampler.tie_eps, 0.125);
    char s[DRIFT_DEPLOY_SPEC_MAX];
    drift_deployment_print(s, sizeof s, &d);
    cr_assert(strstr(s, ",sampler=greedy-ties:0.125"), "%s", s);
    /* a llama.cpp engine keeps its own numerics but takes the sampler */
    parse_ok(&d, "llamacpp-cpu,sampler=greedy-ties:0.5");
    drift_deployment_print(s, sizeof s, &d);
    cr_assert_str_eq(s, "card=cpu,engine=llamacpp-cpu,sampler=greedy-ties:0.5");
    drift_deployment_t e;
    parse_ok(&e, s);
    cr_assert_eq(e.sampler.tie_eps, 0.5);
    cr_assert_eq(e.nx.engine, DRIFT_ENGINE_LLAMACPP_CPU);
}

static void same_bits(const drift_gen_t *a, const drift_gen_t *b, int V)
{
    cr_assert_eq(a->n, b->n);
    for (int k = 0; k < a->n; k++) cr_assert_eq(a->token[k], b->token[k], "token %d", k);
    cr_assert_eq(memcmp(a->logits, b->logits, (size_t)a->n * (size_t)V * sizeof(double)), 0, "logits differ");
}

/* Alone, whole prompt: the same computation as drift_generate alone, bit for bit. */
Test(deployment, alone_is_drift_generate, .init = load, .fini = unload)
{
    drift_deployment_t d;
    parse_ok(&d, "vllm-like,batch=alone,prefill-chunk=0,prefix-cache=off,attention=standard");
    char err[DRIFT_LLM_ERR_MAX];
    drift_model_t *m;
    cr_assert_eq(drift_model_create(&m, &ck, &d.nx, 1, err, sizeof err), 0, "%s", err);
    drift_gen_t a, b;
    cr_assert_eq(drift_deploy_generate(&a, m, &d, PROMPT, NP, 0, 24, 7, 1), 0);
    cr_assert_eq(drift_generate(&b, m, PROMPT, NP, 24, 0, NULL, NULL, 1), 0);
    same_bits(&a, &b, ck.cfg.vocab_size);
    drift_gen_free(&a), drift_gen_free(&b);
    drift_model_free(m);
}

/* Batch-invariant kernels with standard attention make a row's bits independent of the rows
 * beside it, so chunked prefill, a cached prefix, companions and padding change nothing:
 * Thinking Machines' batch-invariance claim, held on every scheduling knob. */
Test(deployment, batch_invariant_kernels_ignore_the_schedule, .init = load, .fini = unload)
{
    int V = ck.cfg.vocab_size;
    drift_gen_t ref;
    decode(&ref, SMALL, PROMPT, NP, 0, 20, 1);
    static const char *const SCHED[] = {SMALL ",prefill-chunk=5", SMALL ",prefix-cache=on",
        SMALL ",batch=continuous:16", SMALL ",batch=static:8,padded=yes,prefill-chunk=7",
        SMALL ",batch=continuous:16,prefill-chunk=3,prefix-cache=on"};
    for (size_t i = 0; i < sizeof SCHED / sizeof *SCHED; i++)
        for (uint64_t seed = 1; seed <= 2; seed++) {
            drift_gen_t g;
            decode(&g, SCHED[i], PROMPT, NP, 17, 20, seed);
            same_bits(&ref, &g, V);
            drift_gen_free(&g);
        }
    drift_gen_free(&ref);
}

/* The vendor-like policy on a device scaled to the toy (16 SMs, split-K from 4-long slices:
 * stories260K's GEMMs then split as a large model's do) makes the batch visible: some seed's
 * companions change the logits' bits. Not a flip rate, only that the knob reaches the rows. */
Test(deployment, vendor_like_kernels_see_the_batch, .init = load, .fini = unload)
{
    drift_deployment_t d;
    parse_ok(&d, "card=a100,compute=fp32,weights=fp32,act=fp32,kv=fp32,batch=continuous:32");
    d.nx.sms = 16, d.nx.min_slice = 4;
    drift_deployment_t alone = d;
    alone.batch_kind = DRIFT_BATCH_ALONE, alone.batch = 1;
    char err[DRIFT_LLM_ERR_MAX];
    drift_model_t *m;
    cr_assert_eq(drift_model_create(&m, &ck, &d.nx, 1, err, sizeof err), 0, "%s", err);
    drift_gen_t a, b;
    cr_assert_eq(drift_deploy_generate(&a, m, &alone, PROMPT, NP, 0, 12, 1, 1), 0);
    int differ = 0;
    for (uint64_t seed = 1; seed <= 4 && !differ; seed++) {
        cr_assert_eq(drift_deploy_generate(&b, m, &d, PROMPT, NP, 0, 12, seed, 1), 0);
        differ = memcmp(a.logits, b.logits, (size_t)12 * (size_t)ck.cfg.vocab_size * sizeof(double)) != 0;
        cr_assert_gt(b.rows[1], 1, "the step's rows include the companions'");
        drift_gen_free(&b);
    }
    cr_assert(differ, "companions never changed a bit under split-K kernels");
    drift_gen_free(&a);
    drift_model_free(m);
}

/* Where an A100 (108 SMs) and an RTX 4090 (128 SMs) make the vendor-like policy choose other
 * kernels for SmolLM2-135M's GEMMs (dim 576, hidden 1536, 9 heads, 3 KV heads, vocabulary
 * 49152). Derived by hand from policy.h's rules, rewritten independently (a short Python
 * script of the four tiles, the fill test and the power-of-two split bound): over M = 1 .. 1024
 * the choices differ at 192 row counts, the first 385 (below it every shape either fills both
 * devices or gets the same split), the last 640. */
Test(deployment, card_pair_kernels_differ_where_the_rules_say)
{
    drift_llm_config_t c;
    memset(&c, 0, sizeof c);
    c.dim = 576, c.hidden_dim = 1536, c.n_layers = 30, c.n_heads = 9, c.n_kv_heads = 3, c.vocab_size = 49152,
    c.seq_len = 1024;
    int first, last;
    cr_assert_eq(drift_model_kernels_differ(&c, 108, 128, 256, 1024, &first, &last), 192);
    cr_assert_eq(first, 385);
    cr_assert_eq(last, 640);
    cr_assert_eq(drift_model_kernels_differ(&c, 128, 128, 256, 1024, &first, &last), 0);
    cr_assert_eq(first, -1);
}
