"""A NumPy RoPE and a JAX one through pecheck.check: the float64-angle versions hold every
applicable property in every dtype; the float32-angle one fails agreement and passes under the
fp32-angles contract. JAX is skipped, with the reason, where it does not import."""
import pytest

import pecheck
import array_ropes

HF_DEFAULT = {"rope_theta": 10000.0}  # half_split, HF's rotate_half


def test_numpy_rope_holds_everything():
    report = pecheck.check(array_ropes.numpy_rope, "rope", HF_DEFAULT, cases=60)
    assert report.ok, report.summary()
    assert sum(r.verdict == "pass" for r in report.results) == 3 * 9  # 9 pinnable properties x 3 dtypes


def test_numpy_fp32_angles_meet_only_their_contract():
    fn = array_ropes.numpy_rope_fp32_angles
    exact = pecheck.check(fn, "rope", HF_DEFAULT, dtypes="f32", cases=60, contract="exact",
                          properties="rope.agrees_with_reference")
    assert exact.results[0].verdict == "fail"
    weak = pecheck.check(fn, "rope", HF_DEFAULT, dtypes="f32", cases=60, contract="fp32-angles",
                         properties="rope.agrees_with_reference")
    assert weak.ok, weak.summary()


def test_jax_rope():
    jax = pytest.importorskip("jax", reason="jax is not installed here (scripts/py-venv installs it)")
    jax.config.update("jax_enable_x64", True)
    # JAX compiles each operation for each new shape, in each forked child: few cases, two laws.
    for law in ("rope.agrees_with_reference", "rope.relative"):
        report = pecheck.check(array_ropes.jax_rope, "rope", HF_DEFAULT, dtypes="f32", cases=15, properties=law)
        assert report.ok and report.results[0].verdict == "pass", report.summary()
