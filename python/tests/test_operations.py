"""Every operation of the table reaches a Python function with the keyword arguments and shapes
docs/python.md lists, and a correct ALiBi pinned to its convention passes."""
import math

import numpy as np
import pytest

import pecheck

# op -> (keyword arguments fn receives, besides spec)
SIGNATURES = {
    "sinusoidal": {"positions", "d_model"},
    "learned": {"x", "table", "positions"},
    "rope": {"x", "positions"},
    "alibi": {"positions", "heads"},
    "shaw": {"q", "k", "table", "positions"},
    "t5": {"table", "positions"},
    "attention": {"q", "k", "v", "positions", "causal"},
    "sinusoidal2d": {"rows", "cols", "d_model"},
    "rope2d": {"x", "rows", "cols"},
    "mrope": {"x", "temporal", "height", "width"},
    "relative_bias_2d": {"table", "rows", "cols", "heads"},
}


def output_shape(op, kw):
    n = len(kw.get("positions", kw.get("rows", kw.get("temporal"))))
    if op in ("sinusoidal", "sinusoidal2d"):
        return (n, kw["d_model"])
    if op in ("learned", "rope", "rope2d", "mrope"):
        return kw["x"].shape
    if op == "alibi":
        return (kw["heads"], n, n)
    if op == "shaw":
        return (n, n)
    if op in ("t5", "relative_bias_2d"):
        return (kw["table"].shape[1], n, n)
    return kw["q"].shape  # attention


@pytest.mark.parametrize("op", sorted(SIGNATURES))
def test_each_operation_is_called_with_its_documented_arguments(op):
    seen = []

    def fn(spec, shaw_table=None, t5_table=None, **kw):
        seen.append((set(kw), {k: np.asarray(v).dtype for k, v in kw.items() if hasattr(v, "dtype")}))
        assert isinstance(spec, dict) and spec  # convention="spec": the call's spec comes along
        return np.zeros(output_shape(op, kw), dtype=np.float32)

    report = pecheck.check(fn, op, "spec", dtypes="f32", cases=5, isolate=False)
    assert report.results and seen
    for names, dtypes in seen:
        assert names == SIGNATURES[op]
        for name, dtype in dtypes.items():
            assert dtype == (np.int64 if name in ("positions", "rows", "cols", "temporal", "height", "width")
                             else np.float32), (name, dtype)
    # All-zero outputs are wrong for every operation with a reference: nothing may pass vacuously.
    assert not report.ok


def test_a_rope_spec_carries_every_scaling_field_transformers_5_states():
    scalings = []

    def fn(spec, x, positions):
        scalings.append(spec["scaling"])
        return x

    pecheck.check(fn, "rope", "spec", dtypes="f32", cases=40, isolate=False, properties="rope.ntk_base")
    fields = {"kind", "factor", "original_max_position", "seq_len", "beta_fast", "beta_slow", "low_freq_factor",
              "high_freq_factor", "short_factor", "long_factor", "attention_factor", "mscale", "mscale_all_dim",
              "truncate", "rotated_pairs"}
    assert scalings and all(set(s) == fields for s in scalings), scalings[:1]
    assert all(isinstance(s["truncate"], bool) and isinstance(s["rotated_pairs"], int) for s in scalings)


def alibi_slopes(heads):
    """Press et al.'s slopes: 2^(-8 i / n) for a power of two, else the closest power's, interleaved."""
    def power_of_two(n):
        return [2 ** (-8 * (i + 1) / n) for i in range(n)]

    if math.log2(heads).is_integer():
        return power_of_two(heads)
    closest = 2 ** math.floor(math.log2(heads))
    return power_of_two(closest) + power_of_two(2 * closest)[0::2][: heads - closest]


def alibi(positions, heads):
    slopes = np.array(alibi_slopes(heads), dtype=np.float64)[:, None, None]
    distance = positions[None, :].astype(np.float64) - positions[:, None].astype(np.float64)  # p_j - p_i
    bias = slopes * distance[None]
    bias = np.where(distance[None] > 0, -np.inf, bias)
    return bias.astype(np.float32)


def test_a_correct_alibi_passes_pinned():
    report = pecheck.check(alibi, "alibi", {"causal": True}, dtypes="f32", cases=60)
    ran = {r.property: r.verdict for r in report.results if r.verdict != "skip"}
    assert ran == {"alibi.agrees_with_reference": "pass"}, report.summary()
