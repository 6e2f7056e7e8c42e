"""pecheck._core, the native module (python/src/module.cpp, nanobind): what NB_MODULE exports.
pecheck.check() is the way in; python/tests/test_version.py checks these names against the module."""

from collections.abc import Callable, Sequence
import typing
from typing import Any

import numpy
import numpy.typing

def run(
    invoke: Callable[..., Any],
    name: str,
    op: str,
    mode: str,
    convention: str,
    dtypes: Sequence[str],
    cases: int,
    seed: int,
    properties: str,
    isolate: bool,
    timeout_s: float,
    max_position: int,
    contract: str,
    forms: Sequence[str],
    ftz: bool,
    batch: int,
) -> dict[str, typing.Any]:
    """The catalogue of `op` against invoke (a pecheck._invoke.Invoker): {"results": [...],
    "contracts": [...]}, each row a dict in the fields of docs/json-schema.md. mode: "opaque",
    "pinned" (convention: JSON text) or "spec"; properties: a glob over property ids; contract: a
    name, or "" for the strongest met; max_position: 0 for no ceiling; forms: attention's call forms;
    ftz: fn's platform flushes subnormals to zero (no input below FLT_MIN is drawn); batch: 0, or
    the most calls sent at once to invoke's BatchSession (fn takes a leading batch axis)."""

def catalogue() -> list[dict[str, typing.Any]]:
    """Every property: a list of {"id", "op", "statement", "doc", "convention_free",
    "pinnable", "calls_at_case_positions", "dtypes"}."""

def time_rope_calls(invoke: Callable[..., Any], dtype: str, tokens: int, heads: int, head_dim: int,
                    repeats: int) -> float:
    """Seconds taken by `repeats` RoPE calls of (tokens, heads, head_dim) through invoke, in this
    process (python/bench/overhead.py)."""

def rope_cos_sin(convention: str, head_dim: int, positions: numpy.typing.NDArray[numpy.int64]) -> tuple[numpy.typing.NDArray[numpy.float64], numpy.typing.NDArray[numpy.float64]]:
    """A pinned RoPE convention's m cos and m sin (m: YaRN's attention factor, else 1) of each rotated
    pair at each position, (n, rotary_dim / 2) float64 (python/src/cos_sin.cpp; pecheck/cos_sin.py)."""
