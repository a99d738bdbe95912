/* tc_probe.h — the feature tests that tell tensor-core architectures apart (Fasi, Higham,
 * Mikaitis & Pranesh, "Numerical behavior of NVIDIA tensor cores", PeerJ CS 7:e330, 2021, and
 * its suite tensor-cores-numerical-behavior; plus probes derived from Khattak & Mikaitis's
 * models that reach the clamps, the fp8 accumulator and AMD's block FMAs). One table, shared
 * by experiments/tc_conformance/main.c (which prints every probe on every architecture) and
 * tests/test_tc_probe.c (which holds the results against hand-derived values, written there,
 * not here). Each probe is one block FMA: c + sum a[i] b[i] with drift_tc_dot. */
#ifndef DRIFT_TC_PROBE_H
#define DRIFT_TC_PROBE_H

#include "drift.h"
#include "format.h"
#include "order.h"

#define DRIFT_TC_PROBE_MAXN 4

typedef struct {
    const char *name;    /* short id: "D1", "clamp-fp32", ... ([F]'s section and item where it is theirs) */
    const char *feature; /* what it separates, in words */
    const char *what;    /* the inputs, in words */
    drift_format_t in, out;
    int n; /* products */
    double a[DRIFT_TC_PROBE_MAXN], b[DRIFT_TC_PROBE_MAXN], c;
} drift_tc_probe_t;

/* The table and its length. */
int drift_tc_probes(const drift_tc_probe_t **table);

/* The probe's result on arch: 0, or drift_tc_dot's error (DRIFT_EUNSUPPORTED: no path for
 * that input or output). */
DRIFT_MUST_CHECK int drift_tc_probe_run(double *out, const drift_tc_probe_t *p, drift_tc_arch_t arch);

/* [F]'s block-size test (sec. 3): products 2^16, -2^16 at positions 0 and 1 and 2^-18
 * (2^-9 * 2^-9) at position j, c = 0, fp32 output. Inside the first block 2^-18 is truncated
 * by the alignment to 2^16; from the next block on it stands alone and survives. *block =
 * the smallest j >= 2 whose 2^-18 survives (searched up to 64): the block size, or 2 when
 * nothing is truncated (exact or fp32-pairwise blocks: the test cannot see a block).
 * 0, or DRIFT_EUNSUPPORTED (no path for in), DRIFT_ERANGE (none survives up to 64). */
DRIFT_MUST_CHECK int drift_tc_probe_block(int *block, drift_tc_arch_t arch, drift_format_t in);

#endif
