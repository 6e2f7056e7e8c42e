"""transformers' RoPE for every rope_type, checked through pecheck.check with the convention in
HF's words. In fp32 HF forms its angles in fp32 (inv_freq @ position_ids.float()): agreement holds
under the fp32-angles contract and fails the exact one; the laws that compare calls with each
other (rope.relative, rope.composition) are reported, not asserted (docs/python.md)."""
import pytest

pytest.importorskip("transformers")

import pecheck  # noqa: E402
import hf_rope  # noqa: E402

CASES = 40
TYPES = hf_rope.every_rope_type()


@pytest.mark.parametrize("name, fn, convention, max_position", TYPES, ids=[t[0] for t in TYPES])
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
    report = pecheck.check(fn, "rope", convention, framework="torch", dtypes="f32", cases=CASES,
                           properties="rope.agrees_with_reference")
    (r,) = report.results
    assert r.verdict == "fail" and r.counterexample_error_u > 2


def test_a_wrong_convention_fails_even_the_weakest_contract():
    fn, convention = hf_rope.llama(10000.0)
    report = pecheck.check(fn, "rope", dict(convention, rope_theta=500000.0), framework="torch", dtypes="f32",
                           cases=CASES, contract="fp32-angles", properties="rope.agrees_with_reference")
    (r,) = report.results
    assert r.verdict == "fail"


def test_yarn_with_the_l0_hf_does_not_use_fails():
    # transformers 4.49 ignores rope_scaling's original_max_position_embeddings for YaRN and uses
    # config.max_position_embeddings (8192): a statement of 2048 is not what it computes.
    fn, convention = hf_rope.llama(10000.0, {"rope_type": "yarn", "factor": 4.0,
                                             "original_max_position_embeddings": 2048})
    report = pecheck.check(fn, "rope", convention, framework="torch", dtypes="f32", cases=CASES,
                           contract="fp32-angles", properties="rope.agrees_with_reference")
    assert report.results[0].verdict == "fail"


def test_dynamic_is_checked_opaque():
    report = pecheck.check(hf_rope.dynamic(), "rope", None, framework="torch", dtypes="f32", cases=CASES)
    assert {r.property for r in report.results if r.verdict != "skip"} == {
        "rope.relative", "rope.offset_invariance", "rope.stateless"}
