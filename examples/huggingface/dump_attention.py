"""Dumps attention as PyTorch and transformers compute it, for `pecheck validate --dump`
(docs/dumps.md, family "attention"): torch's scaled_dot_product_attention (prefill, grouped-query
with enable_gqa, a stated scale, a long sequence past its CPU kernel's key blocks), transformers'
sdpa_attention_forward (a grouped-query decode step, which it packs; a sliding window given as a
mask) and eager_attention_forward (softmax in fp32, P cast to the dtype before P.V). One more is
PyTorch's documented pitfall: is_causal=True with fewer queries than keys aligns the mask
top-left, so a chunk of queries against a cache sees the cache's first keys, not its own. And T5's
relative bias (T5Attention.compute_bias) handed to SDPA as its float mask, and Shaw's relative keys
as Wav2Vec2-BERT's relative_key attention computes them.

Writes DIR/<name>/ per dump and DIR/expected.json: name -> what pecheck should read (verdict, the
contract met, a phrase of the hint). Usage: python dump_attention.py DIR
"""
import json
import math
import os
import sys
from types import SimpleNamespace

import numpy as np
import torch
import torch.nn.functional as F
import transformers
from dump_io import write
from transformers.integrations.sdpa_attention import sdpa_attention_forward
from transformers.models.llama.modeling_llama import eager_attention_forward

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}


def inputs(seed, heads, kv_heads, queries, keys, dim, dtype):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(1, heads, queries, dim, generator=g).to(DTYPES[dtype])
    k = torch.randn(1, kv_heads, keys, dim, generator=g).to(DTYPES[dtype])
    v = torch.randn(1, kv_heads, keys, dim, generator=g).to(DTYPES[dtype])
    return q, k, v


def dump(out, name, encoder, dtype, q, k, v, o, convention, expected, want, axes="bhnd", extra=None):
    """o in SDPA's layout (b, h, n, d) unless axes says otherwise (transformers' (b, n, h, d));
    extra: more arrays (T5's or Shaw's table)."""
    keys = k.shape[2]
    write(out, name, {"encoder": encoder, "family": "attention", "dtype": dtype, "axes": "bhnd",
                      "convention": convention},
          {"q": q, "k": k, "v": v, "out": o if axes == "bhnd" else o.transpose(1, 2),
           "positions": np.arange(keys, dtype=np.int64), **(extra or {})})
    expected[name] = want


def torch_sdpa(out, expected):
    with torch.no_grad():
        for dtype in ("f32", "bf16", "f16"):
            q, k, v = inputs(1, 4, 4, 48, 48, 64, dtype)
            dump(out, f"sdpa-causal-{dtype}", f"torch {torch.__version__} scaled_dot_product_attention, causal",
                 dtype, q, k, v, F.scaled_dot_product_attention(q, k, v, is_causal=True), {"causal": True},
                 expected, {"verdict": "pass"})
        q, k, v = inputs(2, 8, 2, 40, 40, 64, "bf16")
        dump(out, "sdpa-gqa-bf16", "torch scaled_dot_product_attention, enable_gqa, causal", "bf16", q, k, v,
             F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True), {"causal": True}, expected,
             {"verdict": "pass"})
        q, k, v = inputs(3, 4, 4, 32, 32, 64, "f32")
        dump(out, "sdpa-scale-f32", "torch scaled_dot_product_attention, scale 1/64 (muP)", "f32", q, k, v,
             F.scaled_dot_product_attention(q, k, v, scale=1 / 64), {"scale": 1 / 64}, expected, {"verdict": "pass"})
        q, k, v = inputs(4, 2, 2, 300, 300, 64, "bf16")
        dump(out, "sdpa-long-bf16", "torch scaled_dot_product_attention, causal, 300 tokens", "bf16", q, k, v,
             F.scaled_dot_product_attention(q, k, v, is_causal=True), {"causal": True}, expected,
             {"verdict": "pass"})
        # The pitfall: a chunk of 4 queries against 48 cached keys with is_causal=True.
        q, k, v = inputs(5, 4, 4, 4, 48, 64, "f32")
        dump(out, "sdpa-chunk-is-causal-f32", "torch scaled_dot_product_attention, is_causal with a chunk", "f32",
             q, k, v, F.scaled_dot_product_attention(q, k, v, is_causal=True), {"causal": True}, expected,
             {"verdict": "fail", "hint": "aligned top-left"})


def hf(out, expected):
    module = SimpleNamespace(num_key_value_groups=4, is_causal=True, training=False)
    version = f"transformers {transformers.__version__}"
    with torch.no_grad():
        for dtype in ("f32", "bf16"):
            # A decode step: one query of 8 heads over 49 cached keys of 2 K/V heads, no mask.
            q, k, v = inputs(6, 8, 2, 1, 49, 64, dtype)
            o, _ = sdpa_attention_forward(module, q, k, v, None, scaling=1 / 8)
            dump(out, f"hf-sdpa-decode-gqa-{dtype}", f"{version} sdpa_attention_forward, GQA decode step", dtype,
                 q, k, v, o, {"causal": True}, expected, {"verdict": "pass"}, axes="bnhd")
        # Mistral's sliding window of 16 as a boolean mask (True: attend).
        q, k, v = inputs(7, 8, 2, 40, 40, 64, "bf16")
        i, j = torch.arange(40)[:, None], torch.arange(40)[None, :]
        mask = ((j <= i) & (j > i - 16))[None, None]
        o, _ = sdpa_attention_forward(module, q, k, v, mask, scaling=1 / 8)
        dump(out, "hf-sdpa-window-bf16", f"{version} sdpa_attention_forward, sliding window 16 as a mask", "bf16",
             q, k, v, o, {"causal": True, "window": 16}, expected, {"verdict": "pass"}, axes="bnhd")
        # Eager: softmax in fp32, then P cast to the dtype before P.V.
        for dtype in ("f32", "bf16"):
            q, k, v = inputs(8, 8, 2, 40, 40, 64, dtype)
            additive = torch.full((40, 40), float("-inf")).triu(1)[None, None].to(DTYPES[dtype])
            o, _ = eager_attention_forward(module, q, k, v, additive, scaling=1 / math.sqrt(64))
            dump(out, f"hf-eager-gqa-{dtype}", f"{version} eager_attention_forward, GQA, causal mask", dtype,
                 q, k, v, o, {"causal": True}, expected, {"verdict": "pass"}, axes="bnhd")


def hf_t5(out, expected):
    """T5's relative bias inside attention: T5Attention's compute_bias (its relative_attention_bias
    table, 32 buckets, max_distance 128, bidirectional as in the encoder) handed to SDPA as the
    float mask, scale 1 (T5 scales nothing). 40 tokens: their distances meet the bucket edges at 16
    and 32, where a log in fp32 may take either bucket (pecheck accepts both there)."""
    from transformers import T5Config
    from transformers.models.t5.modeling_t5 import T5Attention
    config = T5Config(d_model=256, d_kv=64, num_heads=4, relative_attention_num_buckets=32,
                      relative_attention_max_distance=128)
    layer = T5Attention(config, has_relative_attention_bias=True)
    t5 = {"num_buckets": 32, "max_distance": 128, "bidirectional": True}
    with torch.no_grad():
        weight = torch.randn(32, 4, generator=torch.Generator().manual_seed(9))
        for dtype in ("f32", "bf16"):
            table = weight.to(DTYPES[dtype])
            layer.relative_attention_bias.weight.copy_(table.float())  # the table's values in the dtype
            bias = layer.compute_bias(40, 40).to(DTYPES[dtype])  # (1, heads, 40, 40)
            q, k, v = inputs(10, 4, 4, 40, 40, 64, dtype)
            o = F.scaled_dot_product_attention(q, k, v, attn_mask=bias, scale=1.0)
            dump(out, f"hf-t5-bias-sdpa-{dtype}", f"transformers {transformers.__version__} T5Attention.compute_bias "
                 f"+ scaled_dot_product_attention", dtype, q, k, v, o, {"scale": 1.0, "pe": "t5", "t5": t5},
                 expected, {"verdict": "pass"}, extra={"table": table})


def hf_shaw(out, expected):
    """Shaw's relative keys inside attention: Wav2Vec2-BERT's relative_key self-attention (its
    distance_embedding table read at key minus query, clipped; q . r added to the scaled scores,
    scaled too) through the module's own eager_attention_forward. Clipped alike left and right (8),
    which is Shaw's K; the model's default clips 64 left and 8 right, which Shaw's one K cannot
    state. 24 tokens, so the clip is reached both ways."""
    from transformers import Wav2Vec2BertConfig
    from transformers.models.wav2vec2_bert import modeling_wav2vec2_bert as w2v
    config = Wav2Vec2BertConfig(hidden_size=256, num_attention_heads=4, position_embeddings_type="relative_key",
                                left_max_position_embeddings=8, right_max_position_embeddings=8)
    layer = w2v.Wav2Vec2BertSelfAttention(config).eval()
    with torch.no_grad():
        weight = torch.randn(17, 64, generator=torch.Generator().manual_seed(11))
        for dtype in ("f32", "bf16"):
            table = weight.to(DTYPES[dtype])
            layer.distance_embedding.weight.copy_(table.float())  # the table's values in the dtype
            q, k, v = inputs(12, 4, 4, 24, 24, 64, dtype)
            query, bias = w2v._apply_relative_key_position_encoding(layer, q, k)
            o, _ = w2v.eager_attention_forward(layer, query, k, v, None, scaling=layer.scaling, position_bias=bias)
            dump(out, f"hf-wav2vec2-bert-relative-key-{dtype}", f"transformers {transformers.__version__} "
                 "Wav2Vec2BertSelfAttention relative_key (left = right = 8) + eager_attention_forward", dtype,
                 q, k, v, o, {"pe": "shaw", "shaw": {"max_distance": 8}}, expected, {"verdict": "pass"},
                 axes="bnhd", extra={"table": table})


def main(out):
    os.makedirs(out, exist_ok=True)
    expected = {}
    torch_sdpa(out, expected)
    hf(out, expected)
    hf_t5(out, expected)
    hf_shaw(out, expected)
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump({"torch": torch.__version__, "transformers": transformers.__version__, "dumps": expected}, f,
                  indent=2)


if __name__ == "__main__":
    main(sys.argv[1])
