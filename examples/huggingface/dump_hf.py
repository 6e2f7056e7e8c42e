#!/usr/bin/env python3
"""Runs transformers' own positional encoders and writes one dump per case for `pecheck validate
--dump`, with no convention stated: pecheck must read the convention from the data. RoPE for
every rope_type it ships, on generated queries; BLOOM's ALiBi; the sinusoid tables of Marian, XLM
and M2M100; T5's relative bias (encoder and decoder).

    python3 -m venv --system-site-packages venv && venv/bin/pip install transformers==4.49.0
    venv/bin/python examples/huggingface/dump_hf.py OUT
    build/pecheck validate --dump OUT --json r.json

transformers 4.49.0 is the newest that imports on Debian 12's torch 1.13. The cases are the
ones a user would meet: LlamaRotaryEmbedding + apply_rotary_pos_emb under the default rule at
two bases, linear, dynamic, YaRN and Llama 3 scaling, in f32 and bf16; GPT-NeoX's partial
rotary; Phi-3's LongRoPE with both factor lists (stated in the manifest: they cannot be
fitted); BLOOM's build_alibi_tensor at 12 and 16 heads. Each dump's expected reading is in
expected.json beside them (tests/huggingface.sh).
"""
import json
import math
import os
import sys

import numpy as np
import torch
from transformers.models.bloom.modeling_bloom import build_alibi_tensor
from transformers.models.gpt_neox.configuration_gpt_neox import GPTNeoXConfig
from transformers.models.gpt_neox.modeling_gpt_neox import GPTNeoXRotaryEmbedding
from transformers.models.gpt_neox.modeling_gpt_neox import apply_rotary_pos_emb as neox_apply
from transformers.models.llama.configuration_llama import LlamaConfig
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb
from transformers.models.m2m_100.modeling_m2m_100 import M2M100SinusoidalPositionalEmbedding
from transformers.models.phi3.configuration_phi3 import Phi3Config
from transformers.models.phi3.modeling_phi3 import Phi3RotaryEmbedding
from transformers.models.phi3.modeling_phi3 import apply_rotary_pos_emb as phi3_apply
from transformers.models.marian.modeling_marian import MarianSinusoidalPositionalEmbedding
from transformers.models.t5.configuration_t5 import T5Config
from transformers.models.t5.modeling_t5 import T5Attention
from transformers.models.xlm.modeling_xlm import create_sinusoidal_embeddings

HEADS, HEAD_DIM = 2, 128
# Every position below 64, then sparser out to 131071: what the frequency fit and the octave
# profile need. Dynamic NTK reads max(position_ids) + 1 as its length.
POSITIONS = sorted(set(range(64)) | set(range(64, 8192, 61)) | set(range(8192, 131072, 4099)) | {131071})


def dump(out, name, encoder, dtype, x, y, expected, positions=POSITIONS, convention=None):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    to_np = (lambda t: t.view(torch.int16).numpy().view(np.uint16)) if dtype == "bf16" else (lambda t: t.numpy())
    np.save(os.path.join(d, "x.npy"), to_np(x))
    np.save(os.path.join(d, "y.npy"), to_np(y))
    np.save(os.path.join(d, "positions.npy"), np.array(positions, dtype=np.int64))
    manifest = {"encoder": encoder, "family": "rope", "dtype": dtype, "axes": "bhnd",
                "arrays": {"x": "x.npy", "y": "y.npy", "positions": "positions.npy"}}
    if convention is not None:
        manifest["convention"] = convention
    with open(os.path.join(d, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
    print(f"wrote {d}: {encoder}")
    return {name: expected}


def queries(dtype, tokens=len(POSITIONS)):
    g = torch.Generator().manual_seed(11)
    x = torch.rand(1, HEADS, tokens, HEAD_DIM, generator=g) * 2 - 1
    return x.to(torch.bfloat16 if dtype == "bf16" else torch.float32)


def llama(out, name, rope_theta, rope_scaling, dtype, expected):
    config = LlamaConfig(hidden_size=HEADS * HEAD_DIM, num_attention_heads=HEADS, rope_theta=rope_theta,
                         rope_scaling=rope_scaling, max_position_embeddings=8192)
    rope = LlamaRotaryEmbedding(config=config)
    x = queries(dtype)
    position_ids = torch.tensor([POSITIONS])
    cos, sin = rope(x, position_ids)
    y, _ = apply_rotary_pos_emb(x, x, cos, sin)
    rule = (rope_scaling or {}).get("rope_type", "default")
    return dump(out, name, f"HF LlamaRotaryEmbedding {rule} base {rope_theta:g} ({dtype})", dtype, x, y, expected)


def phi3_longrope(out, name, positions, expected):
    """Phi-3's LongRoPE (Phi3RotaryEmbedding, 128k context over 4k): per-pair factors cannot be
    fitted, so the manifest states them as `pecheck manifest --from-hf-config` writes them from
    the config; pecheck must tell which list the call used (the long one past 4096) and fit the
    base. The lists are shaped like Phi-3-mini-128k's (short near 1, long growing to ~50)."""
    pairs = HEAD_DIM // 2
    short = [round(1.0 + 0.02 * (i % 7) + 0.1 * i / pairs, 4) for i in range(pairs)]
    long = [round(1.0 + 49.0 * (i / (pairs - 1)) ** 2.5 + 0.03 * (i % 3), 4) for i in range(pairs)]
    rope_scaling = {"type": "longrope", "short_factor": short, "long_factor": long}
    config = Phi3Config(hidden_size=HEADS * HEAD_DIM, num_attention_heads=HEADS, num_key_value_heads=HEADS,
                        rope_theta=10000.0, max_position_embeddings=131072, original_max_position_embeddings=4096,
                        rope_scaling=rope_scaling)
    rope = Phi3RotaryEmbedding(config=config)
    x = queries("f32", len(positions))
    cos, sin = rope(x, torch.tensor([positions]))
    y, _ = phi3_apply(x, x, cos, sin)
    convention = {"rope_theta": 10000.0, "head_dim": HEAD_DIM,
                  "rope_scaling": dict(rope_scaling, original_max_position_embeddings=4096, factor=32.0)}
    return dump(out, name, "HF Phi3RotaryEmbedding longrope (f32)", "f32", x, y, expected, positions, convention)


def neox(out, dtype):
    config = GPTNeoXConfig(hidden_size=HEADS * HEAD_DIM, num_attention_heads=HEADS, rotary_pct=0.25,
                           max_position_embeddings=8192)
    rope = GPTNeoXRotaryEmbedding(config=config)
    x = queries(dtype)
    cos, sin = rope(x, torch.tensor([POSITIONS]))
    rot = cos.shape[-1]
    y_rot, _ = neox_apply(x[..., :rot], x[..., :rot], cos, sin)
    y = torch.cat((y_rot, x[..., rot:]), dim=-1)
    return dump(out, f"neox-partial-{dtype}", f"HF GPT-NeoX rotary_pct 0.25 ({dtype})", dtype, x, y,
                {"rule": "none", "base": 10000, "rotary_dim": 32})


def bloom_alibi(out, heads, dtype):
    """BLOOM's build_alibi_tensor: (batch x heads, 1, n) = slope_h * position_j, positions from the
    attention mask (0 .. n-1 for a mask of ones). 12 heads is not a power of two: the paper's
    interleaved rule applies."""
    n = 512
    t = torch.bfloat16 if dtype == "bf16" else torch.float32
    alibi = build_alibi_tensor(torch.ones(1, n, dtype=torch.long), heads, t)
    d = os.path.join(out, f"bloom-alibi-{heads}-{dtype}")
    os.makedirs(d, exist_ok=True)
    a = alibi.view(torch.int16).numpy().view(np.uint16) if dtype == "bf16" else alibi.numpy()
    np.save(os.path.join(d, "key_bias.npy"), a)
    np.save(os.path.join(d, "positions.npy"), np.arange(n, dtype=np.int64))
    manifest = {"encoder": f"HF BLOOM build_alibi_tensor, {heads} heads ({dtype})", "family": "alibi", "dtype": dtype,
                "arrays": {"key_bias": "key_bias.npy", "positions": "positions.npy"}}
    with open(os.path.join(d, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
    print(f"wrote {d}: {manifest['encoder']}")
    return {os.path.basename(d): {"family": "alibi", "heads": heads}}


def sinusoid(out, name, encoder, table, expected):
    """A sinusoid table (positions 0 .. n-1, d_model) as the model holds it, in f32."""
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    np.save(os.path.join(d, "table.npy"), table.detach().numpy().astype(np.float32))
    manifest = {"encoder": encoder, "family": "sinusoidal", "dtype": "f32", "arrays": {"table": "table.npy"}}
    with open(os.path.join(d, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
    print(f"wrote {d}: {encoder}")
    return {name: dict(expected, family="sinusoidal")}


def sinusoids(out):
    n, dim = 2048, 128
    marian = MarianSinusoidalPositionalEmbedding(n, dim).weight
    xlm = torch.empty(n, dim)
    create_sinusoidal_embeddings(n, dim, xlm)
    m2m = M2M100SinusoidalPositionalEmbedding.get_embedding(n, dim, padding_idx=1)
    return (sinusoid(out, "marian-sinusoid", "HF MarianSinusoidalPositionalEmbedding", marian,
                     {"convention": "sinusoid concatenated, Vaswani frequencies, d_model 128, base 10000", "agrees": True})
            | sinusoid(out, "xlm-sinusoid", "HF XLM create_sinusoidal_embeddings", xlm,
                       {"convention": "sinusoid interleaved, Vaswani frequencies, d_model 128, base 10000", "agrees": True})
            | sinusoid(out, "m2m100-sinusoid", "HF M2M100SinusoidalPositionalEmbedding", m2m,
                       {"convention": "sinusoid concatenated, fairseq frequencies, d_model 128, base 10000",
                        "padding": "padding row at position 1", "agrees": False}))


def t5(out, decoder):
    """T5Attention.compute_bias: the encoder's bidirectional buckets or the decoder's causal ones,
    32 buckets, max_distance 128, at positions 0..299 (past max_distance, where settings differ)."""
    config = T5Config(d_model=64, d_kv=16, num_heads=4, relative_attention_num_buckets=32,
                      relative_attention_max_distance=128, is_decoder=decoder)
    att = T5Attention(config, has_relative_attention_bias=True)
    torch.manual_seed(5)
    torch.nn.init.normal_(att.relative_attention_bias.weight)
    n = 300
    with torch.no_grad():
        bias = att.compute_bias(n, n)
    name = f"t5-{'decoder' if decoder else 'encoder'}"
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    np.save(os.path.join(d, "table.npy"), att.relative_attention_bias.weight.detach().numpy())
    np.save(os.path.join(d, "bias.npy"), bias.numpy())
    np.save(os.path.join(d, "positions.npy"), np.arange(n, dtype=np.int64))
    manifest = {"encoder": f"HF T5Attention.compute_bias ({'decoder' if decoder else 'encoder'})", "family": "t5",
                "dtype": "f32", "arrays": {"table": "table.npy", "bias": "bias.npy", "positions": "positions.npy"}}
    with open(os.path.join(d, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
    print(f"wrote {d}: {manifest['encoder']}")
    kind = "causal" if decoder else "bidirectional"
    return {name: {"family": "t5", "convention": f"T5 {kind}, 32 buckets, max_distance 128"}}


def main(out):
    expected = {}
    llama3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
              "original_max_position_embeddings": 8192}
    for dtype in ("f32", "bf16"):
        expected |= llama(out, f"default-1e4-{dtype}", 10000.0, None, dtype, {"rule": "none", "base": 10000})
        expected |= llama(out, f"default-5e5-{dtype}", 500000.0, None, dtype, {"rule": "none", "base": 500000})
        expected |= llama(out, f"llama3-{dtype}", 500000.0, llama3, dtype,
                          {"rule": "llama3", "base": 500000, "factor": 8, "low_freq_factor": 1, "high_freq_factor": 4})
        expected |= neox(out, dtype)
    expected |= llama(out, "linear-x4-f32", 10000.0, {"rope_type": "linear", "factor": 4.0}, "f32",
                      {"rule": "linear", "base": 10000, "factor": 4})
    # Dynamic NTK at length 131072 over L0 8192, factor 4: plain RoPE at base 1e4 (4 * 16 - 3)^(128/126).
    expected |= llama(out, "dynamic-x4-f32", 10000.0, {"rope_type": "dynamic", "factor": 4.0}, "f32",
                      {"rule": "none", "base": 10000 * 61 ** (128 / 126)})
    # transformers 4.49 takes YaRN's original context from max_position_embeddings (8192 here).
    expected |= llama(out, "yarn-x4-f32", 10000.0, {"rope_type": "yarn", "factor": 4.0}, "f32",
                      {"rule": "yarn", "base": 10000, "factor": 4})
    # LongRoPE: one forward call reaching 131071 (> 4096: the long factors), one within 4096 (short).
    longrope = {"rule": "longrope", "base": 10000, "factor": 32,
                "attention_factor": (1 + math.log(32) / math.log(4096)) ** 0.5}
    expected |= phi3_longrope(out, "longrope-long-f32", POSITIONS, dict(longrope, seq_len=4097))
    expected |= phi3_longrope(out, "longrope-short-f32", [p for p in POSITIONS if p < 4096] + [4095],
                              dict(longrope, seq_len=4096))
    for heads in (12, 16):
        expected |= bloom_alibi(out, heads, "bf16")
    expected |= bloom_alibi(out, 12, "f32")
    expected |= sinusoids(out)
    expected |= t5(out, False) | t5(out, True)
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(expected, f, indent=2)


if __name__ == "__main__":
    torch.manual_seed(0)
    main(sys.argv[1])
