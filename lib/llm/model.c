/* model.c — the Llama decoder under a numerics configuration (see model.h). */
#include "model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cards.h"
#include "dispatch_order.h"
#include "dispatch.h"
#include "dispatch_attention.h"
#include "drift.h"
#include "why.h"
#include "exact.h"
#include "gemm.h"
#include "llamacpp_forward.h"
#include "philox.h"

/* ---- the model ------------------------------------------------------------------------------ */

enum { W_Q = 0, W_K, W_V, W_O, W_1, W_2, W_3, NW };
static const drift_op_t W_OP[NW] = {
    DRIFT_OP_QKV, DRIFT_OP_QKV, DRIFT_OP_QKV, DRIFT_OP_ATTN_OUT, DRIFT_OP_MLP_UP, DRIFT_OP_MLP_DOWN, DRIFT_OP_MLP_UP};
static const int W_ROWPAR[NW] = {0, 0, 0, 1, 0, 1, 0};

typedef struct {
    double *B;    /* K x N (row-major) for the GEMM path; N x K in exact mode */
    float *Bf;    /* B as floats (the fp32-accumulator fast path), NULL when unused */
    int bf_valid; /* drift_dispatch_gemm_b_valid(Bf): the recipe's GEMM may read Bf unchecked */
    size_t K, N;  /* this rank's shape */
    size_t off;   /* first output column (column-parallel) or first k (row-parallel) */
} mat_t;

struct drift_model {
    const drift_checkpoint_t *ck;
    drift_llm_config_t c;
    drift_numerics_t nx;
    int nslots, P;
    size_t head, kv_dim, kv_mul, cap;
    mat_t *w;                                    /* [(layer * NW + which) * P + rank] */
    mat_t *cls;                                  /* [rank] */
    double *emb, *rms_att, *rms_ffn, *rms_final; /* weights-format values */
    drift_kv_cache_t *kv;                        /* [slot * layers + layer] */
    drift_attn_opts_t ao_opts;                   /* the attention call (kernel set per step) */
    size_t vrows;                                /* drift_model_set_shape (0: the step's own) */
    size_t mk;                                   /* rows the current GEMM's kernel is chosen for */
    int vnseq;
    size_t mcap; /* rows the scratch holds */
    double *x, *xb, *q, *k, *v, *ao, *y, *h1, *h3, *part, *xs, *tmpa, *tmpc, *xf;
    int *row_pos, *row_slot, *row_tok;
    size_t scratch_att;
    double *att;
    drift_trace_fn trace;
    void *trace_ctx;
    drift_llamacpp_t **eng; /* llamacpp-cpu: one engine per slot (NULL otherwise) */
    int *eng_len;           /* tokens each slot's engine holds */
    float *eng_logits;
};

/* Round to the elementwise format (fp32 compute, stored in act). */
static inline double act(const drift_model_t *m, double v)
{
    return m->nx.act == DRIFT_FP32 ? (double)(float)v : drift_rne(v, m->nx.act);
}

static void split_range(size_t n, int P, int r, int even, size_t *lo, size_t *len)
{
    size_t chunk = even ? n / (size_t)P : (n + (size_t)P - 1) / (size_t)P;
    size_t a = chunk * (size_t)r;
    if (a > n) a = n;
    size_t b = a + chunk > n ? n : a + chunk;
    *lo = a, *len = b - a;
}

/* Prepare one rank's matrix from W (Nt x Kt, llama2.c layout). */
static int prep_mat(mat_t *mt, const drift_model_t *m, const float *W, size_t Nt, size_t Kt, int rowpar, int r,
    int even, const drift_recipe_t *rec)
{
    const drift_format_t in = rec->in;
    size_t lo, len;
    split_range(rowpar ? Kt : Nt, m->P, r, even, &lo, &len);
    mt->off = lo;
    mt->K = rowpar ? len : Kt;
    mt->N = rowpar ? Nt : len;
    mt->B = malloc((mt->K * mt->N > 0 ? mt->K * mt->N : 1) * sizeof(double));
    if (!mt->B) return DRIFT_ENOMEM;
    /* fp32 weights seen as fp32 or fp64 are unchanged by the two roundings: skip them */
    int identity = m->nx.exact || ((m->nx.weights == DRIFT_FP32 || m->nx.weights == DRIFT_FP64) &&
                                      (in == DRIFT_FP32 || in == DRIFT_FP64));
    enum { TB = 64 }; /* the K x N transposition in tiles, so that neither side strides through memory */
    for (size_t j0 = 0; j0 < mt->N; j0 += TB)
        for (size_t k0 = 0; k0 < mt->K; k0 += TB)
            for (size_t j = j0; j < j0 + TB && j < mt->N; j++)
                for (size_t k = k0; k < k0 + TB && k < mt->K; k++) {
                    size_t gj = rowpar ? j : lo + j, gk = rowpar ? lo + k : k;
                    double v = (double)W[gj * Kt + gk];
                    if (!identity) v = drift_rne(drift_rne(v, m->nx.weights), in);
                    if (m->nx.exact)
                        mt->B[j * mt->K + k] = v;
                    else
                        mt->B[k * mt->N + j] = v;
                }
    if (!m->nx.exact && in != DRIFT_FP64) {
        mt->Bf = malloc((mt->K * mt->N > 0 ? mt->K * mt->N : 1) * sizeof(float));
        if (!mt->Bf) return DRIFT_ENOMEM;
        for (size_t i = 0; i < mt->K * mt->N; i++) mt->Bf[i] = (float)mt->B[i];
        mt->bf_valid = drift_dispatch_gemm_b_valid(mt->Bf, mt->K * mt->N, rec);
    }
    return 0;
}

static int grow_scratch(drift_model_t *m, size_t M)
{
    if (M <= m->mcap) return 0;
    size_t d = (size_t)m->c.dim, h = (size_t)m->c.hidden_dim, V = (size_t)m->c.vocab_size;
    size_t widest = d > h ? d : h;
    if (V > widest) widest = V;
    double **bufs[] = {&m->x, &m->xb, &m->q, &m->ao, &m->y, &m->xf};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) {
        free(*bufs[i]);
        if (!(*bufs[i] = malloc(M * d * sizeof(double)))) return DRIFT_ENOMEM;
    }
    free(m->k), free(m->v), free(m->h1), free(m->h3), free(m->part), free(m->xs), free(m->tmpa), free(m->tmpc);
    m->k = malloc(M * m->kv_dim * sizeof(double));
    m->v = malloc(M * m->kv_dim * sizeof(double));
    m->h1 = malloc(M * h * sizeof(double));
    m->h3 = malloc(M * h * sizeof(double));
    m->part = malloc((size_t)m->P * M * widest * sizeof(double));
    m->xs = malloc(M * widest * sizeof(double));
    m->tmpa = malloc(M * widest * sizeof(double));
    m->tmpc = malloc(2 * M * widest * sizeof(double));
    free(m->row_pos), free(m->row_slot), free(m->row_tok);
    m->row_pos = malloc(M * sizeof(int));
    m->row_slot = malloc(M * sizeof(int));
    m->row_tok = malloc(M * sizeof(int));
    if (!m->k || !m->v || !m->h1 || !m->h3 || !m->part || !m->xs || !m->tmpa || !m->tmpc || !m->row_pos ||
        !m->row_slot || !m->row_tok)
        return DRIFT_ENOMEM;
    m->mcap = M;
    return 0;
}

/* llamacpp-cpu: an engine per slot over the checkpoint's GGUF tensors. */
static int engine_create(drift_model_t *m, char *err, size_t errsz)
{
    if (!m->ck->gguf)
        return drift_why(
            err, errsz, DRIFT_EUNSUPPORTED, "recipe llamacpp-cpu: needs a GGUF checkpoint (its stored tensors)");
    m->P = 1;
    m->cap = (size_t)m->c.seq_len;
    m->eng = calloc((size_t)m->nslots, sizeof *m->eng);
    m->eng_len = calloc((size_t)m->nslots, sizeof *m->eng_len);
    m->eng_logits = malloc((size_t)m->c.vocab_size * sizeof(float));
    if (!m->eng || !m->eng_len || !m->eng_logits)
        return drift_why_oom(err, errsz, (double)m->c.vocab_size * sizeof(float),
            "the engines of %d slots and %d logits", m->nslots, m->c.vocab_size);
    for (int s = 0; s < m->nslots; s++) {
        int rc = drift_llamacpp_create(&m->eng[s], m->ck->gguf, m->c.seq_len, err, errsz);
        if (!rc && m->nx.engine == DRIFT_ENGINE_LLAMACPP_CPU_AVX512)
            rc = drift_llamacpp_set_isa(m->eng[s], DRIFT_LLAMACPP_AVX512);
        if (rc) return rc;
    }
    if (drift_llamacpp_n_vocab(m->eng[0]) != m->c.vocab_size)
        return drift_why(err, errsz, DRIFT_EINVAL, "recipe llamacpp-cpu: vocabulary %d, the checkpoint's %d",
            drift_llamacpp_n_vocab(m->eng[0]), m->c.vocab_size);
    return 0;
}

/* llamacpp-cpu: each sequence's tokens through its slot's engine (a slot restarted at 0 gets a
 * fresh context; resuming elsewhere than where it stopped is not modelled). */
static int engine_step(drift_model_t *m, double *logits, const drift_seq_step_t *seqs, int nseq)
{
    for (int s = 0; s < nseq; s++) {
        const drift_seq_step_t *q = &seqs[s];
        if (q->pos == 0) drift_llamacpp_reset(m->eng[q->slot]), m->eng_len[q->slot] = 0;
        if (q->pos != m->eng_len[q->slot]) return DRIFT_EUNSUPPORTED;
        int rc = drift_llamacpp_step(m->eng[q->slot], m->eng_logits, q->pos, q->tokens, q->ntok);
        if (rc) return rc;
        m->eng_len[q->slot] += q->ntok;
        for (size_t v = 0; v < (size_t)m->c.vocab_size; v++)
            logits[(size_t)s * (size_t)m->c.vocab_size + v] = (double)m->eng_logits[v];
    }
    return 0;
}

int drift_model_create(
    drift_model_t **out, const drift_checkpoint_t *ck, const drift_numerics_t *nx, int nslots, char *err, size_t errsz)
{
    if (!out || !ck || !ck->data || !nx || nslots < 1)
        return drift_why(err, errsz, DRIFT_EINVAL, "model: bad arguments");
    *out = NULL;
    int rc = drift_llm_config_check(&ck->cfg, NULL, err, errsz);
    if (rc) return rc;
    if ((rc = drift_numerics_check(nx, &ck->cfg, err, errsz))) return rc;
    drift_model_t *m = calloc(1, sizeof *m);
    if (!m) return drift_why_oom(err, errsz, (double)sizeof *m, "the model");
    m->ck = ck, m->c = ck->cfg, m->nx = *nx, m->nslots = nslots;
    if (nx->engine != DRIFT_ENGINE_LAB) {
        rc = engine_create(m, err, errsz);
        if (rc)
            drift_model_free(m);
        else
            *out = m;
        return rc;
    }
    m->P = nx->exact ? 1 : nx->tp;
    const drift_llm_config_t *c = &m->c;
    size_t d = (size_t)c->dim, h = (size_t)c->hidden_dim, L = (size_t)c->n_layers, V = (size_t)c->vocab_size;
    m->head = d / (size_t)c->n_heads;
    m->kv_dim = (size_t)c->n_kv_heads * m->head;
    m->kv_mul = (size_t)(c->n_heads / c->n_kv_heads);
    m->cap = (size_t)c->seq_len;
    size_t P = (size_t)m->P;
    m->w = calloc(L * NW * P, sizeof *m->w);
    m->cls = calloc(P, sizeof *m->cls);
    m->emb = malloc(V * d * sizeof(double));
    m->rms_att = malloc(L * d * sizeof(double));
    m->rms_ffn = malloc(L * d * sizeof(double));
    m->rms_final = malloc(d * sizeof(double));
    m->kv = calloc((size_t)nslots * L, sizeof *m->kv);
    m->att = malloc(2 * (m->cap + 1) * sizeof(double));
    if (!m->w || !m->cls || !m->emb || !m->rms_att || !m->rms_ffn || !m->rms_final || !m->kv || !m->att) {
        drift_model_free(m);
        return drift_why_oom(err, errsz, (double)(V * d + 2 * L * d + d + 2 * (m->cap + 1)) * sizeof(double),
            "the %zu x %zu embedding and the model's buffers (%d KV slots)", V, d, nslots);
    }
    drift_kv_format_t kvf = nx->exact ? (drift_kv_format_t){DRIFT_KV_FLOAT, DRIFT_FP64} : nx->kv;
    for (size_t i = 0; i < (size_t)nslots * L; i++) {
        if ((rc = drift_kv_init(&m->kv[i], c->n_kv_heads, (int)m->head, m->cap, &kvf, err, errsz))) {
            drift_model_free(m);
            return rc;
        }
    }
    /* attention: q, K, V, P in the QKV recipe's output format, fp32 accumulation, out in act */
    drift_format_t ain = nx->exact ? DRIFT_FP64 : nx->mm[DRIFT_OP_QKV].out;
    m->ao_opts = drift_attn_opts(c->n_heads, c->n_kv_heads, (int)m->head, ain);
    m->ao_opts.kernel = nx->attn;
    m->ao_opts.qk.out = DRIFT_FP32;
    m->ao_opts.pv.out = nx->exact ? DRIFT_FP64 : nx->act;
    if ((rc = drift_attn_validate(&m->ao_opts, err, errsz))) {
        drift_model_free(m);
        return rc;
    }
    drift_format_t wf = nx->exact ? DRIFT_FP64 : nx->weights;
    for (size_t i = 0; i < V * d; i++) m->emb[i] = drift_rne(ck->token_embedding[i], wf);
    for (size_t i = 0; i < L * d; i++) m->rms_att[i] = drift_rne(ck->rms_att[i], wf);
    for (size_t i = 0; i < L * d; i++) m->rms_ffn[i] = drift_rne(ck->rms_ffn[i], wf);
    for (size_t i = 0; i < d; i++) m->rms_final[i] = drift_rne(ck->rms_final[i], wf);
    for (size_t l = 0; l < L && !rc; l++)
        for (int which = 0; which < NW && !rc; which++) {
            const float *src;
            size_t Nt, Kt;
            switch (which) {
            case W_Q: src = ck->wq + l * d * d, Nt = d, Kt = d; break;
            case W_K: src = ck->wk + l * m->kv_dim * d, Nt = m->kv_dim, Kt = d; break;
            case W_V: src = ck->wv + l * m->kv_dim * d, Nt = m->kv_dim, Kt = d; break;
            case W_O: src = ck->wo + l * d * d, Nt = d, Kt = d; break;
            case W_1: src = ck->w1 + l * h * d, Nt = h, Kt = d; break;
            case W_2: src = ck->w2 + l * d * h, Nt = d, Kt = h; break;
            default: src = ck->w3 + l * h * d, Nt = h, Kt = d; break;
            }
            /* heads split evenly (P divides n_kv_heads); hidden split in ceil chunks */
            int even = which == W_Q || which == W_K || which == W_V || which == W_O;
            for (size_t r = 0; r < P && !rc; r++)
                rc = prep_mat(&m->w[(l * NW + (size_t)which) * P + r], m, src, Nt, Kt, W_ROWPAR[which], (int)r, even,
                    &nx->mm[W_OP[which]]);
        }
    for (size_t r = 0; r < P && !rc; r++)
        rc = prep_mat(&m->cls[r], m, ck->wcls, V, d, 0, (int)r, 0, &nx->mm[DRIFT_OP_LMHEAD]);
    if (!rc) rc = grow_scratch(m, 16);
    if (rc) {
        drift_model_free(m);
        return drift_why(err, errsz, rc, "the model's %zu layers of weights (dim %zu, hidden %zu, vocab %zu, %s): %s",
            L, d, h, V, nx->exact ? "fp64" : "in each matmul's format", drift_strerror(rc));
    }
    *out = m;
    return 0;
}

void drift_model_free(drift_model_t *m)
{
    if (!m) return;
    if (m->eng)
        for (int s = 0; s < m->nslots; s++) drift_llamacpp_free(m->eng[s]);
    free(m->eng), free(m->eng_len), free(m->eng_logits);
    size_t n = (size_t)m->c.n_layers * NW * (size_t)m->P;
    if (m->w)
        for (size_t i = 0; i < n; i++) free(m->w[i].B), free(m->w[i].Bf);
    if (m->cls)
        for (int r = 0; r < m->P; r++) free(m->cls[r].B), free(m->cls[r].Bf);
    free(m->w), free(m->cls), free(m->emb), free(m->rms_att), free(m->rms_ffn), free(m->rms_final);
    if (m->kv)
        for (size_t i = 0; i < (size_t)m->nslots * (size_t)m->c.n_layers; i++) drift_kv_free(&m->kv[i]);
    free(m->kv), free(m->att);
    free(m->x), free(m->xb), free(m->q), free(m->k), free(m->v), free(m->ao), free(m->y), free(m->h1), free(m->h3);
    free(m->part), free(m->xs), free(m->tmpa), free(m->tmpc), free(m->xf);
    free(m->row_pos), free(m->row_slot), free(m->row_tok);
    free(m);
}

const drift_llm_config_t *drift_model_config(const drift_model_t *m) { return &m->c; }

void drift_model_set_trace(drift_model_t *m, drift_trace_fn fn, void *ctx) { m->trace = fn, m->trace_ctx = ctx; }

void drift_model_set_shape(drift_model_t *m, size_t rows, int nseq) { m->vrows = rows, m->vnseq = nseq > 0 ? nseq : 0; }

/* ---- GEMMs ------------------------------------------------------------------------------------ */

/* C (M x N) = A (M x K) B (K x N) under op's recipe, the policy's kernel for this shape, the
 * result rounded to `out`. A holds act values; B is already in the recipe's input format. */
static int gemm_op(drift_model_t *m, drift_op_t op, double *C, const double *A, const double *B, const float *Bf,
    int bf_valid, size_t M, size_t N, size_t K, drift_format_t out)
{
    drift_gemm_kernel_t kern;
    int rc = drift_policy_choose_slice(&kern, m->nx.policy, m->mk > M ? m->mk : M, N, K, m->nx.sms, m->nx.min_slice);
    if (rc) return rc;
    return drift_dispatch_kernel_gemm_b(C, A, B, Bf, bf_valid, M, N, K, &m->nx.mm[op], &kern, out, m->tmpa, m->tmpc);
}

/* Exact matmul: Y[i][j] = W_j . X_i correctly rounded to fp64 (W stored N x K). */
static int gemm_exact(double *Y, const double *X, const mat_t *w, size_t M, size_t ldy)
{
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < w->N; j++) {
            int rc = drift_exact_dot(&Y[i * ldy + j], X + i * w->K, w->B + j * w->K, w->K, DRIFT_FP64, DRIFT_RNE);
            if (rc) return rc;
        }
    return 0;
}

/* Y (M x Ntot) = X (M x Ktot) W^T for a weight split over the P ranks. */
static int linear(drift_model_t *m, drift_op_t op, double *Y, const double *X, size_t M, const mat_t *w, int rowpar,
    size_t Ntot, size_t Ktot)
{
    int P = m->P, rc = 0;
    const drift_recipe_t *r = &m->nx.mm[op];
    if (m->nx.exact) return gemm_exact(Y, X, w, M, Ntot);
    if (P == 1) return gemm_op(m, op, Y, X, w->B, w->Bf, w->bf_valid, M, Ntot, Ktot, r->out);
    if (!rowpar) {
        for (int k = 0; k < P && !rc; k++) {
            if (!w[k].N) continue;
            rc = gemm_op(m, op, m->part, X, w[k].B, w[k].Bf, w[k].bf_valid, M, w[k].N, Ktot, r->out);
            for (size_t i = 0; i < M; i++)
                memcpy(Y + i * Ntot + w[k].off, m->part + i * w[k].N, w[k].N * sizeof(double));
        }
        return rc;
    }
    double *xs = m->xs;
    for (int k = 0; k < P && !rc; k++) {
        double *pk = m->part + (size_t)k * M * Ntot;
        if (!w[k].K) {
            memset(pk, 0, M * Ntot * sizeof(double));
            continue;
        }
        for (size_t i = 0; i < M; i++) memcpy(xs + i * w[k].K, X + i * Ktot + w[k].off, w[k].K * sizeof(double));
        rc = gemm_op(m, op, pk, xs, w[k].B, w[k].Bf, w[k].bf_valid, M, Ntot, w[k].K, r->acc.acc);
    }
    if (!rc)
        rc = drift_allreduce(
            Y, m->part, M * Ntot, (m->mk > M ? m->mk : M) * Ntot, P, m->nx.allreduce, r->acc.acc, r->out);
    return rc;
}

/* ---- elementwise ------------------------------------------------------------------------------- */

static int rmsnorm(drift_model_t *m, double *o, const double *x, const double *w, size_t M)
{
    size_t d = (size_t)m->c.dim;
    for (size_t i = 0; i < M; i++) {
        const double *xi = x + i * d;
        double ss;
        if (m->nx.exact) {
            int rc = drift_exact_dot(&ss, xi, xi, d, DRIFT_FP64, DRIFT_RNE);
            if (rc) return rc;
            double r = 1.0 / sqrt(ss / (double)d + drift_llm_rms_eps(&m->c));
            for (size_t j = 0; j < d; j++) o[i * d + j] = w[j] * (r * xi[j]);
        } else {
            drift_acc_t acc = {DRIFT_FP32, DRIFT_RNE, 1};
            int rc = drift_dot(&ss, xi, xi, d, NULL, &m->nx.norm_order, &acc);
            if (rc) return rc;
            float s = (float)ss / (float)d + (float)drift_llm_rms_eps(&m->c);
            s = 1.0f / sqrtf(s);
            for (size_t j = 0; j < d; j++) o[i * d + j] = act(m, (float)w[j] * (s * (float)xi[j]));
        }
    }
    return 0;
}

/* RoPE on n values (a row of q or k) at position pos, as run.c: the pair (i, i+1) rotated by
 * pos * theta^(-(i mod head)/head), theta the configuration's base (llama2.c: 10000). GGUF
 * llama models rotate the same adjacent pairs: the converter permutes Wq and Wk for it. */
static void rope(drift_model_t *m, double *v, size_t n, int pos)
{
    size_t hs = m->head;
    for (size_t i = 0; i < n; i += 2) {
        size_t hd = i % hs;
        if (m->nx.exact) {
            double val = (double)pos * (1.0 / pow(drift_llm_rope_theta(&m->c), (double)hd / (double)hs));
            double fr = cos(val), fi = sin(val), a = v[i], b = v[i + 1];
            v[i] = a * fr - b * fi;
            v[i + 1] = a * fi + b * fr;
        } else {
            float freq = 1.0f / powf((float)drift_llm_rope_theta(&m->c), (float)hd / (float)hs);
            float val = (float)pos * freq, fr = cosf(val), fi = sinf(val);
            float a = (float)v[i], b = (float)v[i + 1];
            v[i] = act(m, a * fr - b * fi);
            v[i + 1] = act(m, a * fi + b * fr);
        }
    }
}

/* ---- attention ----------------------------------------------------------------------------------
 * Non-exact runs call lib/ops/attention (drift_attention over the slot's drift_kv_cache_t).
 * The exact reference attends here: out[hs] = sum_t softmax_t(q . k_t / sqrt(hs)) v_t over T
 * cached positions, every dot product and the softmax sum correctly rounded to fp64. */
static int attend_exact(
    drift_model_t *m, double *out, const double *q, const drift_kv_cache_t *kv, size_t kh, size_t T, size_t hs)
{
    double *s = m->att, *col = m->att + m->cap;
    size_t kvh = (size_t)kv->kv_heads;
    int rc;
    double mx = -INFINITY, sum;
    for (size_t t = 0; t < T; t++) {
        if ((rc = drift_exact_dot(&s[t], q, kv->k + (t * kvh + kh) * hs, hs, DRIFT_FP64, DRIFT_RNE))) return rc;
        s[t] /= sqrt((double)hs);
        if (s[t] > mx) mx = s[t];
    }
    for (size_t t = 0; t < T; t++) s[t] = exp(s[t] - mx);
    if ((rc = drift_exact_sum(&sum, s, T, DRIFT_FP64, DRIFT_RNE))) return rc;
    for (size_t t = 0; t < T; t++) s[t] /= sum;
    for (size_t i = 0; i < hs; i++) {
        for (size_t t = 0; t < T; t++) col[t] = kv->v[(t * kvh + kh) * hs + i];
        if ((rc = drift_exact_dot(&out[i], s, col, T, DRIFT_FP64, DRIFT_RNE))) return rc;
    }
    return 0;
}

/* The split count splitkv:auto launches for a batch of nseq sequences over L keys. */
static long auto_splits(const drift_model_t *m, int nseq, size_t L)
{
    long heads = m->c.n_heads / m->P, tiles = (long)((L + (size_t)m->nx.attn.bc - 1) / (size_t)m->nx.attn.bc);
    return drift_attn_auto_splits((long)nseq * heads, m->nx.sms, tiles);
}

/* ---- the step ------------------------------------------------------------------------------------ */

static void trace(drift_model_t *m, int l, drift_block_t b, const double *x, size_t M)
{
    if (m->trace) m->trace(m->trace_ctx, l, b, x, M, (size_t)m->c.dim);
}

int drift_model_step(drift_model_t *m, double *logits, const drift_seq_step_t *seqs, int nseq)
{
    if (!m || !logits || !seqs || nseq < 1) return DRIFT_EINVAL;
    size_t M = 0;
    for (int s = 0; s < nseq; s++) {
        const drift_seq_step_t *q = &seqs[s];
        if (q->slot < 0 || q->slot >= m->nslots || q->ntok < 1 || q->pos < 0 || !q->tokens ||
            (size_t)q->pos + (size_t)q->ntok > m->cap)
            return DRIFT_EINVAL;
        for (int t = 0; t < q->ntok; t++)
            if (q->tokens[t] < 0 || q->tokens[t] >= m->c.vocab_size) return DRIFT_EINVAL;
        M += (size_t)q->ntok;
    }
    if ((m->vrows && m->vrows < M) || (m->vnseq && m->vnseq < nseq)) return DRIFT_EINVAL;
    if (m->eng) return engine_step(m, logits, seqs, nseq);
    size_t Mv = m->vrows ? m->vrows : M;
    int nseqv = m->vnseq ? m->vnseq : nseq;
    /* a slot's cache holds positions 0 .. pos-1: cut back what a restarted sequence left */
    for (int s = 0; s < nseq; s++)
        for (size_t l = 0; l < (size_t)m->c.n_layers; l++) {
            drift_kv_cache_t *kv = &m->kv[(size_t)seqs[s].slot * (size_t)m->c.n_layers + l];
            if ((size_t)seqs[s].pos > kv->len) return DRIFT_EINVAL;
            kv->len = (size_t)seqs[s].pos;
            if (kv->len == 0) kv->scales_set = 0; /* int8:head calibrates again on the new prompt */
        }
    int rc = grow_scratch(m, M > (size_t)nseq ? M : (size_t)nseq);
    if (rc) return rc;
    const drift_llm_config_t *c = &m->c;
    size_t d = (size_t)c->dim, h = (size_t)c->hidden_dim, L = (size_t)c->n_layers, V = (size_t)c->vocab_size;
    size_t hs = m->head, kvd = m->kv_dim, P = (size_t)m->P;
    size_t row = 0;
    for (int s = 0; s < nseq; s++)
        for (int t = 0; t < seqs[s].ntok; t++, row++) {
            m->row_pos[row] = seqs[s].pos + t;
            m->row_slot[row] = seqs[s].slot;
            m->row_tok[row] = seqs[s].tokens[t];
            for (size_t j = 0; j < d; j++) {
                double e = m->emb[(size_t)m->row_tok[row] * d + j];
                m->x[row * d + j] = m->nx.exact ? e : act(m, e);
            }
        }
    m->mk = Mv;
    for (size_t l = 0; l < L && !rc; l++) {
        const mat_t *w = &m->w[l * NW * P];
        rc = rmsnorm(m, m->xb, m->x, m->rms_att + l * d, M);
        trace(m, (int)l, DRIFT_BLOCK_ATTN_NORM, m->xb, M);
        if (!rc) rc = linear(m, DRIFT_OP_QKV, m->q, m->xb, M, w + W_Q * P, 0, d, d);
        if (!rc) rc = linear(m, DRIFT_OP_QKV, m->k, m->xb, M, w + W_K * P, 0, kvd, d);
        if (!rc) rc = linear(m, DRIFT_OP_QKV, m->v, m->xb, M, w + W_V * P, 0, kvd, d);
        if (rc) break;
        for (size_t i = 0; i < M; i++) {
            rope(m, m->q + i * d, d, m->row_pos[i]);
            rope(m, m->k + i * kvd, kvd, m->row_pos[i]);
        }
        char aerr[DRIFT_LLM_ERR_MAX];
        row = 0;
        for (int s = 0; s < nseq && !rc; row += (size_t)seqs[s].ntok, s++) {
            const drift_seq_step_t *sq = &seqs[s];
            drift_kv_cache_t *kv = &m->kv[(size_t)sq->slot * L + l];
            size_t nt = (size_t)sq->ntok, p0 = (size_t)sq->pos;
            if ((rc = drift_kv_append(kv, m->k + row * kvd, m->v + row * kvd, nt, aerr, sizeof aerr))) break;
            if (m->nx.exact) {
                for (size_t i = 0; i < nt && !rc; i++)
                    for (size_t hh = 0; hh < (size_t)c->n_heads && !rc; hh++)
                        rc = attend_exact(m, m->ao + (row + i) * d + hh * hs, m->q + (row + i) * d + hh * hs, kv,
                            hh / m->kv_mul, p0 + i + 1, hs);
                continue;
            }
            if (m->nx.attn_auto_splits) m->ao_opts.kernel.splits = auto_splits(m, nseqv, p0 + nt);
            rc = drift_dispatch_attention(
                m->ao + row * d, m->q + row * d, nt, p0, kv, NULL, &m->ao_opts, aerr, sizeof aerr);
        }
        if (!rc) rc = linear(m, DRIFT_OP_ATTN_OUT, m->y, m->ao, M, w + W_O * P, 1, d, d);
        if (rc) break;
        for (size_t i = 0; i < M * d; i++)
            m->x[i] = m->nx.exact ? m->x[i] + m->y[i] : act(m, (float)m->x[i] + (float)m->y[i]);
        trace(m, (int)l, DRIFT_BLOCK_ATTN, m->x, M);
        rc = rmsnorm(m, m->xb, m->x, m->rms_ffn + l * d, M);
        trace(m, (int)l, DRIFT_BLOCK_MLP_NORM, m->xb, M);
        if (!rc) rc = linear(m, DRIFT_OP_MLP_UP, m->h1, m->xb, M, w + W_1 * P, 0, h, d);
        if (!rc) rc = linear(m, DRIFT_OP_MLP_UP, m->h3, m->xb, M, w + W_3 * P, 0, h, d);
        if (rc) break;
        for (size_t i = 0; i < M * h; i++) {
            if (m->nx.exact) {
                double v = m->h1[i];
                m->h1[i] = v * (1.0 / (1.0 + exp(-v))) * m->h3[i];
            } else {
                float v = (float)m->h1[i];
                v = v * (1.0f / (1.0f + expf(-v)));
                m->h1[i] = act(m, v * (float)m->h3[i]);
            }
        }
        rc = linear(m, DRIFT_OP_MLP_DOWN, m->y, m->h1, M, w + W_2 * P, 1, d, h);
        if (rc) break;
        for (size_t i = 0; i < M * d; i++)
            m->x[i] = m->nx.exact ? m->x[i] + m->y[i] : act(m, (float)m->x[i] + (float)m->y[i]);
        trace(m, (int)l, DRIFT_BLOCK_MLP, m->x, M);
    }
    if (rc) return rc;
    /* the LM head sees one row per sequence: its last token */
    row = 0;
    for (int s = 0; s < nseq; s++) {
        row += (size_t)seqs[s].ntok;
        memcpy(m->q + (size_t)s * d, m->x + (row - 1) * d, d * sizeof(double));
    }
    rc = rmsnorm(m, m->xf, m->q, m->rms_final, (size_t)nseq);
    trace(m, (int)L, DRIFT_BLOCK_FINAL_NORM, m->xf, (size_t)nseq);
    m->mk = (size_t)nseqv;
    if (!rc) rc = linear(m, DRIFT_OP_LMHEAD, logits, m->xf, (size_t)nseq, m->cls, 0, V, d);
    m->mk = 0;
    return rc;
}

int drift_model_score(drift_model_t *m, double *logits, const int *tokens, int n)
{
    if (!m || !logits || !tokens || n < 1 || (size_t)n > m->cap) return DRIFT_EINVAL;
    for (int i = 0; i < n; i++) {
        drift_seq_step_t s = {0, i, 1, tokens + i};
        int rc = drift_model_step(m, logits + (size_t)i * (size_t)m->c.vocab_size, &s, 1);
        if (rc) return rc;
    }
    return 0;
}

int drift_model_plan(const drift_model_t *m, size_t rows, int nseq, int kv_len, long *plan, int cap)
{
    if (!m || !plan || rows < 1 || nseq < 1 || kv_len < 1) return DRIFT_EINVAL;
    if (m->eng) return DRIFT_EUNSUPPORTED; /* llamacpp-cpu decodes each sequence alone: no batch plan */
    int n = 0;
#define PUT(v)                             \
    do {                                   \
        if (n >= cap) return DRIFT_EINVAL; \
        plan[n++] = (long)(v);             \
    } while (0)
    size_t P = (size_t)m->P;
    for (int which = 0; which < NW; which++)
        for (size_t r = 0; r < P; r++) {
            const mat_t *w = &m->w[(size_t)which * P + r]; /* layer 0: every layer has these shapes */
            drift_gemm_kernel_t k;
            int rc = drift_policy_choose_slice(
                &k, m->nx.policy, rows, w->N ? w->N : 1, w->K ? w->K : 1, m->nx.sms, m->nx.min_slice);
            if (rc) return rc;
            PUT(k.family == DRIFT_GEMM_SPLITK ? k.splits : 1);
            if (W_ROWPAR[which] && P > 1 && m->nx.allreduce == DRIFT_ALLREDUCE_RING)
                PUT((rows * (size_t)m->c.dim + P - 1) / P);
        }
    for (size_t r = 0; r < P; r++) {
        drift_gemm_kernel_t k;
        int rc = drift_policy_choose_slice(
            &k, m->nx.policy, (size_t)nseq, m->cls[r].N ? m->cls[r].N : 1, m->cls[r].K, m->nx.sms, m->nx.min_slice);
        if (rc) return rc;
        PUT(k.family == DRIFT_GEMM_SPLITK ? k.splits : 1);
    }
    PUT(m->nx.attn_auto_splits ? auto_splits(m, nseq, (size_t)kv_len) : 0);
#undef PUT
    return n;
}

/* One layer's cache, position by position: the stored values, and for int8 the codes and the
 * scales (int8:token one per position and head; int8:head the heads' scales, fixed by the
 * prompt, which the fork shares). */
static void kv_copy_prefix(drift_kv_cache_t *d, const drift_kv_cache_t *s, size_t len)
{
    size_t row = (size_t)s->kv_heads * (size_t)s->head_dim, H = (size_t)s->kv_heads;
    memcpy(d->k, s->k, len * row * sizeof *d->k);
    memcpy(d->v, s->v, len * row * sizeof *d->v);
    if (s->fmt.storage != DRIFT_KV_FLOAT) {
        memcpy(d->kq, s->kq, len * row);
        memcpy(d->vq, s->vq, len * row);
        size_t ns = s->fmt.storage == DRIFT_KV_INT8_TOKEN ? len * H : H;
        memcpy(d->kscale, s->kscale, ns * sizeof *d->kscale);
        memcpy(d->vscale, s->vscale, ns * sizeof *d->vscale);
    }
    d->scales_set = len ? s->scales_set : 0;
    d->len = len;
}

int drift_model_copy_slot(drift_model_t *m, int dst, int src, int len)
{
    if (!m || dst < 0 || dst >= m->nslots || src < 0 || src >= m->nslots || len < 0) return DRIFT_EINVAL;
    if (m->eng) return DRIFT_EUNSUPPORTED;
    size_t L = (size_t)m->c.n_layers;
    for (size_t l = 0; l < L; l++)
        if ((size_t)len > m->kv[(size_t)src * L + l].len) return DRIFT_EINVAL;
    for (size_t l = 0; l < L; l++) {
        drift_kv_cache_t *d = &m->kv[(size_t)dst * L + l];
        if (dst == src)
            d->len = (size_t)len, d->scales_set = len ? d->scales_set : 0;
        else
            kv_copy_prefix(d, &m->kv[(size_t)src * L + l], (size_t)len);
    }
    return 0;
}
