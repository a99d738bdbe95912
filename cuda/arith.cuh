// arith.cuh — the accumulator arithmetic of the twin kernels (internal to cuda/*.cu): every
// step is one IEEE operation rounded once in a stated mode, exactly as lib/core/order.c's
// steps (drift_add / drift_mul / drift_fma). Built with --fmad=false, so the compiler fuses
// nothing; the fused step is the explicit __fmaf_r? / __fma_r? intrinsic.
#ifndef DRIFT_ARITH_CUH
#define DRIFT_ARITH_CUH

#include "format.h"

template <typename T, int M> struct arith;

#define DRIFT_ARITH(T, M, SUF, ADD, SUB, MUL, FMA)                                           \
    template <> struct arith<T, M> {                                                         \
        static __device__ __forceinline__ T add(T a, T b) { return ADD##SUF(a, b); }         \
        static __device__ __forceinline__ T sub(T a, T b) { return SUB##SUF(a, b); }         \
        static __device__ __forceinline__ T mul(T a, T b) { return MUL##SUF(a, b); }         \
        static __device__ __forceinline__ T fma(T a, T b, T c) { return FMA##SUF(a, b, c); } \
    };
DRIFT_ARITH(float, DRIFT_RNE, _rn, __fadd, __fsub, __fmul, __fmaf)
DRIFT_ARITH(float, DRIFT_RZ, _rz, __fadd, __fsub, __fmul, __fmaf)
DRIFT_ARITH(float, DRIFT_RU, _ru, __fadd, __fsub, __fmul, __fmaf)
DRIFT_ARITH(float, DRIFT_RD, _rd, __fadd, __fsub, __fmul, __fmaf)
DRIFT_ARITH(double, DRIFT_RNE, _rn, __dadd, __dsub, __dmul, __fma)
DRIFT_ARITH(double, DRIFT_RZ, _rz, __dadd, __dsub, __dmul, __fma)
DRIFT_ARITH(double, DRIFT_RU, _ru, __dadd, __dsub, __dmul, __fma)
DRIFT_ARITH(double, DRIFT_RD, _rd, __dadd, __dsub, __dmul, __fma)
#undef DRIFT_ARITH

// One chain step of a dot product (order.h): fma rounds acc + a*b once, nofma rounds the
// product first.
template <typename T, int M> static __device__ __forceinline__ T chain_step(T acc, T a, T b, bool fma)
{
    return fma ? arith<T, M>::fma(a, b, acc) : arith<T, M>::add(acc, arith<T, M>::mul(a, b));
}

// pairwise over n terms (order.h): n <= 1 trivial (no term: +0), else m = floor(n/2),
// sum[0,m) + sum[m,n); term(i) gives a leaf. An explicit stack instead of recursion (ptxas
// cannot size a recursive stack statically); depth <= 64 for any n.
template <typename T, int M, typename Term> static __device__ T pairwise(Term term, long lo, long n)
{
    struct frame {
        long lo, n;
        int stage;
        T left;
    } st[66];
    int sp = 0;
    T ret = 0;
    st[sp++] = {lo, n, 0, T(0)};
    while (sp) {
        frame &f = st[sp - 1];
        if (f.n <= 1) {
            ret = f.n ? term(f.lo) : T(0);
            sp--;
        } else if (f.stage == 0) {
            f.stage = 1;
            st[sp++] = {f.lo, f.n / 2, 0, T(0)};
        } else if (f.stage == 1) {
            f.left = ret;
            f.stage = 2;
            st[sp++] = {f.lo + f.n / 2, f.n - f.n / 2, 0, T(0)};
        } else {
            ret = arith<T, M>::add(f.left, ret);
            sp--;
        }
    }
    return ret;
}

#endif
