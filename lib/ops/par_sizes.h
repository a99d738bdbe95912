/* par_sizes.h — when an OpenMP region pays in lib/ops: the sizes below which the GEMM engines
 * (gemm_internal.h) and the tensor-core model (tc_model.c, tc_gemm_*.c) run on one thread.
 * A header of its own so that the tensor-core model can share the thresholds without
 * including the GEMM emulation's internals (gemm.c includes tc_model.h: the two would
 * include each other). */
#ifndef DRIFT_PAR_SIZES_H
#define DRIFT_PAR_SIZES_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Below these sizes a parallel region costs more than it saves: run on one thread. The
 * cost that matters is not the fork and join (microseconds) but, on a busy machine, the
 * barrier waiting for a thread that the scheduler has not run yet (a time slice, about a
 * millisecond): so a region is worth it when its work is about a millisecond or more on
 * one thread. The sizes come from the measured speed of each engine on this lab's 2-core
 * machine (bench_gemm, bench_round): vectorised F32/F64 kernels do a multiply-add in
 * 0.01 ns (tiled) to 0.1 ns (rows), the GEN step costs 5-20 ns; the bulk rounding 2.5 ns
 * a value, plain float/double passes well under 1 ns, passes that call the library per
 * element (GEN combine, epilogue) 5-20 ns. The results do not depend on any of this
 * (law 4: every thread count gives the same bits). */
#define DRIFT_PAR_MIN_FMAS_FAST ((size_t)1 << 24)  /* F32/F64 multiply-adds: 256^3 */
#define DRIFT_PAR_MIN_FMAS_GEN ((size_t)1 << 18)   /* GEN steps: 64^3 */
#define DRIFT_PAR_MIN_ELEMS_FAST ((size_t)1 << 19) /* rounding, packing, float/double passes */
#define DRIFT_PAR_MIN_ELEMS ((size_t)1 << 16)      /* passes calling the library per element */
/* Scheduling: every loop hands out its pieces dynamically (rows, tiles, or this many elements
 * of a flat pass), never a static split. On a busy machine one of two threads often shares its
 * core with another process and runs at half speed; a static split makes the whole region
 * wait for it, so two threads were no faster than one. Each piece's result is its own (no
 * reduction crosses pieces), so any partition gives the same bits. */
#define DRIFT_PAR_CHUNK_ELEMS 4096

#ifdef __cplusplus
}
#endif

#endif
