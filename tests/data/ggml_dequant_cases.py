#!/usr/bin/env python3
"""Writes tests/data/ggml_dequant_cases.tsv: ggml tensor blocks with the values that two
implementations other than driftlab's give them, for tests/test_ggml_quant.c.

Sources (column `source`):
  gguf-py       gguf.quants.dequantize of the `gguf` PyPI package (numpy, written apart from
                ggml's C); for the types it can quantize (f32 f16 bf16 q4_0 q4_1 q5_0 q5_1
                q8_0) the blocks come from gguf.quants.quantize of random data, for the
                k-quants (which it only dequantizes) from ggml's own quantize_row_*_ref of
                random data and from random bytes;
  smollm2       the first 4 rows of blk.0.attn_q.weight (q4_1) and token_embd.weight (q8_0) of
                SmolLM2-135M-Instruct.Q4_1.gguf, dequantized by gguf-py;
  ggml-c        ggml's ggml-quants.c itself (llama.cpp's sources, compiled here with
                -ffp-contract=off): dequantize_row_q8_K for q8_K blocks, and the reference
                quantizers quantize_row_q8_0_ref / q8_1_ref / q8_K_ref (kind `quant`),
                which gguf-py lacks (it knows neither q8_1 nor q8_K).
Every `deq` row of gguf-py is also checked here against ggml's C dequantize_row_* on the
same bytes (the script stops if they differ in one bit). q8_1 has no dequantize in ggml
nor in gguf-py: it has no `deq` row.

Columns (tab-separated): kind (deq|quant), ggml type id, type name, n (elements), source,
input, expected. deq: input = the blocks' bytes in hex, expected = n fp32 bit patterns,
8 hex digits each (most significant first). quant: input = n fp32 bit patterns, expected =
the blocks' bytes.

Usage: tests/data/ggml_dequant_cases.py LLAMA_CPP_DIR GGUF_FILE > tests/data/ggml_dequant_cases.tsv
(LLAMA_CPP_DIR holds ggml/src/ggml-quants.c; numpy's default_rng with fixed seeds.)"""
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np
import gguf
from gguf import GGMLQuantizationType as T
from gguf.quants import dequantize, quantize

HARNESS = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
typedef void (*deq_fn)(const void *, float *, int64_t);
typedef void (*q_fn)(const float *, void *, int64_t);
#define D(name) void dequantize_row_##name(const void *, float *, int64_t);
#define Q(name) void quantize_row_##name##_ref(const float *, void *, int64_t);
D(q4_0) D(q4_1) D(q5_0) D(q5_1) D(q8_0) D(q2_K) D(q3_K) D(q4_K) D(q5_K) D(q6_K) D(q8_K)
Q(q8_0) Q(q8_1) Q(q8_K) Q(q2_K) Q(q3_K) Q(q4_K) Q(q5_K) Q(q6_K)
/* what ggml-quants.c needs from the rest of ggml: never reached on these paths */
void ggml_abort(const char *f, int l, const char *fmt, ...) { (void)f; (void)l; (void)fmt; abort(); }
size_t ggml_row_size(int t, int64_t n) { (void)t; (void)n; abort(); }
const char *ggml_type_name(int t) { (void)t; abort(); }
size_t ggml_type_size(int t) { (void)t; abort(); }
static const struct { const char *name; deq_fn d; q_fn q; } F[] = {
    {"q4_0", dequantize_row_q4_0, 0}, {"q4_1", dequantize_row_q4_1, 0},
    {"q5_0", dequantize_row_q5_0, 0}, {"q5_1", dequantize_row_q5_1, 0},
    {"q8_0", dequantize_row_q8_0, quantize_row_q8_0_ref}, {"q8_1", 0, quantize_row_q8_1_ref},
    {"q2_K", dequantize_row_q2_K, quantize_row_q2_K_ref}, {"q3_K", dequantize_row_q3_K, quantize_row_q3_K_ref},
    {"q4_K", dequantize_row_q4_K, quantize_row_q4_K_ref}, {"q5_K", dequantize_row_q5_K, quantize_row_q5_K_ref},
    {"q6_K", dequantize_row_q6_K, quantize_row_q6_K_ref}, {"q8_K", dequantize_row_q8_K, quantize_row_q8_K_ref},
};
/* ggml_ref deq|quant TYPE N BYTES: stdin -> stdout */
int main(int argc, char **argv) {
    if (argc != 5) return 2;
    long n = atol(argv[3]), bytes = atol(argv[4]);
    for (size_t i = 0; i < sizeof F / sizeof F[0]; i++) {
        if (strcmp(F[i].name, argv[2])) continue;
        float *x = calloc((size_t)n, 4);
        unsigned char *b = calloc((size_t)bytes, 1);
        if (!strcmp(argv[1], "deq")) {
            if (fread(b, 1, (size_t)bytes, stdin) != (size_t)bytes || !F[i].d) return 3;
            F[i].d(b, x, n);
            fwrite(x, 4, (size_t)n, stdout);
        } else {
            if (fread(x, 4, (size_t)n, stdin) != (size_t)n || !F[i].q) return 3;
            F[i].q(x, b, n);
            fwrite(b, 1, (size_t)bytes, stdout);
        }
        return 0;
    }
    return 4;
}
"""


def build_harness(llama_dir, tmp):
    src = os.path.join(llama_dir, "ggml", "src")
    inc = os.path.join(llama_dir, "ggml", "include")
    h = os.path.join(tmp, "harness.c")
    with open(h, "w") as f:
        f.write(HARNESS)
    exe = os.path.join(tmp, "ggml_ref")
    subprocess.run(["cc", "-O2", "-ffp-contract=off", "-w", "-I" + src, "-I" + inc, h,
                    os.path.join(src, "ggml-quants.c"), "-lm", "-o", exe], check=True)
    return exe


def run_c(exe, mode, name, n, nbytes, data):
    r = subprocess.run([exe, mode, name, str(n), str(nbytes)], input=data, capture_output=True, check=True)
    return r.stdout


SIZES = {T.F32: (1, 4), T.F16: (1, 2), T.BF16: (1, 2), T.Q4_0: (32, 18), T.Q4_1: (32, 20),
         T.Q5_0: (32, 22), T.Q5_1: (32, 24), T.Q8_0: (32, 34), T.Q8_1: (32, 36),
         T.Q2_K: (256, 84), T.Q3_K: (256, 110), T.Q4_K: (256, 144), T.Q5_K: (256, 176),
         T.Q6_K: (256, 210), T.Q8_K: (256, 292)}
# ggml's type names (ggml.c type_traits), used in the table for people to read
NAMES = {T.F32: "f32", T.F16: "f16", T.BF16: "bf16", T.Q4_0: "q4_0", T.Q4_1: "q4_1",
         T.Q5_0: "q5_0", T.Q5_1: "q5_1", T.Q8_0: "q8_0", T.Q8_1: "q8_1", T.Q2_K: "q2_K",
         T.Q3_K: "q3_K", T.Q4_K: "q4_K", T.Q5_K: "q5_K", T.Q6_K: "q6_K", T.Q8_K: "q8_K"}
# fp16 fields of each k-quant block: (offset, count) of the fp16 scales in the block
K_FP16 = {T.Q2_K: (80, 2), T.Q3_K: (108, 1), T.Q4_K: (0, 2), T.Q5_K: (0, 2), T.Q6_K: (208, 1)}


def f32hex(a):
    return "".join("%08x" % v for v in np.asarray(a, dtype=np.float32).view(np.uint32))


def row(kind, t, n, source, inp, exp):
    return "\t".join([kind, str(int(t)), NAMES[t], str(n), source, inp, exp])


def deq_row(t, blocks, source, exe):
    """A deq row: gguf-py's values, checked against ggml's C where ggml has the type."""
    blocks = np.ascontiguousarray(blocks).view(np.uint8).ravel()  # f32/f16 arrive as floats
    be, bb = SIZES[t]
    n = blocks.size // bb * be
    want = dequantize(blocks, t).astype(np.float32).ravel()
    assert want.size == n
    if t not in (T.F32, T.F16, T.BF16):
        c = np.frombuffer(run_c(exe, "deq", NAMES[t], n, blocks.size, blocks.tobytes()), dtype=np.float32)
        if not np.array_equal(c.view(np.uint32), want.view(np.uint32)):
            sys.exit("gguf-py and ggml's C disagree on %s (%s)" % (NAMES[t], source))
    return row("deq", t, n, source, blocks.tobytes().hex(), f32hex(want))


def random_fp16(rng, k, wide):
    """k finite fp16 bit patterns: realistic scales (|v| in [2^-14, 2^-2]) or, when wide, any
    finite pattern (subnormals and 65504 included)."""
    if wide:
        b = rng.integers(0, 1 << 16, size=k, dtype=np.uint32)
        b = np.where((b & 0x7C00) == 0x7C00, b & 0x83FF, b)  # exponent 31 -> 0 (a subnormal)
        return b.astype(np.uint16)
    v = np.float16(rng.choice([-1, 1], size=k) * 2.0 ** rng.uniform(-14, -2, size=k))
    return v.view(np.uint16)


def k_random_blocks(rng, t, nblocks, wide):
    be, bb = SIZES[t]
    blk = rng.integers(0, 256, size=(nblocks, bb), dtype=np.uint8)
    off, cnt = K_FP16[t]
    for i in range(nblocks):
        blk[i, off:off + 2 * cnt] = random_fp16(rng, cnt, wide).view(np.uint8)
    return blk


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    llama_dir, model = sys.argv[1], sys.argv[2]
    out = ["# ggml tensor blocks and their values from implementations other than driftlab's;",
           "# written by tests/data/ggml_dequant_cases.py (its docstring says how), gguf " +
           getattr(gguf, "__version__", "0.19.0") + ", numpy " + np.__version__ + ".",
           "# kind\ttype_id\ttype\tn\tsource\tinput\texpected"]
    with tempfile.TemporaryDirectory() as tmp:
        exe = build_harness(llama_dir, tmp)

        # the real model: 4 rows of a q4_1 and of a q8_0 tensor
        r = gguf.GGUFReader(model)
        for name in ("blk.0.attn_q.weight", "token_embd.weight"):
            ten = next(x for x in r.tensors if x.name == name)
            be, bb = SIZES[ten.tensor_type]
            row_bytes = int(ten.shape[0]) // be * bb
            raw = np.asarray(ten.data).view(np.uint8).ravel()
            for k in range(4):
                out.append(deq_row(ten.tensor_type, raw[k * row_bytes:(k + 1) * row_bytes],
                                   "smollm2:%s:row%d" % (name, k), exe))

        # the types gguf-py quantizes: random data (normal, with a few scales of magnitude)
        rng = np.random.default_rng(20250601)
        for t in (T.F32, T.F16, T.BF16, T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1, T.Q8_0):
            be, _ = SIZES[t]
            n = max(be * 4, 32)
            x = (rng.standard_normal(n) * 2.0 ** rng.integers(-8, 8, size=n)).astype(np.float32)
            if t in (T.Q4_1, T.Q5_1):  # a narrow block near 1000: m ~ 2^10 and d ~ 2^-10 (its
                # last bit ~2^-20), so d*q + m needs ~30 bits and the add rounds
                x[:be] = np.float32(1000.0) + rng.integers(0, 64, size=be).astype(np.float32) * np.float32(2.0 ** -12)
            out.append(deq_row(t, quantize(x, t), "gguf-py:quantize+dequantize", exe))

        # the k-quants: ggml's own quantizer on random data, then random bytes (realistic and
        # any-finite fp16 scales)
        for t in (T.Q2_K, T.Q3_K, T.Q4_K, T.Q5_K, T.Q6_K):
            be, bb = SIZES[t]
            x = (rng.standard_normal(be) * 0.05).astype(np.float32)
            blk = np.frombuffer(run_c(exe, "quant", NAMES[t], be, bb, x.tobytes()), dtype=np.uint8)
            out.append(deq_row(t, blk, "gguf-py:dequantize(ggml-c quantize_row_%s_ref)" % NAMES[t], exe))
            out.append(deq_row(t, k_random_blocks(rng, t, 1, False), "gguf-py:dequantize(random bytes)", exe))
            out.append(deq_row(t, k_random_blocks(rng, t, 1, True), "gguf-py:dequantize(random bytes, any fp16)", exe))

        # q8_K: gguf-py has no such type: ggml's C dequantize_row_q8_K (random bytes with a
        # realistic d, then with any finite float d: subnormal and overflowing products)
        for wide in (False, True):
            blk = rng.integers(0, 256, size=292, dtype=np.uint8)
            if wide:
                d = np.uint32(rng.integers(0, 1 << 32, dtype=np.uint64))
                if (d >> 23) & 0xFF == 0xFF:
                    d &= np.uint32(0x807FFFFF)
                d = np.array([d], dtype=np.uint32)
            else:
                d = np.array([0.0123], dtype=np.float32).view(np.uint32)
            blk[0:4] = d.view(np.uint8)
            vals = np.frombuffer(run_c(exe, "deq", "q8_K", 256, 292, blk.tobytes()), dtype=np.float32)
            out.append(row("deq", T.Q8_K, 256, "ggml-c:dequantize_row_q8_K", blk.tobytes().hex(), f32hex(vals)))

        # the reference quantizers of activations, by ggml's C
        for t, nblk in ((T.Q8_0, 4), (T.Q8_1, 4), (T.Q8_K, 2)):
            be, bb = SIZES[t]
            n = be * nblk
            x = (rng.standard_normal(n) * 2.0 ** rng.integers(-6, 6, size=n)).astype(np.float32)
            # the second block: halves k + 1/2 (|x| <= 126.5) and one 127, so that d = 1 (q8_0,
            # q8_1: 127/127) or iscale = -1 (q8_K) and x * id stays a tie (away from zero for
            # roundf, to even for nearest_int); the third starts with zeros
            x[be:2 * be] = np.float32(rng.integers(-127, 127, size=be)) + np.float32(0.5)
            x[be] = np.float32(127.0)
            x[2 * be:2 * be + 3] = 0.0
            blk = run_c(exe, "quant", NAMES[t], n, bb * nblk, x.tobytes())
            out.append(row("quant", t, n, "ggml-c:quantize_row_%s_ref" % NAMES[t], f32hex(x), blk.hex()))
            if t == T.Q8_K:
                z = np.zeros(be, dtype=np.float32)  # all zero: d = 0, q = 0 (bsums: see the test)
                out.append(row("quant", t, be, "ggml-c:quantize_row_q8_K_ref(zero block)", f32hex(z),
                               run_c(exe, "quant", "q8_K", be, bb, z.tobytes()).hex()))
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
