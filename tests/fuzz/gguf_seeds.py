#!/usr/bin/env python3
"""gguf_seeds.py — writes the fuzz seeds tests/fuzz/gguf/0..3 with the `gguf` PyPI package
(llama.cpp's own writer, gguf-py), so the seeds are files the reference writer produces and
test_gguf can read them as an independent check of the reader. Run once from the repository
root (pip install gguf, written with 0.19.0; the lab never needs it to build or run):

    python3 tests/fuzz/gguf_seeds.py

Tensor bytes are fixed patterns, not real weights: the reader never looks inside them. The
values asserted in tests/test_gguf.c (seeds test) are the ones written here."""
import os
import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q, GGUFValueType as V

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gguf")


def raw(n, salt):
    return (np.arange(n, dtype=np.uint32) * 37 + salt).astype(np.uint8)


def write(name, fill):
    path = os.path.join(OUT, name)
    w = gguf.GGUFWriter(path, "llama")  # writes general.architecture = "llama" first
    fill(w)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def seed0(w):  # metadata only, no tensors
    w.add_string("general.name", "seed0")


def seed1(w):  # every value type, arrays of arrays, two tensors
    w.add_uint8("t.u8", 200)
    w.add_int8("t.i8", -100)
    w.add_uint16("t.u16", 60000)
    w.add_int16("t.i16", -30000)
    w.add_uint32("t.u32", 4000000000)
    w.add_int32("t.i32", -2000000000)
    w.add_float32("t.f32", 0.5)
    w.add_bool("t.bool", True)
    w.add_string("t.str", "hi")
    w.add_uint64("t.u64", 2**63 + 5)
    w.add_int64("t.i64", -(2**62))
    w.add_float64("t.f64", -0.25)
    w.add_array("t.arr_i32", [1, -2, 3])
    w.add_array("t.arr_str", ["a", "", "ccc"])
    w.add_array("t.arr_arr", [[1, 2], [3]])
    w.add_tensor("a", np.arange(8, dtype=np.float32))
    w.add_tensor("b", raw(2 * 34, 1).reshape(2, 34), raw_dtype=Q.Q8_0)  # ne {32, 2}


def seed2(w):  # a tiny llama: hyperparameters, a tokenizer, quantized weights, alignment 64
    w.add_custom_alignment(64)
    w.add_block_count(1)
    w.add_embedding_length(256)
    w.add_head_count(4)
    w.add_token_list(["<unk>", "<s>", "</s>", "a", "b"])
    w.add_token_scores([0.0, 0.0, 0.0, -1.0, -2.0])
    w.add_token_types([2, 3, 3, 1, 1])
    w.add_tensor("token_embd.weight", raw(5 * 160, 2).reshape(5, 160), raw_dtype=Q.Q4_1)    # ne {256, 5}
    w.add_tensor("blk.0.attn_q.weight", raw(2 * 144, 3).reshape(2, 144), raw_dtype=Q.Q4_K)  # ne {256, 2}
    w.add_tensor("output_norm.weight", np.ones(256, dtype=np.float16))


def seed3(w):  # a 3-d and a 4-d tensor of bf16 and q6_K
    w.add_tensor("c", raw(2 * 3 * 4 * 2, 4).reshape(4, 3, 2, 2), raw_dtype=Q.BF16)  # ne {1, 2, 3, 4}
    w.add_tensor("d", raw(3 * 210, 5).reshape(3, 1, 210), raw_dtype=Q.Q6_K)           # ne {256, 1, 3}


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    for i, f in enumerate([seed0, seed1, seed2, seed3]):
        write(str(i), f)
