"""A function that returns the wrong thing, raises, or returns NaN fails its case with a one-line
reason (the Python exception's last line); pecheck itself never crashes."""
import numpy as np
import pytest

import pecheck

CONVENTION = {"rope_theta": 10000.0, "layout": "interleaved"}


def wrong_shape(x, positions):
    return x[:, :, :-1]


def wrong_dtype(x, positions):
    return np.ones(x.shape, dtype=np.int32)


def not_an_array(x, positions):
    return x.tolist()


def raises(x, positions):
    raise RuntimeError("CUDA error: an illegal memory access was encountered")


def all_nan(x, positions):
    return np.full_like(x, np.nan)


def returns_none(x, positions):
    return None


@pytest.mark.parametrize(
    "fn, reason",
    [
        (wrong_shape, "ValueError: the output has shape"),
        (wrong_dtype, "TypeError: the output has dtype int32, not a floating dtype"),
        (not_an_array, "TypeError: the output is a list, not a numpy.ndarray"),
        (raises, "RuntimeError: CUDA error: an illegal memory access was encountered"),
        (returns_none, "TypeError: the function returned None"),
        (all_nan, "NaN"),
    ],
)
@pytest.mark.parametrize("isolate", [True, False])
def test_a_bad_output_fails_the_case_with_its_reason(fn, reason, isolate):
    report = pecheck.check(fn, "rope", CONVENTION, dtypes="f32", cases=10, isolate=isolate,
                           properties="rope.agrees_with_reference")
    (r,) = report.results
    assert r.verdict == "fail", r
    assert reason in r.message, r.message
    assert "\n" not in r.message
    assert r.counterexample.startswith("rope(")  # the case that showed it, shrunk
    assert "pecheck.check(" in r.replay


def test_torch_wrong_type():
    torch = pytest.importorskip("torch")

    def returns_numpy(x, positions):
        return x.numpy()

    report = pecheck.check(returns_numpy, "rope", CONVENTION, framework="torch", dtypes="f32", cases=5,
                           properties="rope.relative")
    assert "TypeError: the output is a ndarray, not a torch.Tensor" in report.results[0].message


def test_unsupported_declines_instead_of_failing():
    def f32_only(x, positions):
        raise pecheck.Unsupported("fp32 only")

    report = pecheck.check(f32_only, "rope", CONVENTION, dtypes="bf16", cases=10, properties="rope.relative")
    (r,) = report.results
    assert r.verdict == "skip" and "fp32 only" in r.message
