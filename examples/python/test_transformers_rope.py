"""transformers' RoPE for every rope_type, checked through pecheck.check with the convention in
HF's words. In fp32 HF forms its angles in fp32 (inv_freq @ position_ids.float()): agreement holds
under the fp32-angles contract and fails the exact one; the laws that compare calls with each
other (rope.relative, rope.composition) are reported, not asserted (docs/python.md)."""
import pytest

pytest.importorskip("transformers")

import pecheck  # noqa: E402
import hf_rope  # noqa: E402

CASES = 40
TYPES = [pytest.param(*case, id=case[0]) for case in hf_rope.every_rope_type()]


@pytest.mark.parametrize("name, fn, convention, max_position", TYPES)
def test_the_stated_convention_is_what_hf_computes(name, fn, convention, max_position):
    report = pecheck.check(fn, "rope", convention, framework="torch", dtypes="f32", cases=CASES,
                           contract="fp32-angles", max_position=max_position)
    agrees = report.result("rope.agrees_with_reference")
    assert agrees.verdict == "pass", agrees.explain()
    for law in ("rope.orthogonal", "rope.inverse", "rope.nan_parity", "rope.inf_parity"):
        r = report.result(law)
        assert r.verdict == "pass", r.explain()


def test_fp32_angles_fail_the_exact_contract():
    fn, convention = hf_rope.llama(10000.0)
    report = pecheck.check(fn, "rope", convention, framework="torch", dtypes="f32", cases=CASES, contract="exact",
                           properties="rope.agrees_with_reference")
    (r,) = report.results
    assert r.verdict == "fail" and r.counterexample_error_u > 2


def test_a_wrong_convention_fails_even_the_weakest_contract():
    fn, convention = hf_rope.llama(10000.0)
    report = pecheck.check(fn, "rope", dict(convention, rope_theta=500000.0), framework="torch", dtypes="f32",
                           cases=CASES, contract="fp32-angles", properties="rope.agrees_with_reference")
    (r,) = report.results
    assert r.verdict == "fail"


def test_yarn_takes_l0_where_this_transformers_does():
    # transformers 4.49 ignores rope_scaling's original_max_position_embeddings for YaRN and uses
    # config.max_position_embeddings (8192): a statement of 2048 is not what it computes. 5.x
    # computes with the stated 2048.
    fn, convention = hf_rope.llama(10000.0, {"rope_type": "yarn", "factor": 4.0,
                                             "original_max_position_embeddings": 2048})
    report = pecheck.check(fn, "rope", convention, framework="torch", dtypes="f32", cases=CASES,
                           contract="fp32-angles", properties="rope.agrees_with_reference")
    assert report.results[0].verdict == ("pass" if hf_rope.V5 else "fail"), report.results[0].explain()


def test_dynamic_is_checked_opaque():
    report = pecheck.check(hf_rope.dynamic(), "rope", None, framework="torch", dtypes="f32", cases=CASES)
    assert {r.property for r in report.results if r.verdict != "skip"} == {
        "rope.relative", "rope.offset_invariance", "rope.stateless", "rope.call_sequence"}


@pytest.mark.skipif(not hf_rope.V5, reason="transformers 4.49 has no proportional rope_type")
def test_proportional_is_not_partial_rotary():
    # Gemma 4's full layers rotate 8 of 32 pairs over the whole head, (i, i + 32) at base^(-2i/64);
    # GPT-NeoX's partial rotary with the same share pairs (i, i + 8) of the first 16 dims at base^(-2i/16).
    fn, _ = hf_rope.gemma4_full_attention()
    partial = {"rope_theta": 1e6, "head_dim": hf_rope.HEAD_DIM, "partial_rotary_factor": 0.25}
    report = pecheck.check(fn, "rope", partial, framework="torch", dtypes="f32", cases=CASES,
                           contract="fp32-angles", properties="rope.agrees_with_reference")
    assert report.results[0].verdict == "fail"
