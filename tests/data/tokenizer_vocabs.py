#!/usr/bin/env python3
"""tokenizer_vocabs.py: the small vocabularies of test_tokenizer_bpe.c and test_tokenizer_spm.c as
vocabulary-only GGUF files (gguf-py), so that llama.cpp's own tokenizer can check the hand-derived
ids of those tests:

    python3 tests/data/tokenizer_vocabs.py OUTDIR
    llama-tokenize -m OUTDIR/spm_prefix.gguf -p "abc" --ids --no-bos     # [259, 267]
    llama-tokenize -m OUTDIR/bpe_small.gguf -p " ab" --ids --no-bos      # [7, 4]

(llama-tokenize loads vocab_only; -p TEXT adds BOS unless --no-bos and parses special tokens
unless --no-parse-special.) Every case of both tests was checked so against llama.cpp commit
0c1e570 (llama-cpp-python 0.3.36); the empty text is the one case llama-tokenize cannot take.
The tables here must stay equal to the tests' tables.
"""
import os
import sys

import gguf

U = "\u2581"
SPM_PIECES = [(U, -1.0), ("a", -2.0), ("b", -3.0), ("c", -4.0), ("ab", -1.0), ("bc", -0.5), (U + "a", -2.0),
              (U + "ab", -1.5), ("abc", -0.1), (U + "b", -3.0), ("\u00e9", -2.0), ("x", -9.0), ("y", -9.0),
              ("xy", -1.0), ("yx", -1.0)]
BPE_TOKENS = ["<|end|>", "a", "b", "c", "ab", "bc", "abc", "\u0120", "\u0120a", "\u0120ab", "1", "\u010a", "!"]
BPE_TYPES = [3] + [1] * 12
BPE_MERGES = ["a b", "b c", "\u0120 a", "ab c", "\u0120a b"]


def writer(path):
    w = gguf.GGUFWriter(path, "llama")  # the hyperparameters llama.cpp reads before the vocabulary
    w.add_context_length(64)
    w.add_embedding_length(8)
    w.add_block_count(1)
    w.add_feed_forward_length(16)
    w.add_head_count(2)
    w.add_head_count_kv(2)
    w.add_layer_norm_rms_eps(1e-5)
    return w


def close(w):
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    for name, prefix in (("spm_prefix.gguf", True), ("spm_noprefix.gguf", False)):
        w = writer(os.path.join(out, name))
        toks = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % b for b in range(256)] + [p for p, _ in SPM_PIECES]
        w.add_tokenizer_model("llama")
        w.add_token_list(toks)
        w.add_token_scores([0.0] * 259 + [s for _, s in SPM_PIECES])
        w.add_token_types([2, 3, 3] + [6] * 256 + [1] * len(SPM_PIECES))
        w.add_bos_token_id(1)
        w.add_eos_token_id(2)
        w.add_unk_token_id(0)
        w.add_add_space_prefix(prefix)
        close(w)
    w = writer(os.path.join(out, "bpe_small.gguf"))
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-2")
    w.add_token_list(BPE_TOKENS)
    w.add_token_types(BPE_TYPES)
    w.add_token_merges(BPE_MERGES)
    close(w)


if __name__ == "__main__":
    main()
