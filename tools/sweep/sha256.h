/* sha256.h — the sweep's names for lib/run/digest.h's SHA-256 (one implementation, shared
 * with the run manifests of table.c). */
#ifndef DRIFT_SWEEP_SHA256_H
#define DRIFT_SWEEP_SHA256_H

#include "digest.h"
#include "manifest.h"

typedef drift_sha256_t sweep_sha256_t;
#define sweep_sha256_init drift_sha256_init
#define sweep_sha256_update drift_sha256_update
#define sweep_sha256_hex drift_sha256_hex
/* regular files only: a FIFO listed in a manifest once hung the check */
#define sweep_sha256_file drift_sha256_regular

#endif
