"""The seeds' encoders, as the tutorials in shared/seeds/ write them (comments translated).

This file is the third-party code pecheck validates: it is kept as written, bugs included.
Only the imports are gathered at the top; nothing else is changed.
"""
import math

import torch
import torch.nn as nn


# Seed 000, section 2.1 (and seed 002 with d_model=512 by default): the sinusoidal table.
class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=5000, dropout=0.1):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)

        # the position-encoding matrix
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(
            torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model)
        )

        # even dims sin, odd dims cos
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)

        # (max_len, d_model) -> (1, max_len, d_model)
        pe = pe.unsqueeze(0)
        self.register_buffer("pe", pe)

    def forward(self, x):
        # x: (batch, seq_len, d_model)
        x = x + self.pe[:, :x.size(1), :]
        return self.dropout(x)


# Seed 000, section 3: the learned table.
class LearnedPositionalEncoding(nn.Module):
    """Learned position encoding"""
    def __init__(self, d_model, max_len=5000):
        super().__init__()
        self.position_embedding = nn.Embedding(max_len, d_model)

    def forward(self, x):
        # x: (batch, seq_len, d_model)
        seq_len = x.size(1)
        positions = torch.arange(seq_len, device=x.device).unsqueeze(0)
        position_embeddings = self.position_embedding(positions)
        return x + position_embeddings


# Seed 000, section 4: RoPE's cos/sin tables.
class RotaryPositionalEmbedding(nn.Module):
    def __init__(self, dim, base=10000):
        super().__init__()
        self.inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))

    def forward(self, x, seq_len=None):
        # x: (batch, num_heads, seq_len, head_dim)
        t = torch.arange(seq_len, device=x.device).type_as(self.inv_freq)
        freqs = torch.einsum("i,j->ij", t, self.inv_freq)
        emb = torch.cat([freqs.sin(), freqs.cos()], dim=-1)
        return emb.cos(), emb.sin()


# Seed 002: RoPE applied to q and k, adjacent pairs.
def apply_rope(q, k, seq_len):
    """RoPE: rotate each pair of adjacent dims of Q and K"""
    d_model = q.shape[-1]
    half_dim = d_model // 2

    # rotation frequencies: theta_i = 10000^(-2i/d_model)
    theta = torch.exp(
        torch.arange(0, half_dim, dtype=torch.float) *
        (-math.log(10000.0) / half_dim)
    )

    # position * theta: (seq_len, half_dim)
    positions = torch.arange(seq_len, dtype=torch.float)
    positions = positions.unsqueeze(1)  # (seq_len, 1)
    angles = positions * theta.unsqueeze(0)  # (seq_len, half_dim)

    cos = angles.cos()  # (seq_len, half_dim)
    sin = angles.sin()  # (seq_len, half_dim)

    def rotate(x):
        # x: (batch, seq_len, d_model); pairs (0,1), (2,3), (4,5)...
        x_even = x[..., ::2]    # (batch, seq_len, half_dim)
        x_odd = x[..., 1::2]   # (batch, seq_len, half_dim)

        cos_expanded = cos.unsqueeze(0)  # (1, seq_len, half_dim)
        sin_expanded = sin.unsqueeze(0)

        rotated_even = x_even * cos_expanded - x_odd * sin_expanded
        rotated_odd = x_odd * cos_expanded + x_even * sin_expanded

        rotated = torch.zeros_like(x)
        rotated[..., ::2] = rotated_even
        rotated[..., 1::2] = rotated_odd

        return rotated

    q_rotated = rotate(q)
    k_rotated = rotate(k)

    return q_rotated, k_rotated


# Seed 002: relative position embeddings (an index table; its sign is checked by pecheck's
# mutant-shaw-i-minus-j, not by a dump).
class RelativePositionEmbedding(nn.Module):
    """Relative position embeddings"""
    def __init__(self, d_model=512, max_relative_distance=32):
        super().__init__()
        self.max_relative_distance = max_relative_distance
        self.d_model = d_model
        num_positions = 2 * max_relative_distance + 1
        self.relative_embeddings = nn.Embedding(num_positions, d_model)

    def forward(self, seq_len):
        # relative distance of positions i and j = j - i
        positions = torch.arange(seq_len, dtype=torch.long)
        relative_positions = positions.unsqueeze(1) - positions.unsqueeze(0)  # (seq_len, seq_len)
        relative_positions = torch.clamp(
            relative_positions,
            -self.max_relative_distance,
            self.max_relative_distance
        )
        relative_positions = relative_positions + self.max_relative_distance
        embeddings = self.relative_embeddings(relative_positions)  # (seq_len, seq_len, d_model)
        return embeddings


# Seed 002: the attention its test_position_invariance runs (no positional encoding).
class PositionalAwarenessTest(nn.Module):
    """Tests whether attention can tell orders apart"""
    def __init__(self, d_model=64, n_heads=4):
        super().__init__()
        self.attention = nn.MultiheadAttention(embed_dim=d_model, num_heads=n_heads, batch_first=True)

    def forward(self, x):
        # x: (batch, seq_len, d_model)
        attn_output, _ = self.attention(x, x, x)
        return attn_output
