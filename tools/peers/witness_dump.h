/* witness_dump.h: writes every intermediate tensor of chosen llama_decode calls, through
 * llama.cpp's eval callback (llama_context_params.cb_eval), so that a twin implementation can
 * find the first graph node whose values differ.
 *
 * Files, in DIR: d<call>_<seq>_<name>.f32 (or .i32 for integer tensors): the tensor's
 * elements in ggml order (ne0 fastest, then ne1, ne2, ne3), gathered through its strides so
 * a view or permutation is written as its logical shape, converted to float32 (F16, BF16 and
 * quantized types through ggml's own to-float conversion; F32 copied). <name> is the graph
 * node name with every byte outside [A-Za-z0-9._-] replaced by '_'. DIR/index.tsv lists
 * call, seq, name (as in the graph), op, type, ne0..ne3 and the file, one row per node in
 * execution order. */
#ifndef DRIFT_PEERS_WITNESS_DUMP_H
#define DRIFT_PEERS_WITNESS_DUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "drift.h"

struct ggml_tensor;

typedef struct {
    char dir[1024];
    FILE *index;
    int call; /* decode call now running; the callback dumps while 0 <= call < max_calls */
    int max_calls;
    int seq;              /* node number within the call */
    long written;         /* files written */
    int flash_attn_nodes; /* FLASH_ATTN_EXT nodes seen: shows what "auto" resolved to */
    int softmax_nodes;
    int failed;
    char err[1400]; /* room for a full path */
} witness_dump;

/* Creates DIR if needed and opens DIR/index.tsv. 0 or -1 with a message in err. */
DRIFT_MUST_CHECK int witness_dump_open(witness_dump *d, const char *dir, int max_calls, char *err, size_t errsz);
/* The ggml_backend_sched_eval_callback. */
bool witness_dump_cb(struct ggml_tensor *t, bool ask, void *user);
/* Closes the index; 0, or -1 if any write failed (message in d->err). */
DRIFT_MUST_CHECK int witness_dump_close(witness_dump *d);

#endif
