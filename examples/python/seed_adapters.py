"""The seeds' PyTorch encoders (examples/pytorch/seed_encoders.py, kept as written) adapted to
pecheck's call signatures (docs/python.md). Each adapter calls the seed's code the way the seed
wrote it — a module's forward over positions 0 .. seq_len-1, apply_rope(q, k, seq_len) — and
picks out the rows at the positions pecheck asks for; it computes nothing of the encoding itself.
"""
import math
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pytorch"))
import seed_encoders as seeds  # noqa: E402


def unique_layers(positions):
    """Token indices split into layers with no repeated position, so each layer is one call."""
    layers, seen = [], []
    for t, p in enumerate(positions.tolist()):
        for layer, used in zip(layers, seen):
            if p not in used:
                layer.append(t)
                used.add(p)
                break
        else:
            layers.append([t])
            seen.append({p})
    return layers


def no_negative_positions(positions):
    import pecheck

    if int(positions.min()) < 0:
        raise pecheck.Unsupported("the seed's positions are arange(seq_len): none is negative")


def seed_apply_rope(x, positions):
    """Seed 002's apply_rope(q, k, seq_len): x (n, heads, d) rotated to `positions`. The seed
    rotates the rows 0 .. seq_len-1 of a (batch, seq_len, d) tensor; the heads are its batch."""
    no_negative_positions(positions)
    out = torch.empty_like(x)
    for layer in unique_layers(positions):
        index = positions[layer]
        seq_len = int(index.max()) + 1
        q = torch.zeros(x.shape[1], seq_len, x.shape[2], dtype=x.dtype)
        q[:, index, :] = x[layer].transpose(0, 1)
        rotated, _ = seeds.apply_rope(q, q, seq_len)
        out[layer] = rotated[:, index, :].transpose(0, 1).to(x.dtype)
    return out


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def seed_rotary_embedding(x, positions):
    """Seed 000's RotaryPositionalEmbedding: its (cos, sin) tables applied the usual way,
    x cos + rotate_half(x) sin, at the rows of `positions`."""
    no_negative_positions(positions)
    rope = seeds.RotaryPositionalEmbedding(x.shape[-1])
    cos, sin = rope(x, seq_len=int(positions.max()) + 1)  # (seq_len, d) each
    c, s = cos[positions].unsqueeze(1), sin[positions].unsqueeze(1)
    return (x * c + rotate_half(x) * s).to(x.dtype)


SINUSOID_MAX_LEN = 5000  # the seeds' default table


def seed_positional_encoding(positions, d_model):
    """PositionalEncoding(d_model) (both seeds), max_len 5000: forward adds its table to x; with x = 0
    the output is the table's rows 0 .. seq_len-1, picked at `positions`. Dropout is off (eval())."""
    pe = seeds.PositionalEncoding(d_model).eval()
    seq_len = int(positions.max()) + 1
    rows = pe(torch.zeros(1, seq_len, d_model))[0]
    return rows[positions]


def seed_learned(x, table, positions):
    """Seed 000's LearnedPositionalEncoding with pecheck's table as its nn.Embedding weight: its
    forward adds E[0 .. seq_len-1]; a token at position p is row p of a sequence of length p + 1.
    A position outside the table raises IndexError, as nn.Embedding does."""
    module = seeds.LearnedPositionalEncoding(table.shape[1], max_len=table.shape[0])
    with torch.no_grad():
        module.position_embedding.weight.copy_(table)
    out = torch.empty_like(x)
    for layer in unique_layers(positions):
        index = positions[layer]
        if int(index.min()) < 0:
            raise IndexError("index out of range in self")  # arange never yields one: nn.Embedding's error
        seq = torch.zeros(1, int(index.max()) + 1, x.shape[1], dtype=x.dtype)
        seq[0, index] = x[layer]
        out[layer] = module(seq)[0, index].to(x.dtype)
    return out


def seed_relative(q, k, table, positions, spec):
    """Seed 002's RelativePositionEmbedding(d_model, K) with pecheck's table as its weights:
    scores q_i.k_j + q_i.r_ij, r_ij its embedding for the pair (i, j) of a sequence whose tokens
    sit at `positions` (K from the table: 2K + 1 rows)."""
    d = q.shape[1]
    max_distance = (table.shape[0] - 1) // 2
    module = seeds.RelativePositionEmbedding(d_model=d, max_relative_distance=max_distance)
    with torch.no_grad():
        module.relative_embeddings.weight.copy_(table)
    r = module(int(positions.max()) + 1)  # (seq_len, seq_len, d)
    r_ij = r[positions][:, positions]  # (n, n, d)
    return (q @ k.T + torch.einsum("id,ijd->ij", q, r_ij)).to(q.dtype)


def seed_attention(q, k, v, positions, causal, spec, shaw_table=None):
    """Seed 002's PositionalAwarenessTest(d_model, n_heads): nn.MultiheadAttention, batch_first,
    with identity projections and zero biases, so that it computes the attention of pecheck's
    operation. Its forward is self-attention, attention(x, x, x): pecheck's q, k and v go in
    through the module's own attention call with the three inputs. It has no positional encoding
    and no mask: other cases are declined."""
    import pecheck

    n, heads, d = q.shape
    if spec["pe"] != "none" or causal:
        raise pecheck.Unsupported("PositionalAwarenessTest has no positional encoding and no mask")
    if abs(spec["scale"] - 1 / math.sqrt(d)) > 1e-12:
        raise pecheck.Unsupported("nn.MultiheadAttention scales by 1/sqrt(head_dim) only")
    model = seeds.PositionalAwarenessTest(d_model=heads * d, n_heads=heads)
    with torch.no_grad():
        eye = torch.eye(heads * d)
        model.attention.in_proj_weight.copy_(torch.cat([eye, eye, eye]))
        model.attention.in_proj_bias.zero_()
        model.attention.out_proj.weight.copy_(eye)
        model.attention.out_proj.bias.zero_()
        model = model.to(q.dtype)
        x = [t.reshape(1, n, heads * d) for t in (q, k, v)]
        out, _ = model.attention(*x, need_weights=False)
    return out.reshape(n, heads, d)
