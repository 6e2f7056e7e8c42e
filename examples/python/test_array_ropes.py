"""A NumPy RoPE through pecheck.check: the float64-angle version holds every applicable property in
every dtype; the float32-angle one fails agreement and passes under the fp32-angles contract. (A
JAX one goes through framework="jax": python/tests/test_jax.py.)"""

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
