/* argmax_kernels.c — the kernel sets of the argmax-flip experiment (argmax_kernels.h). */
#include <string.h>

#include "argmax_kernels.h"
#include "dispatch.h"
#include "drift.h"
#include "flips.h"

const char *const drift_role_name[] = {"order", "logits-in-format", "own-accumulation", "exact", "policy"};
const long drift_af_batch[DRIFT_AF_NBATCH] = {1, 8, 64, 256, 1024};

static size_t ceil_div(size_t a, size_t b) { return a / b + (a % b != 0); }


int drift_kset_add(drift_kset_t *ks, drift_format_t f, const drift_order_t *o, drift_format_t acc, drift_format_t out,
    int exact, int role, size_t K)
{
    if (ks->n == DRIFT_AF_MAXC) return -1;
    drift_afkern_t *k = &ks->k[ks->n];
    memset(k, 0, sizeof *k);
    k->c.in = f;
    k->c.order = *o;
    k->c.acc = (drift_acc_t){acc, DRIFT_RNE, 1};
    k->c.out = out;
    k->c.exact = exact;
    if (drift_recipe_check(&k->c, NULL, 0)) return -1;
    /* the same computation under another role is not added twice */
    for (int j = 0; j < ks->n; j++) {
        const drift_recipe_t *c = &ks->k[j].c;
        if (c->exact == exact && c->out == out && (exact || (drift_order_equal(&c->order, o) && c->acc.acc == acc)))
            return j;
    }
    drift_recipe_label(k->name, sizeof k->name, &k->c);
    k->role = role;
    k->nu = exact ? 0 : drift_flip_nu(o, f, K);
    return ks->n++;
}


int drift_policy_row(drift_polrow_t *r, int q, size_t V, size_t shard, size_t K, const drift_device_t *dev)
{
    drift_gemm_kernel_t k;
    r->pol = (drift_policy_t)(q / (2 * DRIFT_AF_NBATCH));
    r->shard = q / DRIFT_AF_NBATCH % 2;
    r->batch = drift_af_batch[q % DRIFT_AF_NBATCH];
    size_t N = r->shard ? ceil_div(V, shard) : V;
    int rc = drift_policy_choose(&k, r->pol, (size_t)r->batch, N, K, dev->sms);
    if (rc) return rc;
    drift_gemm_kernel_print(r->kernel, sizeof r->kernel, &k);
    rc = drift_gemm_kernel_order(&r->order, &k);
    if (rc) return rc;
    r->cost = drift_policy_cost(&k, (size_t)r->batch, N, K, dev->sms);
    return 0;
}


const char *drift_kset_tag(const drift_kset_t *ks, int c)
{
    return c == ks->def ? "default" : c == ks->engine ? "engine" : "-";
}

int drift_kset_build(drift_kset_t *ks, int (*polcfg)[2], drift_format_t f, const drift_order_t *orders, int norders,
    const drift_polrow_t *polk, int npol, size_t K)
{
    memset(ks, 0, sizeof *ks);
    ks->f = f;
    ks->tc32 = ks->seq32 = -1;
    int narrow = f == DRIFT_BF16 || f == DRIFT_FP16;
    drift_order_t seq, tc;
    int rc = drift_order_parse(&seq, "seq");
    if (!rc) rc = drift_order_parse(&tc, "tc:h100");
    if (rc) return rc;
    for (int o = 0; o < norders; o++) {
        int j = drift_kset_add(ks, f, &orders[o], DRIFT_FP32, DRIFT_FP32, 0, DRIFT_ROLE_ORDER, K);
        if (o == 0) ks->def = j;
    }
    if (ks->n == 0) return DRIFT_EUNSUPPORTED;
    if (narrow)
        for (int o = 0; o < norders; o++) drift_kset_add(ks, f, &orders[o], DRIFT_FP32, f, 0, DRIFT_ROLE_STORE, K);
    if (narrow)
        for (int o = 0; o < norders; o++) {
            if (drift_order_is_tc(&orders[o])) {
                if (f == DRIFT_FP16) drift_kset_add(ks, f, &orders[o], DRIFT_FP16, DRIFT_FP16, 0, DRIFT_ROLE_OWN, K);
            } else {
                drift_kset_add(ks, f, &orders[o], f, f, 0, DRIFT_ROLE_OWN, K);
            }
        }
    ks->exact = drift_kset_add(ks, f, &seq, DRIFT_FP32, DRIFT_FP32, 1, DRIFT_ROLE_EXACT, K);
    for (int q = 0; q < npol; q++) {
        polcfg[q][0] = drift_kset_add(ks, f, &polk[q].order, DRIFT_FP32, DRIFT_FP32, 0, DRIFT_ROLE_POLICY, K);
        polcfg[q][1] =
            narrow ? drift_kset_add(ks, f, &polk[q].order, DRIFT_FP32, f, 0, DRIFT_ROLE_POLICY, K) : polcfg[q][0];
        if (polcfg[q][0] < 0 || polcfg[q][1] < 0) return DRIFT_ERANGE;
    }
    /* the named kernels used by the report (added if --orders lacks them) */
    ks->seq32 = drift_kset_add(ks, f, &seq, DRIFT_FP32, DRIFT_FP32, 0, DRIFT_ROLE_ORDER, K);
    drift_recipe_t probe = {f, tc, {DRIFT_FP32, DRIFT_RNE, 1}, DRIFT_FP32, 0};
    if (!drift_recipe_check(&probe, NULL, 0)) {
        ks->tc32 = drift_kset_add(ks, f, &tc, DRIFT_FP32, DRIFT_FP32, 0, DRIFT_ROLE_ORDER, K);
        ks->engine = narrow ? drift_kset_add(ks, f, &tc, DRIFT_FP32, f, 0, DRIFT_ROLE_STORE, K) : ks->tc32;
    } else {
        ks->engine = ks->def;
    }
    if (ks->seq32 < 0 || ks->engine < 0 || ks->exact < 0) return DRIFT_ERANGE;
    return 0;
}

int drift_kset_named(int out[4], const drift_kset_t *ks)
{
    const int named[4] = {ks->def, ks->engine, ks->tc32, ks->exact};
    int n = 0;
    for (int j = 0; j < 4; j++) {
        int dup = named[j] < 0;
        for (int i = 0; i < n; i++) dup |= out[i] == named[j];
        if (!dup) out[n++] = named[j];
    }
    return n;
}
