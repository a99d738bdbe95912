#!/usr/bin/env python3
"""pack.py — convert the tensor-core validation data of Khattak & Mikaitis (text files, one
sample per line) into the compact binary files read by tests/test_tc_hw.c and
tests/long_tc_hw.c. Layout of one file, GPU_FORMAT.bin (see README.md):

  header: one ASCII line "drift-tc-hw 1 GPU FORMAT K N OUTPUTS CMODE\n"
          OUTPUTS = fp32 or fp32+fp16; CMODE = c (every output measured with c) or
          c0fp32 (the fp32 output was measured with c = 0, the fp16 output with c: H100
          and H200 fp8, see README.md)
  then N records, little-endian:
          a[K], b[K]  the input bits in FORMAT's own encoding (fp8: 1 byte, fp16 and bf16:
                      2 bytes, tf32: the 4-byte fp32 pattern, whose low 13 bits are 0)
          c           4 bytes, fp32 bits of c (the fp16 output used c rounded to fp16, RNE)
          d32         4 bytes, fp32 bits of the GPU's fp32 result
          d16         2 bytes, fp16 bits of the GPU's fp16 result (only with fp32+fp16)

usage: pack.py MODEL_VALIDATION_DIR OUT_DIR [STRIDE]
  STRIDE s keeps samples 0, s, 2s, ... (a stratified subset: every configuration keeps the
  same share of the file, in file order). Deterministic: same input, same bytes.
"""
import os
import struct
import sys

K = {"V100": {"fp16": 4}}
for g in ("A100", "A2"):
    K[g] = {"fp16": 8, "bf16": 8, "tf32": 4}
for g in ("H100", "H200", "B200"):
    K[g] = {"fp16": 16, "bf16": 16, "tf32": 4, "E4M3": 32, "E5M2": 32}
for g in ("Ada", "L40S"):
    K[g] = {"fp16": 8, "bf16": 8, "tf32": 4, "E4M3": 32, "E5M2": 32}
C_ZERO = {("H100", "E4M3"), ("H100", "E5M2"), ("H200", "E4M3"), ("H200", "E5M2")}


def f32(bits):
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def fp16_bits(x):
    b = struct.unpack("<H", struct.pack("<e", x))[0]
    assert struct.unpack("<e", struct.pack("<H", b))[0] == x or x != x
    return b


def e4m3_bits(x):
    s = 0x80 if (x < 0 or (x == 0 and struct.pack("<f", x)[3] & 0x80)) else 0
    ax = abs(x)
    for b in range(0x7f):  # finite E4M3 magnitudes 0 .. 448 (0x7f is NaN)
        e, m = b >> 3, b & 7
        v = (m / 8) * 2.0 ** -6 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7)
        if v == ax:
            return s | b
    raise ValueError(f"{x!r} is not an E4M3 value")


def in_bits(fmt, bits):
    x = f32(bits)
    if fmt == "fp16":
        return struct.pack("<H", fp16_bits(x))
    if fmt == "bf16":
        assert bits & 0xffff == 0
        return struct.pack("<H", bits >> 16)
    if fmt == "tf32":
        assert bits & 0x1fff == 0
        return struct.pack("<I", bits)
    if fmt == "E5M2":
        h = fp16_bits(x)
        assert h & 0xff == 0
        return bytes([h >> 8])
    if fmt == "E4M3":
        return bytes([e4m3_bits(x)])
    raise ValueError(fmt)


def main():
    src, out = sys.argv[1], sys.argv[2]
    stride = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    os.makedirs(out, exist_ok=True)
    for gpu in sorted(K):
        for fmt in sorted(K[gpu]):
            d = os.path.join(src, gpu, fmt)
            if not os.path.isdir(d):
                continue
            rd = lambda n: open(os.path.join(d, n)).read().split("\n")
            A, B = rd(f"a_{gpu}_{fmt}.txt"), rd(f"b_{gpu}_{fmt}.txt")
            C, D32 = rd(f"c_{gpu}_fp32.txt"), rd(f"d_{gpu}_fp32.txt")
            has16 = os.path.exists(os.path.join(d, f"d_{gpu}_fp16.txt"))
            D16 = rd(f"d_{gpu}_fp16.txt") if has16 else None
            n = len([l for l in A if l.strip()])
            keep = range(0, n, stride)
            cz = (gpu, fmt) in C_ZERO
            hdr = "drift-tc-hw 1 %s %s %d %d %s %s\n" % (gpu, fmt, K[gpu][fmt], len(keep),
                                                         "fp32+fp16" if has16 else "fp32", "c0fp32" if cz else "c")
            buf = bytearray(hdr.encode())
            for i in keep:
                a = [int(t, 16) for t in A[i].split()]
                b = [int(t, 16) for t in B[i].split()]
                assert len(a) == K[gpu][fmt] and len(b) == len(a), (gpu, fmt, i)
                for v in a + b:
                    buf += in_bits(fmt, v)
                buf += struct.pack("<I", int(C[i].strip(), 2))
                buf += struct.pack("<I", int(D32[i].strip(), 2))
                if has16:
                    buf += struct.pack("<H", fp16_bits(f32(int(D16[i].strip(), 2))))
            with open(os.path.join(out, f"{gpu}_{fmt}.bin"), "wb") as fp:
                fp.write(buf)


if __name__ == "__main__":
    main()
