import numpy as np
import pytest


def numpy_rope(x, positions, base=10000.0):
    """RoPE done right in NumPy: interleaved pairs, angles in float64, one rounding at the end."""
    d = x.shape[-1]
    inv_freq = base ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    angles = positions.astype(np.float64)[:, None] * inv_freq[None, :]
    cos, sin = np.cos(angles)[:, None, :], np.sin(angles)[:, None, :]
    x64 = x.astype(np.float64)
    a, b = x64[..., 0::2], x64[..., 1::2]
    out = np.empty_like(x64)
    out[..., 0::2] = a * cos - b * sin
    out[..., 1::2] = a * sin + b * cos
    return out.astype(x.dtype)


@pytest.fixture
def good_rope():
    return numpy_rope
