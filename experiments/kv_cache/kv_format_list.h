/* kv_format_list.h — a list of KV storage formats as an option gives it ("fp16,int8:token"):
 * kv_cache's --kv-formats and --real-kv. */
#ifndef DRIFT_KV_FORMAT_LIST_H
#define DRIFT_KV_FORMAT_LIST_H

#include "attention.h"

#define MAX_KV 16 /* formats in one list */

/* Parses the comma-separated list into f[0..n) and their canonical names (drift_kv_format_print)
 * into names[0..n); returns n. Dies naming opt, with the accepted formats in `accepted`, when the
 * list is empty or too long, a format is unknown, or a format is given twice (compared as parsed:
 * fp32,FP32 is one format twice). */
int drift_kv_format_list(
    drift_kv_format_t *f, char (*names)[32], const char *opt, const char *list, const char *accepted);

#endif
