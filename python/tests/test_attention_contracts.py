"""Attention's contracts (pecheck.ATTENTION_CONTRACTS): exact requires the softmax probabilities P
in fp32 or wider where they meet V; rounded-p allows P rounded to the dtype first, as
FlashAttention-2 does in bf16 and f16 (docs/error-model.md, attention.output.rounded_p);
dtype-trig and fp32-angles allow that and judge the RoPE inside attention by those contracts.
With none asked, check() climbs them; a contract that governs another operation is refused."""
import numpy as np
import pytest

import pecheck

PLAIN = {"pe": "none"}
LAWS = "attention.[acdkpt]*"  # agreement, tile edges, convex, decode, kv/permutation, translation, causal


def rope_fp32_angles(x, positions, base, angle_dtype):
    """RoPE (half-split pairs) as HF writes it: inv_freq and pos * inv_freq in angle_dtype."""
    d = x.shape[-1]
    inv = (1.0 / base ** (np.arange(0, d, 2, dtype=angle_dtype) / angle_dtype(d))).astype(angle_dtype)
    angles = positions.astype(angle_dtype)[:, None, None] * inv
    cos, sin = np.cos(angles).astype(np.float64), np.sin(angles).astype(np.float64)
    a, b = x[..., : d // 2], x[..., d // 2:]
    return np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)


def attention(p_dtype=None, rope_angles=None):
    """Attention in float64 whose weights meet V rounded to p_dtype (None: kept in float64), with
    RoPE (base 10000) applied to Q and K first, its angles formed in rope_angles, if given."""

    def fn(q, k, v, positions, causal, scale=None):
        q, k, v = (np.asarray(t, dtype=np.float64) for t in (q, k, v))
        n, heads, d = q.shape
        scale = 1 / np.sqrt(d) if scale is None else scale
        if rope_angles is not None:
            q, k = (rope_fp32_angles(t, positions, 10000.0, rope_angles) for t in (q, k))
        out = np.empty_like(q)
        for i in range(n):
            last = i if causal else n - 1
            for h in range(heads):
                w = np.exp(scale * (k[:last + 1, h] @ q[i, h]) - np.max(scale * (k[:last + 1, h] @ q[i, h])))
                p = w if p_dtype is None else w.astype(p_dtype).astype(np.float64)
                out[i, h] = (p @ v[:last + 1, h]) / w.sum()  # the sum from the unrounded weights
        return out.astype(np.float32)

    return fn


def test_a_correct_attention_meets_exact_on_the_ladder():
    report = pecheck.check(attention(), "attention", PLAIN, dtypes="f32", cases=30, properties=LAWS)
    assert report.ok, report.summary()
    assert report.contract("f32") == "exact"
    assert "f32: meets exact" in report.summary()


def test_rounded_p_is_judged_when_asked_and_its_bound_is_one_u_wider():
    rounded = pecheck.check(attention(np.float16), "attention", PLAIN, dtypes="f16", cases=30,
                            properties="attention.agrees_with_reference", contract="rounded-p")
    assert rounded.ok, rounded.summary()
    verdict = rounded.contracts["f16"]
    assert verdict.asked == "rounded-p" and verdict.met == "rounded-p" and not verdict.misses
    # The bound a result reports is its worst case's, and the two contracts may find their worst in
    # different cases: one case each (the same, from the same seed) holds the identity.
    a, b = (pecheck.check(attention(np.float16), "attention", PLAIN, dtypes="f16", cases=1, contract=c,
                          properties="attention.agrees_with_reference").result("attention.agrees_with_reference", "f16")
            for c in ("exact", "rounded-p"))
    assert b.bound_u == pytest.approx(a.bound_u + 1)  # u_P / u, P in the storage dtype


def test_p_rounded_to_f16_in_f32_meets_no_attention_contract():
    report = pecheck.check(attention(np.float16), "attention", PLAIN, dtypes="f32", cases=30,
                           properties="attention.agrees_with_reference")
    assert not report.ok
    verdict = report.contracts["f32"]
    assert verdict.met is None
    assert [m.contract for m in verdict.misses] == list(pecheck.ATTENTION_CONTRACTS)
    assert "meets no named contract (tried exact, rounded-p, dtype-trig, fp32-angles)" in report.summary()
    assert "contract='rounded-p'" in verdict.misses[1].replay


def test_rope_inside_attention_with_fp32_angles_meets_fp32_angles():
    # HF's attention: RoPE's angles in float32. Judged as if exact, its RoPE's angle error at
    # thousands of positions moves the output past the bound in f32.
    report = pecheck.check(attention(rope_angles=np.float32), "attention", {"pe": "rope", "rope_theta": 10000.0},
                           dtypes="f32", cases=100, properties=LAWS, seed=20261130)
    assert report.ok, report.summary()
    assert report.contract("f32") == "fp32-angles"
    assert [m.contract for m in report.contracts["f32"].misses] == ["exact", "rounded-p", "dtype-trig"]
    for law in ("attention.agrees_with_reference", "attention.translation_invariance"):
        r = report.result(law)
        assert r.verdict == "pass" and r.nontrivial_cases >= 90, (law, r)


def test_rope_inside_attention_with_f16_angles_meets_no_contract():
    f16 = pecheck.check(attention(rope_angles=np.float16), "attention", {"pe": "rope", "rope_theta": 10000.0},
                         dtypes="f32", cases=60, properties="attention.agrees_with_reference")
    assert not f16.ok
    assert f16.contract("f32") is None


@pytest.mark.parametrize("op, contract", [("rope", "rounded-p"), ("sinusoidal", "rounded-p")])
def test_a_contract_of_another_operation_is_refused(op, contract):
    with pytest.raises(ValueError, match=f"contract: '{contract}' is not one of {op}'s"):
        pecheck.check(attention(), op, PLAIN, contract=contract)
