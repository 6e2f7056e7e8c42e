"""check()'s arguments and result: wrong arguments are one-line ValueErrors naming the argument;
a correct encoder passes with every field of the result filled."""

import numpy as np
import pytest

import pecheck
from pecheck import _core

CONVENTION = {"rope_theta": 10000.0, "layout": "interleaved"}


@pytest.mark.parametrize(
    "kwargs, argument",
    [
        (dict(op="rotary"), "op"),
        (dict(dtypes=("f64",)), "dtypes"),
        (dict(dtypes=()), "dtypes"),
        (dict(cases=0), "cases"),
        (dict(cases=True), "cases"),
        (dict(seed=-1), "seed"),
        (dict(framework="tensorflow"), "framework"),
        (dict(properties=""), "properties"),
        (dict(properties="sinusoidal.*"), "properties"),
        (dict(timeout=0), "timeout"),
        (dict(max_position=0), "max_position"),
        (dict(convention="honours"), "convention"),
        (dict(convention=["rope_theta"]), "convention"),
        (dict(convention={"rope_thet": 10000.0}), "convention"),
        (dict(convention={"rope_scaling": {"rope_type": "yarn"}}), "convention"),
        (dict(convention={"rope_scaling": {"rope_type": "yarn", "factor": 4.0}, "head_dim": 64}), "convention"),
        (dict(contract="fp16-angles"), "contract"),
    ],
)
def test_a_wrong_argument_is_a_value_error_naming_it(good_rope, kwargs, argument):
    with pytest.raises(ValueError) as e:
        pecheck.check(good_rope, **{"op": "rope", **kwargs})
    message = str(e.value)
    assert message.startswith(argument + ":"), message
    assert "\n" not in message


def test_fn_must_be_callable():
    with pytest.raises(ValueError, match="^fn: not callable"):
        pecheck.check(42)


def test_a_correct_encoder_passes_with_every_field(good_rope):
    report = pecheck.check(good_rope, "rope", CONVENTION, dtypes=("f32", "bf16"), cases=30, seed=7)
    assert report.ok, report.summary()
    ran = [r for r in report.results if r.verdict == "pass"]
    assert {r.property for r in ran} >= {"rope.agrees_with_reference", "rope.relative", "rope.orthogonal",
                                         "rope.composition", "rope.inverse", "rope.offset_invariance"}
    for r in ran:
        assert r.cases == 30 and r.nontrivial_cases >= 27
        assert 0 <= r.max_error_u <= r.bound_u  # the parity properties' bound is 0: exact
        assert r.property_seed > 0 and r.doc.startswith("docs/properties/") and r.statement
    assert report.result("rope.agrees_with_reference").bound_u == 2
    # A pinned encoder cannot be checked by a property that changes the convention within a case.
    skip = report.result("rope.layout_conjugacy")
    assert skip.verdict == "skip" and "varies the convention" in skip.message


def test_the_same_seed_draws_the_same_cases(good_rope):
    a = pecheck.check(good_rope, "rope", CONVENTION, dtypes="f32", cases=20, seed=3, properties="rope.relative")
    b = pecheck.check(good_rope, "rope", CONVENTION, dtypes="f32", cases=20, seed=3, properties="rope.relative")
    assert a.results[0].max_error_u == b.results[0].max_error_u
    assert a.results[0].distribution == b.results[0].distribution


def test_an_opaque_encoder_gets_the_convention_free_properties_only(good_rope):
    report = pecheck.check(good_rope, "rope", None, dtypes="f32", cases=20)
    ran = {r.property for r in report.results if r.verdict != "skip"}
    free = {p["id"] for p in _core.catalogue() if p["op"] == "rope_apply" and p["convention_free"]}
    assert ran == free and free
    assert report.ok, report.summary()


def test_a_pinned_convention_is_the_one_checked(good_rope):
    # The function is interleaved at base 10000: pinned to half_split it must fail agreement.
    report = pecheck.check(good_rope, "rope", {"rope_theta": 10000.0}, dtypes="f32", cases=20,
                           properties="rope.agrees_with_reference")
    r = report.results[0]
    assert r.verdict == "fail" and "layout=half_split" in r.counterexample


def test_max_position_bounds_every_drawn_position(good_rope):
    seen = []

    def recording(x, positions):
        seen.append(int(np.abs(positions).max()))
        return good_rope(x, positions)

    # In this process (isolate=False), so that the recording is seen here.
    report = pecheck.check(recording, "rope", CONVENTION, dtypes="f32", cases=30, max_position=1000, isolate=False)
    assert report.ok, report.summary()
    assert seen and max(seen) <= 1000


def test_torch_tensors_in_and_out(good_rope):
    torch = pytest.importorskip("torch")

    def torch_rope(x, positions):
        assert isinstance(x, torch.Tensor) and isinstance(positions, torch.Tensor)
        return torch.from_numpy(good_rope(x.float().numpy(), positions.numpy())).to(x.dtype)

    report = pecheck.check(torch_rope, "rope", CONVENTION, framework="torch", cases=20)
    assert report.ok, report.summary()
    assert {r.dtype for r in report.results} == {"f32", "bf16", "f16"}


def test_in_place(good_rope):
    def in_place(x, positions):
        x[...] = good_rope(x, positions)

    assert pecheck.check(in_place, "rope", CONVENTION, dtypes="f32", cases=20, in_place=True).ok
    report = pecheck.check(in_place, "rope", CONVENTION, dtypes="f32", cases=5, properties="rope.relative")
    assert "returned None" in report.results[0].message


def test_catalogue_lists_every_operation():
    ops = {p["op"] for p in _core.catalogue()}
    assert ops == set(pecheck.OPERATIONS.values())
