"""The seeds' PyTorch encoders checked directly by pecheck.check (no dumps), each with the finding
docs/seeds.md states. f32, where the seeds' findings live; 60 cases per property."""
import pytest

torch = pytest.importorskip("torch")

import pecheck  # noqa: E402
import seed_adapters as seeds  # noqa: E402

CASES = 60


def check(fn, op, convention, **kwargs):
    return pecheck.check(fn, op, convention, framework="torch", dtypes="f32", cases=CASES, **kwargs)


def test_apply_rope_agrees_only_at_small_positions():
    # Seed 002's apply_rope: interleaved, base 10000, right convention; fp32 angles and products.
    report = check(seeds.seed_apply_rope, "rope", {"rope_theta": 10000.0, "layout": "interleaved"},
                   max_position=8191, contract="exact")
    agrees = report.result("rope.agrees_with_reference")
    assert agrees.verdict == "fail" and agrees.counterexample_error_u > 2
    assert "layout=interleaved" in agrees.counterexample
    # The error grows with position: the worst case is far beyond the bound.
    assert agrees.max_error_u > 20
    # Its positions are arange(seq_len): negative positions are declined, not failed.
    assert "none is negative" in report.result("rope.inverse").message
    assert report.result("rope.nan_parity").verdict == "pass"


def test_rotary_embedding_is_not_a_rotation():
    # Seed 000's RotaryPositionalEmbedding returns cos(sin(pos w)), sin(cos(pos w)): no rotation.
    report = check(seeds.seed_rotary_embedding, "rope", {"rope_theta": 10000.0}, max_position=8191)
    orthogonal = report.result("rope.orthogonal")
    assert orthogonal.verdict == "fail" and orthogonal.max_error_u > 1e6
    assert report.result("rope.agrees_with_reference").counterexample_error_u > 1e6


def test_positional_encoding_drifts_with_position():
    # Both seeds' PositionalEncoding, max_len 5000: fp32 position * div_term.
    report = check(seeds.seed_positional_encoding, "sinusoidal",
                   {"layout": "interleaved", "frequencies": "vaswani", "base": 10000.0},
                   max_position=seeds.SINUSOID_MAX_LEN - 1, contract="exact")
    agrees = report.result("sinusoidal.agrees_with_reference")
    assert agrees.verdict == "fail" and agrees.max_error_u > 10
    assert report.result("sinusoidal.bounds").verdict == "pass"


def test_learned_table_is_exact_and_refuses_outside_positions():
    # Seed 000's LearnedPositionalEncoding: x + E[pos] is one fp32 addition; nn.Embedding raises
    # IndexError past its table, which is the refusal learned.agrees_with_reference asks for.
    report = check(seeds.seed_learned, "learned", {})
    (r,) = report.results
    assert r.verdict == "pass", r.explain()
    assert r.max_error_u <= 1


def test_relative_position_embedding_has_the_sign_reversed():
    # Seed 002's RelativePositionEmbedding: its comment says j - i, its code computes i - j.
    report = check(seeds.seed_relative, "shaw", "spec", max_position=255)
    (r,) = report.results
    assert r.verdict == "fail" and r.counterexample_error_u > 1e6
    assert "K=" in r.counterexample


def test_attention_without_pe_is_permutation_equivariant():
    # Seed 002's PositionalAwarenessTest (nn.MultiheadAttention, identity projections): what its
    # test_position_invariance meant to show is attention.permutation_equivariance, and it holds.
    report = check(seeds.seed_attention, "attention", "spec", properties="attention.permutation_equivariance")
    (r,) = report.results
    assert r.verdict == "pass", r.explain()
    assert r.cases == CASES
