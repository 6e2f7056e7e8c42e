#!/usr/bin/env python3
"""Runs transformers' own positional encoders and writes one dump per case for `pecheck validate
--dump`, with no convention stated: pecheck must read the convention from the data. RoPE for
every rope_type this transformers ships (its ROPE_INIT_FUNCTIONS, plus default), on generated
queries; BLOOM's ALiBi; the sinusoid tables of Marian, XLM and M2M100; T5's relative bias;
Qwen2-VL's M-RoPE (and Qwen3-VL's, on 5.x) over a prompt with an image.

    py=$(scripts/py-venv)      # transformers 5 (torch 2); or scripts/hf-venv: 4.49.0 (torch 1.13)
    "$py" examples/huggingface/dump_hf.py OUT
    build/pecheck validate --dump OUT --json r.json

Runs on transformers 4.49.0 (the newest that imports on Debian 12's torch 1.13) and 5.x. The
cases are the ones a user would meet: LlamaRotaryEmbedding + apply_rotary_pos_emb under each
rule in f32 (and bf16 for the default and Llama 3), YaRN with its defaults, with an explicit
attention factor and with DeepSeek-V3's mscale, GPT-NeoX's partial rotary, Phi-3's LongRoPE with
both factor lists (stated in the manifest: they cannot be fitted); on 5.x also YaRN with truncate
false (gpt-oss) and the per-layer-type configs of Gemma 3 (linear) and Gemma 4 (proportional),
one dump per layer type. The rules transformers 5 added also have a twin NAME-stated whose
manifest states the config's RoPE fields. Each dump's expected reading is in expected.json beside
them (tests/huggingface.sh); the script stops when this transformers has a rope_type with no case.
"""
import json
import math
import sys

import numpy as np
import torch
import transformers
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.models.bloom.modeling_bloom import build_alibi_tensor
from transformers.models.m2m_100.modeling_m2m_100 import M2M100SinusoidalPositionalEmbedding
from transformers.models.marian.modeling_marian import MarianSinusoidalPositionalEmbedding
from transformers.models.t5.configuration_t5 import T5Config
from transformers.models.t5.modeling_t5 import T5Attention
from transformers.models.xlm.modeling_xlm import create_sinusoidal_embeddings

import dump_io
import rope_modules as hf
from rope_modules import V5

# Every position below 64, then sparser out to 131071: what the frequency fit and the octave
# profile need. Dynamic NTK reads max(position_ids) + 1 as its length.
POSITIONS = sorted(set(range(64)) | set(range(64, 8192, 61)) | set(range(8192, 131072, 4099)) | {131071})


def rope_dump(out, name, rope_type, encoder, dtype, made, expected, positions=POSITIONS, convention=None,
              stated=None):
    """made: (x, y, attention factor[, axes]) from rope_modules. expected: what pecheck must read.
    stated: a convention for a twin dump NAME-stated of the same data, for the rules pecheck reads
    only when a manifest states them."""
    x, y, attention, *axes = made
    dump_io.rope(out, name, f"HF {encoder} ({dtype})", dtype, x, y, positions, convention, *axes)
    cases = {name: dict(expected, rope_type=rope_type, magnitude=attention)}
    if stated is not None:
        dump_io.rope(out, f"{name}-stated", f"HF {encoder} ({dtype}), stated", dtype, x, y, positions, stated, *axes)
        cases[f"{name}-stated"] = cases[name]
    return cases


def llama(out, name, params, rope_theta, dtype, expected, stated=False, **kw):
    rope_type = (params or {}).get("rope_type", "default")
    made = hf.llama(params, rope_theta, dtype, POSITIONS, **kw)
    return rope_dump(out, name, rope_type, f"LlamaRotaryEmbedding {rope_type} base {rope_theta:g}", dtype, made,
                     expected, stated=hf.statement(params, rope_theta) if stated else None)


def yarns(out):
    """YaRN three ways: HF's defaults; an explicit attention factor (both versions honour it);
    DeepSeek-V3's mscale = mscale_all_dim = 1 (attention factor 1 on 5.x, where their ratio is
    the factor; 4.49 ignores both keys and uses 0.1 ln 40 + 1). L0: 4.49 takes YaRN's from
    max_position_embeddings whatever rope_scaling says, 5.x from rope_parameters (filled from
    max_position_embeddings when absent); each case sets the two equal, so both compute the same."""
    want = {"rule": "yarn", "base": 10000, "factor": 4}
    cases = (llama(out, "yarn-x4-f32", {"rope_type": "yarn", "factor": 4.0}, 10000.0, "f32", want)
             | llama(out, "yarn-attention-factor-f32", {"rope_type": "yarn", "factor": 4.0, "attention_factor": 1.2,
                                                        "original_max_position_embeddings": 8192},
                     10000.0, "f32", want, stated=True)
             | llama(out, "yarn-mscale-f32", {"rope_type": "yarn", "factor": 40.0, "mscale": 1.0, "mscale_all_dim": 1.0,
                                              "original_max_position_embeddings": 4096},
                     10000.0, "f32", dict(want, factor=40), stated=V5, max_position_embeddings=4096))
    if V5:  # gpt-oss's: the correction range not rounded to whole pairs (4.49 has no truncate)
        gpt_oss = {"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0, "truncate": False,
                   "original_max_position_embeddings": 4096}
        cases |= llama(out, "yarn-truncate-false-f32", gpt_oss, 150000.0, "f32",
                       {"rule": "yarn", "base": 150000, "factor": 32, "truncate": False}, stated=True,
                       max_position_embeddings=131072)
    return cases


def longropes(out):
    """Phi-3's LongRoPE (128k over 4k), factor lists shaped like Phi-3-mini-128k's (short near 1,
    long growing to ~50). The manifest states them (pecheck must tell which list the call used: the
    long one past 4096), with the base, as `pecheck manifest --from-hf-config` writes them."""
    pairs = hf.HEAD_DIM // 2
    short = [round(1.0 + 0.02 * (i % 7) + 0.1 * i / pairs, 4) for i in range(pairs)]
    long = [round(1.0 + 49.0 * (i / (pairs - 1)) ** 2.5 + 0.03 * (i % 3), 4) for i in range(pairs)]
    config = hf.longrope_config(short, long)
    convention = hf.longrope_statement(config, short, long)
    want = {"rule": "longrope", "base": 10000, "factor": 32,
            "attention_factor": (1 + math.log(32) / math.log(4096)) ** 0.5}
    within = [p for p in POSITIONS if p < 4096] + [4095]
    return (rope_dump(out, "longrope-long-f32", "longrope", "Phi3RotaryEmbedding longrope", "f32",
                      hf.phi3_longrope(config, POSITIONS), dict(want, seq_len=4097), POSITIONS, convention)
            | rope_dump(out, "longrope-short-f32", "longrope", "Phi3RotaryEmbedding longrope", "f32",
                        hf.phi3_longrope(config, within), dict(want, seq_len=4096), within, convention))


def layer_types(out):
    """transformers 5's configs keyed by layer type: one dump per layer type, and the full layers'
    stated as their config's rope_parameters with the layer type."""
    cases = {}
    for model, layer_type, rope_type, want in (
            ("gemma3", "sliding_attention", "default", {"rule": "none", "base": 10000}),
            ("gemma3", "full_attention", "linear", {"rule": "linear", "base": 1e6, "factor": 8}),
            ("gemma4", "sliding_attention", "default", {"rule": "none", "base": 10000}),
            # pecheck's proportional: the none rule on the first 16 of 64 pairs, the rest at frequency 0.
            ("gemma4", "full_attention", "proportional", {"rule": "none", "base": 1e6, "rotated_pairs": 16})):
        name = f"{model}-{layer_type.split('_')[0]}-f32"
        made, statement = hf.gemma_layer(model, layer_type, POSITIONS)
        cases |= rope_dump(out, name, rope_type, f"{model} rotary, {layer_type}", "f32", made, want,
                           stated=statement if layer_type == "full_attention" else None)
    return cases


def ropes(out):
    llama3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
              "original_max_position_embeddings": 8192}
    cases = {}
    for dtype in ("f32", "bf16"):
        cases |= llama(out, f"default-1e4-{dtype}", None, 10000.0, dtype, {"rule": "none", "base": 10000})
        cases |= llama(out, f"default-5e5-{dtype}", None, 500000.0, dtype, {"rule": "none", "base": 500000})
        cases |= llama(out, f"llama3-{dtype}", llama3, 500000.0, dtype,
                       {"rule": "llama3", "base": 500000, "factor": 8, "low_freq_factor": 1, "high_freq_factor": 4},
                       max_position_embeddings=131072)  # Llama 3.1's
        cases |= rope_dump(out, f"neox-partial-{dtype}", "default", "GPT-NeoX rotary_pct 0.25", dtype,
                           hf.neox(dtype, POSITIONS), {"rule": "none", "base": 10000, "rotary_dim": 32})
    cases |= llama(out, "linear-x4-f32", {"rope_type": "linear", "factor": 4.0}, 10000.0, "f32",
                   {"rule": "linear", "base": 10000, "factor": 4})
    # Dynamic NTK at length 131072 over L0 8192, factor 4: plain RoPE at base 1e4 (4 * 16 - 3)^(128/126).
    cases |= llama(out, "dynamic-x4-f32", {"rope_type": "dynamic", "factor": 4.0}, 10000.0, "f32",
                   {"rule": "none", "base": 10000 * 61 ** (128 / 126)})
    cases |= yarns(out) | longropes(out)
    if V5:
        cases |= layer_types(out)
    missing = ({"default"} | set(ROPE_INIT_FUNCTIONS)) - {want["rope_type"] for want in cases.values()}
    if missing:
        sys.exit(f"dump_hf.py: transformers {transformers.__version__} has rope_type {sorted(missing)} with no case")
    return cases


def bloom_alibi(out, heads, dtype):
    """BLOOM's build_alibi_tensor: (batch x heads, 1, n) = slope_h * position_j, positions from the
    attention mask (0 .. n-1 for a mask of ones). 12 heads is not a power of two: the paper's
    interleaved rule applies. An ALiBi dump states no convention: the slopes are read."""
    n = 512
    alibi = build_alibi_tensor(torch.ones(1, n, dtype=torch.long), heads,
                               torch.bfloat16 if dtype == "bf16" else torch.float32)
    name = f"bloom-alibi-{heads}-{dtype}"
    dump_io.write(out, name, {"encoder": f"HF BLOOM build_alibi_tensor, {heads} heads ({dtype})", "family": "alibi",
                              "dtype": dtype}, {"key_bias": alibi, "positions": np.arange(n, dtype=np.int64)})
    return {name: {"family": "alibi", "heads": heads}}


def sinusoid(out, name, encoder, table, expected):
    """A sinusoid table (positions 0 .. n-1, d_model) as the model holds it, in f32."""
    dump_io.write(out, name, {"encoder": encoder, "family": "sinusoidal", "dtype": "f32"},
                  {"table": table.detach().to(torch.float32)})
    return {name: dict(expected, family="sinusoidal")}


def sinusoids(out):
    n, dim = 2048, 128
    marian = MarianSinusoidalPositionalEmbedding(n, dim)
    # transformers 5 fills the table in the model's _init_weights (from create_weight), not when
    # the module is built; 4.49 fills it in the constructor.
    marian = marian.create_weight() if hasattr(marian, "create_weight") else marian.weight
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
    att = T5Attention(config, has_relative_attention_bias=True, layer_idx=0)
    torch.manual_seed(5)
    torch.nn.init.normal_(att.relative_attention_bias.weight)
    n = 300
    with torch.no_grad():
        bias = att.compute_bias(n, n)
    kind = "decoder" if decoder else "encoder"
    name = f"t5-{kind}"
    dump_io.write(out, name, {"encoder": f"HF T5Attention.compute_bias ({kind})", "family": "t5", "dtype": "f32"},
                  {"table": att.relative_attention_bias.weight, "bias": bias,
                   "positions": np.arange(n, dtype=np.int64)})
    return {name: {"family": "t5", "convention": f"T5 {'causal' if decoder else 'bidirectional'}, 32 buckets, "
                                                 "max_distance 128"}}


def qwen_vl_positions():
    """position_ids (3, 1, n) as Qwen2-VL's get_rope_index lays out a prompt: 64 text tokens, an
    image of 8 x 12 (merged) patches at s = 64, patch (i, j) at (s, s + i, s + j), then text again
    from s + 12 on, sparser out to 32767 (far enough for the fp32-angles story)."""
    text = list(range(64))
    image = [(64, 64 + i, 64 + j) for i in range(8) for j in range(12)]
    after = list(range(76, 32768, 97))
    axes = [text + [p[a] for p in image] + after for a in range(3)]
    return torch.tensor(axes, dtype=torch.int64).unsqueeze(1)


def mrope(out, model, dtype, expected):
    """Qwen2-VL's and (on transformers 5) Qwen3-VL's text rotary module on generated queries, head_dim
    128: 5.x composes the sections into cos and sin (recomposition_frequencies) and applies them with
    apply_rotary_pos_emb; 4.49 applies them with apply_multimodal_rotary_pos_emb."""
    qwen3 = model == "qwen3-vl"
    section, theta = ([24, 20, 20], 5e6) if qwen3 else ([16, 24, 24], 1e6)
    if qwen3:
        from transformers.models.qwen3_vl import modeling_qwen3_vl as m
        from transformers.models.qwen3_vl.configuration_qwen3_vl import Qwen3VLTextConfig as Config
        rotary = m.Qwen3VLTextRotaryEmbedding
    else:
        from transformers.models.qwen2_vl import modeling_qwen2_vl as m
        rotary = m.Qwen2VLRotaryEmbedding
        if V5:
            from transformers.models.qwen2_vl.configuration_qwen2_vl import Qwen2VLTextConfig as Config
        else:
            from transformers.models.qwen2_vl.configuration_qwen2_vl import Qwen2VLConfig as Config
    params = {"rope_type": "default", "rope_theta": theta, "mrope_section": section}
    if qwen3:
        params["mrope_interleaved"] = True
    config = (Config(hidden_size=1024, num_attention_heads=8, rope_parameters=params) if V5 else
              Config(hidden_size=1024, num_attention_heads=8, rope_theta=theta,
                     rope_scaling={"type": "mrope", "mrope_section": section}))
    positions = qwen_vl_positions()
    torch_dtype = torch.float32 if dtype == "f32" else torch.bfloat16
    x = torch.randn(1, 4, positions.shape[-1], 128).to(torch_dtype)
    with torch.no_grad():
        cos, sin = rotary(config)(x, positions)
        y = (m.apply_rotary_pos_emb(x, x, cos, sin)[0] if V5 else
             m.apply_multimodal_rotary_pos_emb(x, x, cos, sin, section)[0])
    name = f"{model}-{dtype}"
    module = type(rotary(config)).__name__
    dump_io.write(out, name, {"encoder": f"HF {module} ({dtype})", "family": "mrope", "dtype": dtype, "axes": "bhnd"},
                  {"x": x, "y": y, "positions": positions.numpy()})
    return {name: dict(expected, family="mrope")}


def mropes(out):
    cases = {}
    for dtype in ("f32", "bf16"):
        cases |= mrope(out, "qwen2-vl", dtype, {"convention": "sectioned [16, 24, 24]", "base": "base 1000000"})
        if V5:  # Qwen3-VL arrived in transformers 4.57
            cases |= mrope(out, "qwen3-vl", dtype, {"convention": "interleaved [24, 20, 20]", "base": "base 5000000"})
    return cases


def vision_rope(out, dtype):
    """Qwen2-VL's vision tower rotary (2-D RoPE, one RoPE over the head: rotate_half with the row's
    and the column's frequencies), head_dim 80, theta 10000, on a 16 x 24 grid of patches: 5.x's
    Qwen2VLVisionRotaryEmbedding takes (row, column) ids (n, 2) and composes cos and sin; 4.49's
    VisionRotaryEmbedding gives a frequency table its caller indexes by (row, column). In bf16 the
    grid's 23 positions turn the slow pairs too little for a base to be read: it is stated."""
    from transformers.models.qwen2_vl import modeling_qwen2_vl as m
    rows = torch.arange(16).repeat_interleave(24)
    cols = torch.arange(24).repeat(16)
    torch_dtype = torch.float32 if dtype == "f32" else torch.bfloat16
    x = torch.randn(rows.numel(), 2, 80).to(torch_dtype)  # (n, heads, head_dim), as the tower's q
    with torch.no_grad():
        if V5:
            from transformers.models.qwen2_vl.configuration_qwen2_vl import Qwen2VLVisionConfig
            config = Qwen2VLVisionConfig(embed_dim=160, num_heads=2)
            cos, sin = m.Qwen2VLVisionRotaryEmbedding(config)(x, torch.stack([rows, cols], dim=1))
            module = "Qwen2VLVisionRotaryEmbedding"
        else:
            table = m.VisionRotaryEmbedding(80 // 2)(24)
            emb = table[torch.stack([rows, cols], dim=1)].flatten(1)
            emb = torch.cat((emb, emb), dim=-1)
            cos, sin = emb.cos(), emb.sin()
            module = "VisionRotaryEmbedding"
        y = m.apply_rotary_pos_emb_vision(x, x, cos, sin)[0]
    name = f"qwen2-vl-vision-{dtype}"
    manifest = {"encoder": f"HF {module} + apply_rotary_pos_emb_vision ({dtype})", "family": "rope2d",
                "dtype": dtype, "axes": "nhd"}
    if dtype == "bf16":
        manifest["convention"] = {"rope_theta": 10000}
    dump_io.write(out, name, manifest, {"x": x, "y": y, "rows": rows.numpy(), "cols": cols.numpy()})
    return {name: {"family": "rope2d", "convention": "2-D RoPE half_split, pairing whole_head, head_dim 80"}}


def pixtral_rope(out, dtype):
    """Pixtral's vision rotary (2-D RoPE with split frequencies: one RoPE of width 64 dealt out, the
    even-indexed frequencies to the row and the odd-indexed to the column, turned by one
    rotate_half over the head), theta 10000, on a 16 x 24 grid: 5.x's PixtralVisionRotaryEmbedding
    takes (row, column) ids (n, 2); 4.49's PixtralRotaryEmbedding a flat id, row * (patches per
    side) + column. As for Qwen2-VL's tower, the base is stated in bf16."""
    from transformers.models.pixtral import modeling_pixtral as m
    from transformers.models.pixtral.configuration_pixtral import PixtralVisionConfig
    rows = torch.arange(16).repeat_interleave(24)
    cols = torch.arange(24).repeat(16)
    torch_dtype = torch.float32 if dtype == "f32" else torch.bfloat16
    x = torch.randn(rows.numel(), 2, 64).to(torch_dtype)  # (n, heads, head_dim)
    config = PixtralVisionConfig(hidden_size=128, num_attention_heads=2, head_dim=64, image_size=24 * 16,
                                 patch_size=16)
    with torch.no_grad():
        if V5:
            cos, sin = m.PixtralVisionRotaryEmbedding(config)(x, torch.stack([rows, cols], dim=1))
            module = "PixtralVisionRotaryEmbedding"
        else:
            cos, sin = m.PixtralRotaryEmbedding(config)(x, rows * 24 + cols)
            module = "PixtralRotaryEmbedding"
        q = x.transpose(0, 1).unsqueeze(0)  # (1, heads, n, d), as the tower's attention holds it
        y = m.apply_rotary_pos_emb(q, q, cos.unsqueeze(0), sin.unsqueeze(0))[0][0].transpose(0, 1)
    name = f"pixtral-vision-{dtype}"
    manifest = {"encoder": f"HF {module} + apply_rotary_pos_emb ({dtype})", "family": "rope2d", "dtype": dtype,
                "axes": "nhd"}
    if dtype == "bf16":
        manifest["convention"] = {"rope_theta": 10000}
    dump_io.write(out, name, manifest, {"x": x, "y": y, "rows": rows.numpy(), "cols": cols.numpy()})
    return {name: {"family": "rope2d",
                   "convention": "2-D RoPE half_split, pairing whole_head, head_dim 64, frequencies split"}}


def main(out):
    expected = ropes(out)
    for heads in (12, 16):
        expected |= bloom_alibi(out, heads, "bf16")
    expected |= bloom_alibi(out, 12, "f32")
    expected |= sinusoids(out)
    expected |= t5(out, False) | t5(out, True)
    expected |= mropes(out)
    for dtype in ("f32", "bf16"):
        expected |= vision_rope(out, dtype) | pixtral_rope(out, dtype)
    with open(f"{out}/expected.json", "w") as f:
        json.dump({"transformers": transformers.__version__, "dumps": expected}, f, indent=2)


if __name__ == "__main__":
    torch.manual_seed(0)
    main(sys.argv[1])
