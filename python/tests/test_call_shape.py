"""A function whose parameters do not match pecheck's call is the caller's error, named in one line
before any verdict (issue 33, item 3): a required parameter the call never fills, a mistyped
keyword; a keyword the function has no parameter for only declines the cases that pass it."""
import pytest

import pecheck


def test_a_required_parameter_the_call_never_fills_is_one_error_naming_it():
    def attention(q, k, v, positions, causal, spec, shaw_table):  # Shaw's table required: most cases have none
        return q

    with pytest.raises(ValueError) as e:
        pecheck.check(attention, "attention", "spec", dtypes="f32", cases=5)
    text = str(e.value)
    assert len(text.splitlines()) == 1, text
    assert text.startswith("fn: ") and ".attention cannot be called as pecheck calls it: " in text
    assert "pecheck calls attention as fn(q, k, v, positions, causal, spec)" in text
    assert "it requires 'shaw_table'" in text


def test_a_mistyped_keyword_names_both_spellings(good_rope):
    def rope(x, posiitons):
        return good_rope(x, posiitons)

    with pytest.raises(ValueError, match=r"it requires 'posiitons'.*; it takes no 'positions'"):
        pecheck.check(rope, "rope", {"rope_theta": 10000.0, "layout": "interleaved"}, dtypes="f32", cases=5)


def test_optional_and_catch_all_parameters_are_fine(good_rope):
    def rope(x, positions, scale=1.0, **unused):
        return good_rope(x, positions) * scale

    report = pecheck.check(rope, "rope", {"rope_theta": 10000.0, "layout": "interleaved"}, dtypes="f32", cases=10)
    assert report.ok, report.summary()


def test_a_keyword_the_function_has_no_parameter_for_declines_and_says_so():
    def rope(x):  # no positions: no call can be made, so every case is declined with the reason
        return x

    report = pecheck.check(rope, "rope", None, dtypes="f32", cases=5)
    assert report.vacuous and not report.ok
    called = [r for r in report.results if "declined the case" in r.message]
    assert called and all("it takes no 'positions'" in r.message for r in called), report.summary()
