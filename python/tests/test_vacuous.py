"""No vacuous verdict: a check where every property was skipped judged nothing, so it is not ok,
its summary says so, and assert_holds raises (issue 33, item 3)."""
import pytest

import pecheck


def declines(x, positions):
    raise pecheck.Unsupported("declines every case")


def test_a_check_where_everything_was_skipped_is_not_ok():
    report = pecheck.check(declines, "rope", None, dtypes="f32", cases=5)
    assert report.results and all(r.verdict == "skip" for r in report.results)
    assert report.vacuous and not report.ok
    assert "nothing was judged: all" in report.summary() and "declines every case" in report.summary()


def test_assert_holds_raises_on_a_vacuous_report():
    with pytest.raises(AssertionError, match="nothing of .* was judged: all .* checks were skipped"):
        pecheck.assert_holds(declines, "rope", None, dtypes="f32", cases=5)


def test_an_opaque_attention_whose_every_property_is_skipped_is_not_ok():
    def returns_q(q, k, v, positions, causal):
        return q

    # Opaque attention: every attention law needs a stated convention or declines (the SDPA
    # case, ok=True before).
    report = pecheck.check(returns_q, "attention", None, dtypes="f32", cases=5)
    assert report.vacuous and not report.ok, report.summary()


def test_a_report_that_judged_something_is_not_vacuous(good_rope):
    report = pecheck.check(good_rope, "rope", {"rope_theta": 10000.0, "layout": "interleaved"}, dtypes="f32",
                           cases=10)
    assert not report.vacuous and report.ok, report.summary()
