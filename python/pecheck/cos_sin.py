"""RoPE written around a precomputed cos/sin cache (issue 33, item 2): the two halves of such code,
each checked as a RoPE.

- cos_sin=LAYOUT: fn applies a cos/sin it is handed, as transformers' apply_rotary_pos_emb,
  flash-attention's apply_rotary_emb, Liger's liger_rotary_pos_emb and vLLM's rotary op do. pecheck
  hands it the stated convention's exact cos and sin (python/src/cos_sin.cpp: the reference's
  rotation in double, YaRN's attention factor included) stored in the call's dtype, in LAYOUT, so
  that fn's rotation is what is judged: fn(x, cos, sin), or fn(x, positions, cos_sin_cache).
- produces_cos_sin=LAYOUT: fn is a module's own cos/sin producer, fn(x, positions) -> (cos, sin)
  as transformers' rotary modules are (x gives the dtype); pecheck rotates x by them exactly (in
  float64, then one rounding to the dtype), so that fn's angles are what is judged.

LAYOUTS says what each layout is. docs/python.md, "cos/sin caches", has the four kernels' calls.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, Optional, Tuple

import numpy as np

# Each layout of the (positions, ...) tables, for rotary_dim r, c the (n, r/2) cos of each pair.
LAYOUTS = {
    "half": "cos, sin (n, r/2), one column per pair: flash-attention's apply_rotary_emb",
    "rotate_half": "cos, sin (n, r) = [c, c]: transformers' apply_rotary_pos_emb, Liger's (rotate_half pairs)",
    "interleaved": "cos, sin (n, r) = [c0, c0, c1, c1, ...]: GPT-J's pairs (2i, 2i + 1)",
    "cos_sin_cache": "cos_sin_cache (max_position + 1, r) = [c | s] indexed by positions: vLLM's rotary op",
}


def check_layout(name: str, layout: Any) -> str:
    if not isinstance(layout, str) or layout not in LAYOUTS:
        raise ValueError(f"{name}: {layout!r} is not one of {', '.join(LAYOUTS)}")
    return layout


def _spread(c: np.ndarray, layout: str) -> np.ndarray:
    """(n, r/2) per-pair values in the layout's (n, r) or (n, r/2) table."""
    if layout == "rotate_half":
        return np.concatenate([c, c], axis=-1)
    if layout == "interleaved":
        return np.repeat(c, 2, axis=-1)
    return c


def _rotate_pairs(x: np.ndarray, layout: str) -> np.ndarray:
    """x's rotated partner, signed, in the layout: rotate_half's [-x2, x1], or (-x_odd, x_even)."""
    if layout == "interleaved":
        out = np.empty_like(x)
        out[..., 0::2], out[..., 1::2] = -x[..., 1::2], x[..., 0::2]
        return out
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)


class CosSinForm:
    """The Invoker's call of a RoPE function in one of the cos/sin forms: it makes the tables (or
    takes them from fn), calls fn, and returns what the Invoker reads as fn's output."""

    def __init__(self, layout: str, produces: bool, convention: Optional[Dict[str, Any]], pair_layout: str,
                 max_position: Optional[int], pairwise: bool = False):
        self.layout, self.produces, self.pair_layout = layout, produces, pair_layout
        # fn(q, k, ...) -> (q', k'), as the kernels take both: q and k are handed the same values
        # and must come back the same (a k path of its own, wrong, fails), q' is what is judged.
        self.pairwise = pairwise
        self.convention = json.dumps(convention) if convention is not None else None
        self.max_position = max_position
        # (head_dim, dtype) -> the whole cos_sin_cache as fn is handed it: made and converted once
        self._cache: Dict[Tuple[int, str], Any] = {}

    def keywords(self) -> Tuple[str, ...]:
        """The keywords fn is called with."""
        if self.produces:
            return ("x", "positions")
        inputs = ("q", "k") if self.pairwise else ("x",)
        return inputs + (("positions", "cos_sin_cache") if self.layout == "cos_sin_cache" else ("cos", "sin"))

    def _tables(self, head_dim: int, positions: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        from . import _core

        assert self.convention is not None
        return _core.rope_cos_sin(self.convention, head_dim, np.ascontiguousarray(positions, dtype=np.int64))

    def _cos_sin_cache(self, head_dim: int, io: Any) -> Any:
        key = (head_dim, io.dtype)
        if key not in self._cache:
            assert self.max_position is not None
            c, s = self._tables(head_dim, np.arange(self.max_position + 1, dtype=np.int64))
            self._cache[key] = io.table(np.concatenate([c, s], axis=-1))
        return self._cache[key]

    def __call__(self, fn: Callable[..., Any], x: Any, positions: Any, io: Any) -> Any:
        """io: the Invoker's conversions, table (float64 -> the call's framework and dtype), numpy
        (a framework tensor -> NumPy) and output (float64 -> what the Invoker reads back)."""
        n, head_dim = x.shape[0], x.shape[-1]
        if self.produces:
            return self._rotate_by_produced(fn(x=x, positions=positions), x, n, io)
        if self.layout == "cos_sin_cache":
            if io.numpy(positions).min(initial=0) < 0:  # rope.inverse's R(-p): a cache has no such row
                from . import Unsupported

                raise Unsupported("a cos_sin_cache has rows for positions 0..max_position only, not negative ones")
            tables = {"positions": positions, "cos_sin_cache": self._cos_sin_cache(head_dim, io)}
        else:
            c, s = self._tables(head_dim, io.numpy(positions).astype(np.int64))
            tables = {"cos": io.table(_spread(c, self.layout)), "sin": io.table(_spread(s, self.layout))}
        if not self.pairwise:
            return fn(x=x, **tables)
        returned = fn(q=x, k=io.copy(x), **tables)
        if not (isinstance(returned, (tuple, list)) and len(returned) == 2):
            raise TypeError(f"fn(q, k, ...) returned a {type(returned).__name__}, not a (q, k) pair")
        q_out, k_out = (io.numpy(t) for t in returned)
        if q_out.shape != k_out.shape:
            raise ValueError(f"k, handed the same values as q, came back of shape {k_out.shape}, q {q_out.shape}")
        differs = (q_out != k_out) & ~(np.isnan(q_out) & np.isnan(k_out))
        if differs.any():
            at = tuple(int(i) for i in np.argwhere(differs)[0])
            raise ValueError(f"k, handed the same values as q, came back rotated differently first at {at}: "
                             f"q {q_out[at]}, k {k_out[at]}")
        return returned[0]

    def _rotate_by_produced(self, produced: Any, x: Any, n: int, io: Any) -> Any:
        if not (isinstance(produced, (tuple, list)) and len(produced) == 2):
            raise TypeError(f"the producer returned a {type(produced).__name__}, not a (cos, sin) pair")
        cos, sin = (io.numpy(t).astype(np.float64).reshape(n, -1) for t in produced)
        if cos.shape != sin.shape:
            raise ValueError(f"the producer's cos {cos.shape} and sin {sin.shape} differ in shape")
        x64 = io.numpy(x).astype(np.float64)
        r = cos.shape[1] * (2 if self.layout == "half" else 1)
        if r > x64.shape[-1] or r % 2:
            raise ValueError(f"the producer's tables turn {r} dims, and the head has {x64.shape[-1]}")
        # How the tables pair the dims: as their layout says, or (half) as the convention's layout.
        stated = self.pair_layout if self.layout == "half" else self.layout
        pairs = "interleaved" if stated == "interleaved" else "rotate_half"
        full_cos, full_sin = (_spread(t, pairs) if self.layout == "half" else t for t in (cos, sin))
        out = x64.copy()
        rot = x64[..., :r]
        out[..., :r] = rot * full_cos[:, None, :] + _rotate_pairs(rot, pairs) * full_sin[:, None, :]
        return io.output(out)
