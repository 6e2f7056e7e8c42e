"""The contract ladder (pecheck._contracts): with no contract asked for, check() finds per dtype the
strongest contract agreement meets, judges every law under it, and says where each stricter one
first failed; a named contract is the only one judged; a wrong convention meets none."""
import numpy as np
import pytest

import pecheck

INTERLEAVED = {"rope_theta": 10000.0, "layout": "interleaved"}


def fp32_angle_rope(x, positions, base=10000.0):
    """RoPE as PyTorch code writes it: frequencies and angles formed in float32."""
    d = x.shape[-1]
    inv = (1.0 / base ** (np.arange(0, d, 2, dtype=np.float32) / np.float32(d))).astype(np.float32)
    ang = positions.astype(np.float32)[:, None] * inv
    c, s = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
    a, b = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = a * c - b * s, a * s + b * c
    return out


def test_fp32_angles_meet_their_contract_and_say_where_exact_fails():
    report = pecheck.check(fp32_angle_rope, "rope", INTERLEAVED, dtypes="f32", cases=40)
    assert report.ok, report.summary()
    assert report.contract("f32") == "fp32-angles"
    verdict = report.contracts["f32"]
    assert verdict.asked is None and [m.contract for m in verdict.misses] == ["exact", "dtype-trig"]
    exact = verdict.misses[0]
    assert exact.property == "rope.agrees_with_reference" and exact.position is not None and exact.position > 0
    assert exact.error_u > exact.bound_u == 2
    assert "contract='exact'" in exact.replay
    # The laws comparing calls were judged, under fp32-angles and below its ceiling, not skipped.
    assert verdict.laws_below == 2 ** 19
    for law in ("rope.relative", "rope.composition", "rope.offset_invariance"):
        r = report.result(law)
        assert r.verdict == "pass" and r.nontrivial_cases >= 36 and r.bound_u > 8, (law, r)
    assert "f32: meets fp32-angles; exact fails at position" in report.summary()


def test_an_exact_encoder_meets_exact_with_nothing_missed(good_rope):
    report = pecheck.check(good_rope, "rope", INTERLEAVED, dtypes=("f32", "bf16"), cases=30)
    assert report.ok, report.summary()
    for dtype in ("f32", "bf16"):
        assert report.contract(dtype) == "exact" and not report.contracts[dtype].misses
        assert report.contracts[dtype].laws_below is None
    assert report.result("rope.relative").bound_u == pytest.approx(8, abs=0.1)


def test_a_named_contract_is_the_only_one_judged():
    report = pecheck.check(fp32_angle_rope, "rope", INTERLEAVED, dtypes="f32", cases=40, contract="exact")
    assert not report.ok
    verdict = report.contracts["f32"]
    assert verdict.asked == "exact" and verdict.met is None and [m.contract for m in verdict.misses] == ["exact"]
    assert "meets no named contract (tried exact)" in report.summary()
    # Its convention is the one stated, its arithmetic is not exact's: no convention is named.
    assert "fits" not in report.result("rope.agrees_with_reference").message


def test_a_wrong_convention_meets_no_contract(good_rope):
    report = pecheck.check(good_rope, "rope", {"rope_theta": 500000.0, "layout": "interleaved"}, dtypes="f32",
                           cases=30, properties="rope.agrees_with_reference")
    assert not report.ok
    assert report.contract("f32") is None
    assert [m.contract for m in report.contracts["f32"].misses] == list(pecheck.POSITION_CONTRACTS)
    assert report.result("rope.agrees_with_reference").verdict == "fail"
    # The failure names the convention fn does follow (dumpcheck/convention_hint.hpp).
    message = report.result("rope.agrees_with_reference").message
    assert "its output fits RoPE interleaved, rotary_dim 64 of 64, base 10000" in message, message
    assert "(called as rope(layout=interleaved,d=64,rot=64,base=500000))" in message, message


def test_an_opaque_encoder_has_no_contract_verdict(good_rope):
    report = pecheck.check(good_rope, "rope", None, dtypes="f32", cases=10, properties="rope.relative")
    assert report.contracts == {}
    with pytest.raises(KeyError):
        report.contract("f32")


def fp32_sinusoid(positions, d_model):
    """Vaswani's table with the angle formed in float32."""
    i = np.arange(0, d_model, 2, dtype=np.float32)
    inv = np.exp(i * np.float32(-np.log(10000.0) / d_model)).astype(np.float32)
    ang = positions.astype(np.float32)[:, None] * inv
    pe = np.empty((len(positions), d_model), dtype=np.float32)
    pe[:, 0::2], pe[:, 1::2] = np.sin(ang), np.cos(ang)
    return pe


def test_the_laws_comparing_rows_are_judged_under_the_contract_met():
    # Their bounds under a weaker contract add up each row's own (docs/error-model.md,
    # sinusoidal.relational.contract): a correct fp32-angle table passes them there.
    report = pecheck.check(fp32_sinusoid, "sinusoidal", {"base": 10000.0}, dtypes="f32", cases=30)
    assert report.contract("f32") in ("dtype-trig", "fp32-angles"), report.summary()
    for law in ("sinusoidal.shift_linearity", "sinusoidal.offset_inner_product", "sinusoidal.agrees_with_reference"):
        assert report.result(law).verdict == "pass", report.result(law).message


def test_an_agreement_that_crashes_ends_the_climb_and_every_law_reports_its_crash():
    import os
    import signal

    def dies(positions, d_model):  # SIGKILL, not abort(): pytest's faulthandler would print the child's stack
        os.kill(os.getpid(), signal.SIGKILL)

    report = pecheck.check(dies, "sinusoidal", {"base": 10000.0}, dtypes="f32", cases=5, timeout=60)
    assert not report.ok
    verdict = report.contracts["f32"]
    assert verdict.met is None and not verdict.misses and "crashed" in verdict.note, verdict
    # Not "not judged" skips: run as under exact, each law's own crash is its verdict.
    for law in ("sinusoidal.agrees_with_reference", "sinusoidal.shift_linearity", "sinusoidal.bounds"):
        assert report.result(law).verdict == "crash", (law, report.result(law))
