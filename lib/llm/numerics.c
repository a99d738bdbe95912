/* numerics.c — a decoder's numerics configuration (model.h's drift_numerics_t): the matmul
 * recipes in the decoder's short grammar, the presets, the check against a model's
 * configuration, and the canonical printed form written in every run's metadata. */
#include "model.h"

#include <stdio.h>
#include <string.h>

#include "cards.h"
#include "dispatch.h"
#include "dispatch_attention.h"
#include "dispatch_order.h"
#include "drift.h"
#include "llamacpp_forward.h"
#include "why.h"

/* ---- names, recipes, numerics ------------------------------------------------------------ */

static const char *const OP_NAMES[DRIFT_NOPS] = {"qkv", "attn-out", "mlp-up", "mlp-down", "lmhead"};

int drift_model_recipe_parse(drift_recipe_t *r, const char *spec)
{
    if (!r || !spec) return DRIFT_EINVAL;
    char buf[DRIFT_RECIPE_SPEC_MAX];
    if (strlen(spec) >= sizeof buf) return DRIFT_EINVAL;
    strcpy(buf, spec);
    char *part[5];
    int n = 0;
    for (char *p = buf, *s; n < 5; p = s + 1) {
        part[n++] = p;
        if (!(s = strchr(p, '/'))) break;
        *s = 0;
    }
    if (n > 4 || n == 2) return DRIFT_EINVAL;
    drift_format_t in, acc, out;
    drift_order_t o;
    if (drift_order_parse(&o, "seq")) return DRIFT_EINVAL;
    if (drift_format_parse(&in, part[0])) return DRIFT_EINVAL;
    if (n == 1) {
        acc = in == DRIFT_FP64 ? DRIFT_FP64 : DRIFT_FP32;
        out = in;
    } else {
        if (drift_order_parse_card(&o, part[1])) return DRIFT_EINVAL; /* tc:rtx4090 is tc:ada */
        drift_tc_arch_t arch;
        if (!drift_order_tc_arch(&arch, &o) && o.kind != DRIFT_ORDER_SEQ) return DRIFT_EINVAL;
        if (drift_format_parse(&acc, part[2])) return DRIFT_EINVAL;
        out = acc;
        if (n == 4 && drift_format_parse(&out, part[3])) return DRIFT_EINVAL;
    }
    drift_recipe_t t = drift_recipe(in, &o, acc, out);
    int rc = drift_recipe_check(&t, NULL, 0);
    if (rc) return rc == DRIFT_EUNSUPPORTED ? DRIFT_EUNSUPPORTED : DRIFT_EINVAL;
    *r = t;
    return 0;
}

drift_numerics_t drift_numerics_fp32(void)
{
    drift_numerics_t nx;
    memset(&nx, 0, sizeof nx);
    drift_order_t seq;
    /* Constant specs that parse by construction (test_model checks the result): a function
     * that returns the numerics by value has no code to pass on. */
    int rc = drift_order_parse(&seq, "seq");
    drift_recipe_t r = drift_recipe(DRIFT_FP32, &seq, DRIFT_FP32, DRIFT_FP32);
    drift_numerics_set_mm(&nx, &r);
    nx.weights = DRIFT_FP32;
    nx.act = DRIFT_FP32;
    nx.policy = DRIFT_POLICY_VENDOR_LIKE;
    nx.sms = 132;
    nx.min_slice = DRIFT_POLICY_MIN_SLICE;
    rc |= drift_order_parse(&nx.norm_order, "seq");
    rc |= drift_attn_kernel_parse(&nx.attn, "standard", NULL, 0);
    (void)rc;
    nx.kv = (drift_kv_format_t){DRIFT_KV_FLOAT, DRIFT_FP32};
    nx.tp = 1;
    nx.allreduce = DRIFT_ALLREDUCE_RING;
    return nx;
}

drift_numerics_t drift_numerics_exact(void)
{
    drift_numerics_t nx = drift_numerics_fp32();
    nx.exact = 1;
    drift_recipe_t r = drift_recipe(DRIFT_FP64, &nx.mm[0].order, DRIFT_FP64, DRIFT_FP64);
    drift_numerics_set_mm(&nx, &r);
    nx.act = DRIFT_FP64;
    nx.kv = (drift_kv_format_t){DRIFT_KV_FLOAT, DRIFT_FP64};
    return nx;
}

void drift_numerics_set_mm(drift_numerics_t *nx, const drift_recipe_t *r)
{
    for (int i = 0; i < DRIFT_NOPS; i++) nx->mm[i] = *r;
}

int drift_numerics_set_recipe(drift_numerics_t *nx, const char *spec)
{
    if (!nx || !spec) return DRIFT_EINVAL;
    if (!strcmp(spec, "llamacpp-cpu")) return nx->engine = DRIFT_ENGINE_LLAMACPP_CPU, 0;
    if (!strcmp(spec, "llamacpp-cpu-avx512")) return nx->engine = DRIFT_ENGINE_LLAMACPP_CPU_AVX512, 0;
    drift_recipe_t r;
    int rc = drift_model_recipe_parse(&r, spec);
    if (rc) return rc;
    drift_numerics_set_mm(nx, &r);
    nx->engine = DRIFT_ENGINE_LAB;
    return 0;
}

static int elementwise_format(drift_format_t f)
{
    return f == DRIFT_FP32 || f == DRIFT_TF32 || f == DRIFT_BF16 || f == DRIFT_FP16;
}

int drift_numerics_check(const drift_numerics_t *nx, const drift_llm_config_t *c, char *err, size_t errsz)
{
    if (!nx || !c) return drift_why(err, errsz, DRIFT_EINVAL, "no numerics");
    if ((unsigned)nx->engine >= DRIFT_NENGINES) return drift_why(err, errsz, DRIFT_EINVAL, "engine: unknown");
    if (nx->exact && nx->engine != DRIFT_ENGINE_LAB)
        return drift_why(err, errsz, DRIFT_EINVAL, "recipe: the exact reference is the lab's engine, not llamacpp-cpu");
    if (nx->exact || nx->engine != DRIFT_ENGINE_LAB) return 0;
    for (int i = 0; i < DRIFT_NOPS; i++) {
        const drift_recipe_t *r = &nx->mm[i];
        char why[DRIFT_LLM_ERR_MAX];
        int rc = drift_recipe_check(r, why, sizeof why);
        if (rc) return drift_why(err, errsz, rc, "recipe %s: %s", OP_NAMES[i], why);
        drift_tc_arch_t arch;
        if (r->exact || (!drift_order_tc_arch(&arch, &r->order) && r->order.kind != DRIFT_ORDER_SEQ))
            return drift_why(err, errsz, DRIFT_EINVAL, "recipe %s: the decoder's GEMMs take the orders seq and tc:ARCH",
                OP_NAMES[i]);
    }
    if (!elementwise_format(nx->act))
        return drift_why(err, errsz, DRIFT_EINVAL,
            "act: elementwise results are fp32-computed; use fp32, tf32, bf16 or fp16, not %s",
            drift_format_name(nx->act));
    char kvs[32];
    if (drift_kv_format_print(kvs, sizeof kvs, &nx->kv) < 0)
        return drift_why(err, errsz, DRIFT_EINVAL, "kv: expected a float format, int8:token or int8:head");
    char ks[DRIFT_ATTN_SPEC_MAX];
    if (drift_attn_kernel_print(ks, sizeof ks, &nx->attn) < 0)
        return drift_why(err, errsz, DRIFT_EINVAL,
            "attention: invalid kernel (accepted: standard, flash:Br,Bc, splitkv:N[,Bc], splitkv:size=S[,Bc], splitkv:auto[,Bc])");
    if (nx->attn_auto_splits && nx->attn.kind != DRIFT_ATTN_SPLITKV_N)
        return drift_why(err, errsz, DRIFT_EINVAL, "attention: an automatic split count needs splitkv:auto");
    if ((unsigned)nx->weights >= DRIFT_NFORMATS) return drift_why(err, errsz, DRIFT_EINVAL, "weights: unknown format");
    if ((unsigned)nx->policy >= DRIFT_NPOLICIES) return drift_why(err, errsz, DRIFT_EINVAL, "policy: unknown");
    if (nx->sms < 1) return drift_why(err, errsz, DRIFT_EINVAL, "sms: must be >= 1, found %d", nx->sms);
    if (nx->min_slice < 1)
        return drift_why(err, errsz, DRIFT_EINVAL, "min-slice: must be >= 1, found %d", nx->min_slice);
    if (drift_order_sum_check(&nx->norm_order, NULL, NULL, 0))
        return drift_why(err, errsz, DRIFT_EINVAL, "norm order: tc:ARCH applies to matmul recipes only");
    if (nx->tp < 1 || nx->tp > DRIFT_TP_MAX)
        return drift_why(err, errsz, DRIFT_EINVAL, "tp: must be 1 .. %d, found %d", DRIFT_TP_MAX, nx->tp);
    if (c->n_kv_heads % nx->tp)
        return drift_why(err, errsz, DRIFT_EUNSUPPORTED,
            "tp: must divide n_kv_heads %d (heads are split by rank), found %d", c->n_kv_heads, nx->tp);
    if ((unsigned)nx->allreduce >= DRIFT_NALLREDUCE) return drift_why(err, errsz, DRIFT_EINVAL, "allreduce: unknown");
    return 0;
}

int drift_numerics_print(char *buf, size_t size, const drift_numerics_t *nx)
{
    if (nx->exact) return snprintf(buf, size, "exact (fp64, exactly rounded dot products and sums)");
    if (nx->engine != DRIFT_ENGINE_LAB)
        return snprintf(buf, size,
            "%s (llama.cpp's CPU backend, %s build, 1 thread: stored weights, q8 activations, fp16 KV cache, "
            "flash attention)",
            nx->engine == DRIFT_ENGINE_LLAMACPP_CPU ? "llamacpp-cpu" : "llamacpp-cpu-avx512",
            nx->engine == DRIFT_ENGINE_LLAMACPP_CPU ? "AVX2" : "AVX-512");
    size_t at = 0;
    for (int i = 0; i < DRIFT_NOPS; i++) {
        char r[DRIFT_RECIPE_SPEC_MAX];
        drift_recipe_print(r, sizeof r, &nx->mm[i]);
        at += (size_t)snprintf(buf + at, at < size ? size - at : 0, "%s=%s ", OP_NAMES[i], r);
    }
    char no[DRIFT_ORDER_SPEC_MAX], ak[DRIFT_ATTN_SPEC_MAX] = "?", kv[32] = "?";
    drift_order_print(no, sizeof no, &nx->norm_order);
    drift_numerics_attention_print(ak, sizeof ak, nx);
    drift_kv_format_print(kv, sizeof kv, &nx->kv);
    at += (size_t)snprintf(buf + at, at < size ? size - at : 0,
        "weights=%s act=%s norm=%s attention=%s kv=%s policy=%s sms=%d min-slice=%d tp=%d %s",
        drift_format_name(nx->weights), drift_format_name(nx->act), no, ak, kv, drift_policy_name(nx->policy), nx->sms,
        nx->min_slice, nx->tp, drift_allreduce_name(nx->allreduce));
    return at < size ? (int)at : DRIFT_EINVAL;
}

int drift_numerics_set_attention(drift_numerics_t *nx, const char *spec, char *err, size_t errsz)
{
    if (!nx || !spec) return drift_why(err, errsz, DRIFT_EINVAL, "attention: no kernel");
    if (!strncmp(spec, "splitkv:auto", 12) && (spec[12] == 0 || spec[12] == ',')) {
        /* parse as splitkv:1[,Bc]: the count is replaced at every step */
        char buf[DRIFT_ATTN_SPEC_MAX];
        if (snprintf(buf, sizeof buf, "splitkv:1%s", spec + 12) >= (int)sizeof buf)
            return drift_why(err, errsz, DRIFT_EINVAL, "attention kernel '%s': too long", spec);
        drift_attn_kernel_t k;
        if (drift_attn_kernel_parse(&k, buf, NULL, 0))
            return drift_why(err, errsz, DRIFT_EINVAL,
                "attention kernel '%s': expected splitkv:auto[,Bc] with Bc 1..%ld", spec, DRIFT_ATTN_TILE_MAX);
        nx->attn = k, nx->attn_auto_splits = 1;
        return 0;
    }
    drift_attn_kernel_t k;
    char why[160];
    if (drift_attn_kernel_parse(&k, spec, why, sizeof why))
        return drift_why(err, errsz, DRIFT_EINVAL, "%s (or splitkv:auto[,Bc])", why);
    nx->attn = k, nx->attn_auto_splits = 0;
    return 0;
}

int drift_numerics_attention_print(char *buf, size_t size, const drift_numerics_t *nx)
{
    if (!nx->attn_auto_splits) return drift_attn_kernel_print(buf, size, &nx->attn);
    int n =
        nx->attn.bc == 64 ? snprintf(buf, size, "splitkv:auto") : snprintf(buf, size, "splitkv:auto,%ld", nx->attn.bc);
    return n < 0 || (size_t)n >= size ? DRIFT_EINVAL : n;
}
