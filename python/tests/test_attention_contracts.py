"""Attention's contracts (pecheck.ATTENTION_CONTRACTS): exact requires the softmax probabilities P
in fp32 or wider where they meet V; rounded-p allows P rounded to the dtype first, as
FlashAttention-2 does in bf16 and f16 (docs/error-model.md, attention.output.rounded_p). With none
asked, check() climbs them; a contract that governs another operation is refused."""
import numpy as np
import pytest

import pecheck

PLAIN = {"pe": "none"}
LAWS = "attention.[acdkpt]*"  # agreement, tile edges, convex, decode, kv/permutation, translation, causal


def attention(p_dtype=None):
    """Attention in float64 whose weights meet V rounded to p_dtype (None: kept in float64)."""

    def fn(q, k, v, positions, causal, scale=None):
        q, k, v = (np.asarray(t, dtype=np.float64) for t in (q, k, v))
        n, heads, d = q.shape
        scale = 1 / np.sqrt(d) if scale is None else scale
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
    exact = pecheck.check(attention(np.float16), "attention", PLAIN, dtypes="f16", cases=30,
                          properties="attention.agrees_with_reference", contract="exact")
    rounded = pecheck.check(attention(np.float16), "attention", PLAIN, dtypes="f16", cases=30,
                            properties="attention.agrees_with_reference", contract="rounded-p")
    assert rounded.ok, rounded.summary()
    verdict = rounded.contracts["f16"]
    assert verdict.asked == "rounded-p" and verdict.met == "rounded-p" and not verdict.misses
    a, b = (r.result("attention.agrees_with_reference", "f16") for r in (exact, rounded))
    assert b.bound_u == pytest.approx(a.bound_u + 1)  # u_P / u, P in the storage dtype


def test_p_rounded_to_f16_in_f32_meets_no_attention_contract():
    report = pecheck.check(attention(np.float16), "attention", PLAIN, dtypes="f32", cases=30,
                           properties="attention.agrees_with_reference")
    assert not report.ok
    verdict = report.contracts["f32"]
    assert verdict.met is None
    assert [m.contract for m in verdict.misses] == list(pecheck.ATTENTION_CONTRACTS)
    assert "meets no named contract (tried exact, rounded-p)" in report.summary()
    assert "contract='rounded-p'" in verdict.misses[-1].replay


@pytest.mark.parametrize("op, contract", [("rope", "rounded-p"), ("attention", "fp32-angles")])
def test_a_contract_of_another_operation_is_refused(op, contract):
    with pytest.raises(ValueError, match=f"contract: '{contract}' is not one of {op}'s"):
        pecheck.check(attention(), op, PLAIN, contract=contract)
