#!/usr/bin/env python3
"""Writes a tiny llama-architecture model with random weights as GGUF (python3-gguf).

Usage: tiny_llama.py OUT.gguf [SEED]

Two layers, 64-wide embeddings, grouped-query attention (4 query heads, 2 key/value heads),
a SentencePiece vocabulary of the special tokens, the 256 byte tokens and a few pieces: small
enough for the simulator, and every part of a llama forward pass (embedding lookup, RMS norm,
RoPE, attention with a KV cache, SwiGLU, the output projection) is there. The weights are
scaled so that the logits spread widely: greedy decoding then has clear winners, and the HIP
and CPU backends must agree on every token.
"""
import sys

import numpy as np
import gguf

out = sys.argv[1]
seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1234
rng = np.random.default_rng(seed)

n_embd, n_ff, n_layer, n_head, n_head_kv, n_ctx = 64, 128, 2, 4, 2, 256
head_dim = n_embd // n_head

# Vocabulary: <unk> <s> </s>, the byte tokens SentencePiece falls back to, then pieces.
tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
pieces = ["\u2581"] + [f"\u2581{c}" for c in "abcdefghijklmnopqrstuvwxyz"] + list("abcdefghijklmnopqrstuvwxyz")
tokens += pieces
types = [gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL]
types += [gguf.TokenType.BYTE] * 256 + [gguf.TokenType.NORMAL] * len(pieces)
scores = [0.0] * 259 + [-float(i) for i in range(len(pieces))]
n_vocab = len(tokens)


def weight(rows, cols, scale=1.0):
    """A (rows, cols) matrix (GGUF stores it as ne = [cols, rows]) of N(0, scale/sqrt(cols))."""
    return (rng.standard_normal((rows, cols)) * scale / np.sqrt(cols)).astype(np.float32)


w = gguf.GGUFWriter(out, "llama")
w.add_name("rocjitsu-tiny-llama")
w.add_context_length(n_ctx)
w.add_embedding_length(n_embd)
w.add_block_count(n_layer)
w.add_feed_forward_length(n_ff)
w.add_head_count(n_head)
w.add_head_count_kv(n_head_kv)
w.add_rope_dimension_count(head_dim)
w.add_layer_norm_rms_eps(1e-5)
w.add_file_type(gguf.LlamaFileType.ALL_F32)
w.add_tokenizer_model("llama")
w.add_token_list(tokens)
w.add_token_scores(scores)
w.add_token_types(types)
w.add_bos_token_id(1)
w.add_eos_token_id(2)
w.add_unk_token_id(0)
w.add_add_bos_token(True)
w.add_add_eos_token(False)

w.add_tensor("token_embd.weight", weight(n_vocab, n_embd, 4.0))
for i in range(n_layer):
    w.add_tensor(f"blk.{i}.attn_norm.weight", (1.0 + 0.1 * rng.standard_normal(n_embd)).astype(np.float32))
    w.add_tensor(f"blk.{i}.attn_q.weight", weight(n_embd, n_embd, 2.0))
    w.add_tensor(f"blk.{i}.attn_k.weight", weight(n_head_kv * head_dim, n_embd, 2.0))
    w.add_tensor(f"blk.{i}.attn_v.weight", weight(n_head_kv * head_dim, n_embd))
    w.add_tensor(f"blk.{i}.attn_output.weight", weight(n_embd, n_embd))
    w.add_tensor(f"blk.{i}.ffn_norm.weight", (1.0 + 0.1 * rng.standard_normal(n_embd)).astype(np.float32))
    w.add_tensor(f"blk.{i}.ffn_gate.weight", weight(n_ff, n_embd))
    w.add_tensor(f"blk.{i}.ffn_up.weight", weight(n_ff, n_embd))
    w.add_tensor(f"blk.{i}.ffn_down.weight", weight(n_embd, n_ff))
w.add_tensor("output_norm.weight", np.ones(n_embd, dtype=np.float32))
w.add_tensor("output.weight", weight(n_vocab, n_embd, 8.0))

w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
print(f"wrote {out}: {n_vocab} tokens, {n_layer} layers, {n_embd} wide")
