#!/usr/bin/env python3
"""Runs the seeds' encoders (seed_encoders.py) and HF's Llama RoPE (when transformers is
installed) on generated inputs and writes one dump per encoder for `pecheck validate --dump`:

    python3 examples/pytorch/dump_seeds.py OUT
    build/pecheck validate --dump OUT

Each dump is a directory with manifest.json and NPY arrays. No convention is stated: pecheck
fits it from the data. Long sequences are run whole, then a subset of their tokens is kept (every
position up to 127, then a sparse sample up to the last), since each row states its position.
"""
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import seed_encoders  # noqa: E402


def keep_rows(n, dense=128, samples=160):
    """Every position below `dense`, then about `samples` more spread up to n - 1."""
    rows = list(range(min(n, dense)))
    if n > dense:
        rows += [int(r) for r in np.unique(np.geomspace(dense, n - 1, samples).astype(np.int64))]
    return sorted(set(rows))


def write_dump(out, name, manifest, arrays):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    files = {}
    for role, a in arrays.items():
        np.save(os.path.join(d, role + ".npy"), a)
        files[role] = role + ".npy"
    manifest = dict(manifest, arrays=files)
    with open(os.path.join(d, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
    print(f"wrote {d}: {manifest['encoder']}")


def rotate_half(x):
    """HF's rotate_half, to apply a (cos, sin) table the way LLaMA does."""
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def sinusoidal(out):
    # The whole table, every row: max_len 5001 so that it reaches position 5000, d_model 128.
    pe = seed_encoders.PositionalEncoding(d_model=128, max_len=5001).pe[0]
    write_dump(out, "seed-positional-encoding",
               {"encoder": "seed PositionalEncoding (fp32 table)", "family": "sinusoidal", "dtype": "f32"},
               {"table": pe.numpy()})


def learned(out):
    torch.manual_seed(4)
    max_len, d = 5000, 64
    module = seed_encoders.LearnedPositionalEncoding(d, max_len=max_len)
    with torch.no_grad():
        x = torch.randn(1, max_len, d)
        y = module(x)
        try:  # one token more than the table has rows
            module(torch.randn(1, max_len + 1, d))
            past = {"refused": False}
        except Exception as e:  # what the module does past its table is the finding
            past = {"refused": True, "message": f"{type(e).__name__}: {e}"}
    rows = keep_rows(max_len)
    write_dump(out, "seed-learned-positional-encoding",
               {"encoder": "seed LearnedPositionalEncoding", "family": "learned", "dtype": "f32",
                "past_table": past},
               {"positions": np.array(rows, dtype=np.int64), "table": module.position_embedding.weight.detach().numpy(),
                "x": x[0, rows].numpy(), "y": y[0, rows].numpy()})


def relative_position_embedding(out):
    """Seed 002's RelativePositionEmbedding (K = 32, d = 64) over 80 tokens, its (n, n, d) embeddings
    turned into Shaw's scores the way its attention uses them: q_i . k_j + q_i . e[i, j]."""
    torch.manual_seed(5)
    n, d = 80, 64
    module = seed_encoders.RelativePositionEmbedding(d, max_relative_distance=32)
    with torch.no_grad():
        q, k = torch.randn(n, d), torch.randn(n, d)
        e = module(n)
        scores = q @ k.T + torch.einsum("id,ijd->ij", q, e)
    write_dump(out, "seed-relative-position-embedding",
               {"encoder": "seed RelativePositionEmbedding (scores q.k + q.e)", "family": "shaw", "dtype": "f32"},
               {"positions": np.arange(n, dtype=np.int64), "q": q.numpy(), "k": k.numpy(),
                "table": module.relative_embeddings.weight.detach().numpy(), "scores": scores.numpy()})


def apply_rope(out):
    torch.manual_seed(1)
    seq_len, d = 65536, 64
    q = torch.randn(1, seq_len, d)
    k = torch.randn(1, seq_len, d)
    q_rot, _ = seed_encoders.apply_rope(q, k, seq_len)
    rows = keep_rows(seq_len)
    write_dump(out, "seed-apply-rope",
               {"encoder": "seed apply_rope (fp32 angles)", "family": "rope", "dtype": "f32", "axes": "nd"},
               {"positions": np.array(rows, dtype=np.int64), "x": q[0, rows].numpy(), "y": q_rot[0, rows].numpy()})


def rotary_positional_embedding(out):
    torch.manual_seed(2)
    seq_len, heads, d = 256, 2, 64
    x = torch.randn(1, heads, seq_len, d)
    cos, sin = seed_encoders.RotaryPositionalEmbedding(d)(x, seq_len=seq_len)
    y = x * cos + rotate_half(x) * sin  # the usual way a (cos, sin) table is applied
    write_dump(out, "seed-rotary-positional-embedding",
               {"encoder": "seed RotaryPositionalEmbedding (cos, sin) applied with rotate_half", "family": "rope",
                "dtype": "f32", "axes": "bhnd"},
               {"positions": np.arange(seq_len, dtype=np.int64), "x": x.numpy(), "y": y.numpy()})


def hf_llama(out):
    try:
        from transformers.models.llama.configuration_llama import LlamaConfig
        from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb
    except ImportError:
        print("transformers is not installed: HF LlamaRotaryEmbedding skipped")
        return
    torch.manual_seed(3)
    config = LlamaConfig(hidden_size=512, num_attention_heads=8, max_position_embeddings=2048)
    rope = LlamaRotaryEmbedding(config=config)
    for dtype, name in ((torch.float32, "f32"), (torch.bfloat16, "bf16")):
        seq_len = 32768
        x = torch.randn(1, 8, seq_len, 64).to(dtype)
        position_ids = torch.arange(seq_len).unsqueeze(0)
        cos, sin = rope(x, position_ids)
        y, _ = apply_rotary_pos_emb(x, x, cos, sin)
        rows = keep_rows(seq_len)
        as_np = (lambda t: t.float().numpy()) if dtype == torch.float32 else (lambda t: t.view(torch.int16).numpy().view(np.uint16))
        write_dump(out, f"hf-llama-rope-{name}",
                   {"encoder": f"HF LlamaRotaryEmbedding + apply_rotary_pos_emb ({name})", "family": "rope",
                    "dtype": name, "axes": "bhnd"},
                   {"positions": np.array(rows, dtype=np.int64), "x": as_np(x[:, :, rows]), "y": as_np(y[:, :, rows])})


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: dump_seeds.py OUT")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    sinusoidal(out)
    learned(out)
    relative_position_embedding(out)
    apply_rope(out)
    rotary_positional_embedding(out)
    hf_llama(out)


if __name__ == "__main__":
    main()
