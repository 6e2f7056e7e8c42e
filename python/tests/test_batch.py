"""check(batch=): a function with a leading batch axis is sent many cases a call (issue 38, item 4).
Each property's cases run in passes over the same draws, the calls a pass defers answered together
(harness/runner.cpp's run_settled, pecheck/_invoke.py's BatchSession): the report is the one the
same function gets call by call, row for row, in far fewer calls; a batch's rows stay apart (a
function that mixes them fails); an exception is the answer of the case that caused it only."""
import numpy as np
import pytest

import pecheck

INTERLEAVED = {"rope_theta": 10000.0, "layout": "interleaved"}


def batched_rope(x, positions, offset=0):
    """RoPE done right over a batch axis: x (B, tokens, heads, head_dim), positions (B, tokens)."""
    d = x.shape[-1]
    inv_freq = 10000.0 ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    angles = (positions + offset).astype(np.float64)[..., None] * inv_freq  # (B, tokens, d/2)
    cos, sin = np.cos(angles)[..., None, :], np.sin(angles)[..., None, :]
    x64 = x.astype(np.float64)
    a, b = x64[..., 0::2], x64[..., 1::2]
    out = np.empty_like(x64)
    out[..., 0::2], out[..., 1::2] = a * cos - b * sin, a * sin + b * cos
    return out.astype(x.dtype)


class Counted:
    """fn, counting its calls and the cases they carried (isolate=False: in this process)."""

    def __init__(self, fn, batched):
        self.fn, self.batched, self.calls, self.cases = fn, batched, 0, 0
        self.__qualname__ = fn.__name__

    def __call__(self, x, positions):
        self.calls += 1
        self.cases += x.shape[0] if self.batched else 1
        if self.batched:
            return self.fn(x, positions)
        return self.fn(x[None], positions[None])[0]


def rows(report):
    return [(r.property, r.dtype, r.verdict, r.cases, r.nontrivial_cases, r.max_error_u, r.bound_u,
             r.counterexample, r.message) for r in report.results]


def both(fn, convention=INTERLEAVED, **kwargs):
    """The same fn checked call by call and batched: (reports, counters)."""
    direct, batched = Counted(fn, False), Counted(fn, True)
    one = pecheck.check(direct, "rope", convention, isolate=False, **kwargs)
    many = pecheck.check(batched, "rope", convention, isolate=False, batch=64, **kwargs)
    return (one, many), (direct, batched)


def test_a_batched_rope_gets_the_report_it_gets_call_by_call_in_far_fewer_calls():
    (one, many), (direct, batched) = both(batched_rope, dtypes=("f32", "bf16"), cases=40)
    assert one.ok and many.ok, many.summary()
    assert rows(many) == rows(one)
    assert {d: v.met for d, v in many.contracts.items()} == {d: v.met for d, v in one.contracts.items()}
    # Every case is still sent (a few more: placeholders a later pass replaced), in a fraction of the calls.
    assert batched.cases >= direct.calls
    assert batched.calls * 5 < direct.calls, (batched.calls, direct.calls)


def test_a_batched_mutant_fails_where_it_fails_call_by_call_with_the_same_counterexample():
    def off_by_one(x, positions):
        return batched_rope(x, positions, offset=1)

    (one, many), _ = both(off_by_one, dtypes="f32", cases=30)
    assert not one.ok and rows(many) == rows(one)
    failed = [r for r in many.results if r.verdict == "fail"]
    assert any(r.property == "rope.agrees_with_reference" for r in failed), many.summary()
    assert all("batch=64" in r.replay for r in failed)


def test_the_rows_of_a_batched_call_stay_apart():
    def first_row_positions(x, positions):  # a batching bug: every row turned by the first row's positions
        return batched_rope(x, np.broadcast_to(positions[:1], positions.shape))

    report = pecheck.check(first_row_positions, "rope", INTERLEAVED, dtypes="f32", cases=30, batch=64,
                           properties="rope.agrees_with_reference", isolate=False)
    assert report.result("rope.agrees_with_reference").verdict == "fail", report.summary()


def test_an_exception_is_the_answer_of_its_own_case_only():
    def learned(x, table, positions, spec):  # nn.Embedding's refusal: IndexError past the table
        if (positions < 0).any() or (positions >= table.shape[-2]).any():
            raise IndexError("index out of range in self")
        rows = np.take_along_axis(table, positions[..., None].astype(np.int64), axis=-2)
        return (x.astype(np.float64) + rows).astype(np.float32)

    def one_at_a_time(x, table, positions, spec):
        return learned(x[None], table[None], positions[None], spec)[0]

    one_at_a_time.__qualname__ = learned.__qualname__  # one name in both reports' messages

    one = pecheck.check(one_at_a_time, "learned", "spec", dtypes="f32", cases=30, isolate=False,
                        properties="learned.*")
    many = pecheck.check(learned, "learned", "spec", dtypes="f32", cases=30, isolate=False, batch=64,
                         properties="learned.*")
    assert rows(many) == rows(one)
    assert any(r.verdict == "pass" for r in many.results), many.summary()


def test_a_group_declined_is_a_skip_as_call_by_call():
    def f32_only(x, positions, dtype):
        if dtype != np.float32:
            raise pecheck.Unsupported("float32 only")
        return batched_rope(x, positions)

    report = pecheck.check(f32_only, "rope", INTERLEAVED, dtypes=("f32", "bf16"), cases=20, batch=64,
                           properties="rope.orthogonal", isolate=False)
    assert report.result("rope.orthogonal", "f32").verdict == "pass"
    bf16 = report.result("rope.orthogonal", "bf16")
    assert bf16.verdict == "skip" and "float32 only" in bf16.message


def test_torch_in_place_under_isolation():
    torch = pytest.importorskip("torch")

    def rope_(x, positions):
        x.copy_(torch.from_numpy(batched_rope(x.float().numpy(), positions.numpy())).to(x.dtype))

    report = pecheck.check(rope_, "rope", INTERLEAVED, framework="torch", in_place=True, dtypes=("f32", "bf16"),
                           cases=20, batch=64, properties="rope.[ai]*")
    assert report.ok, report.summary()
    assert report.result("rope.inverse", "bf16").nontrivial_cases >= 18


@pytest.mark.parametrize("batch", [0, -1, True, 2.5, "64"])
def test_a_batch_that_is_not_a_positive_integer_is_refused(batch):
    with pytest.raises(ValueError, match="batch"):
        pecheck.check(batched_rope, "rope", INTERLEAVED, batch=batch)


def test_batch_is_refused_with_a_cos_sin_form_and_with_dynamic_ntk():
    with pytest.raises(ValueError, match="batch: not with cos_sin"):
        pecheck.check(batched_rope, "rope", INTERLEAVED, batch=8, cos_sin="half", max_position=64)
    dynamic = {"rope_theta": 10000.0, "head_dim": 64,
               "rope_scaling": {"rope_type": "dynamic", "factor": 4.0, "original_max_position_embeddings": 256}}
    with pytest.raises(ValueError, match="rope_type 'dynamic'"):
        pecheck.check(batched_rope, "rope", dynamic, batch=8, isolate=False)
