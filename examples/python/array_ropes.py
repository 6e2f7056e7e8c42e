"""RoPE written in NumPy, as a user would write it for their own model: half-split pairs (HF's
rotate_half), angles in float64, one rounding to the storage dtype at the end. (JAX goes through
framework="jax": python/tests/test_jax.py.)"""
import numpy as np


def numpy_rope(x, positions, base=10000.0, work=np.float64):
    """Angles, cos, sin and the rotation in `work` (float64: one rounding, at the end)."""
    d = x.shape[-1]
    inv_freq = (work(base) ** (-np.arange(0, d, 2, dtype=work) / work(d))).astype(work)
    angles = positions.astype(work)[:, None] * inv_freq[None, :]  # (n, d/2)
    cos = np.concatenate([np.cos(angles)] * 2, axis=-1)[:, None, :]
    sin = np.concatenate([np.sin(angles)] * 2, axis=-1)[:, None, :]
    xw = x.astype(work)
    rotated = np.concatenate([-xw[..., d // 2:], xw[..., : d // 2]], axis=-1)
    return (xw * cos + rotated * sin).astype(x.dtype)


def numpy_rope_fp32_angles(x, positions, base=10000.0):
    """The same with everything in float32, as most framework code does it."""
    return numpy_rope(x, positions, base, work=np.float32)

