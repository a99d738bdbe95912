/* attention_drift_lab.h — what one run of the attention_drift experiment knows once its
 * kernels have run: the kernels, the error of each per (length, format), and the padding and
 * prefill-vs-decode differences, and the control's errors; and its declared output (four CSV
 * tables, the fragment's three tables and takeaway, stdout). */
#ifndef DRIFT_ATTENTION_DRIFT_LAB_H
#define DRIFT_ATTENTION_DRIFT_LAB_H

#include <stddef.h>

#include "attention.h"
#include "cli.h"

/* one kernel's output error over the checked rows (attention_drift.c says against what) */
typedef struct {
    double rel_round, rel_true, max_abs_round;
} drift_attn_err_t;

typedef struct {
    const drift_cli_t *cli;
    size_t H, G, D, R;  /* query heads, KV heads, head dim, checked rows per length */
    size_t n, P;        /* the padding and decode tests' tokens and padding keys */
    long splits, ssize; /* splitkv:N's N, splitkv:size=S's S */
    int nf, nL, nk;     /* formats, lengths, kernels */
    const long *Ls;
    const drift_attn_kernel_t *kern;
    const char (*kname)[DRIFT_ATTN_SPEC_MAX];
    const char (*kfam)[16];
    const long *kbc;            /* the key tile per kernel (0: standard) */
    int k_std, k_f64;           /* standard's index, flash:64,64's (-1: not swept) */
    const drift_attn_err_t *E;  /* [(li * nf + f) * nk + k] */
    const drift_attn_err_t *Ec; /* [li * nf + f]: the control, standard with fp32 scores */
    const long *pad_diff;       /* [(f * nk + k) * 2 + right]: outputs that differ */
    const double *pad_max;      /* the same, largest |difference| */
    const long *dec_diff;       /* [f * nk + k]: query rows whose decode differs from prefill */
    const double *dec_max;
} drift_attention_lab_t;

/* Every output file, committed together; stdout unless --quiet. */
void drift_attention_write(const drift_attention_lab_t *L);

#endif
