"""Each property x dtype runs in a child forked from this interpreter (CPython's fork protocol,
PyOS_BeforeFork/AfterFork): a segfault, an abort or a hang inside the function is a result that
names the case, never a dead pytest. torch's thread pools after fork() are exercised here."""
import ctypes
import os
import time

import pytest

import pecheck
from conftest import numpy_rope

CONVENTION = {"rope_theta": 10000.0, "layout": "interleaved"}


def segfaults(x, positions):
    if len(positions) == 3:  # rope.agrees_with_reference calls with three tokens, rope.relative with one
        ctypes.string_at(0)  # a broken extension: reads address 0
    return numpy_rope(x, positions)


def aborts(x, positions):
    os.abort()


def hangs(x, positions):
    time.sleep(3600)


@pytest.mark.parametrize("fn, why", [(segfaults, "signal 11"), (aborts, "signal 6"), (hangs, "hung")])
def test_a_crash_is_a_result_naming_the_case(fn, why):
    report = pecheck.check(fn, "rope", CONVENTION, dtypes="f32", cases=20, timeout=5,
                           properties="rope.agrees_with_reference")
    (r,) = report.results
    assert r.verdict == "crash", r
    assert why in r.message, r.message
    assert r.counterexample.startswith("rope("), r.counterexample  # the case it died on
    assert r.replay


def test_the_run_goes_on_after_a_crash():
    report = pecheck.check(segfaults, "rope", CONVENTION, dtypes="f32", cases=20)
    verdicts = {r.property: r.verdict for r in report.results}
    assert verdicts["rope.agrees_with_reference"] == "crash"
    assert verdicts["rope.relative"] == "pass"  # the next property ran, in a fresh child


def test_torch_thread_pools_survive_fork():
    torch = pytest.importorskip("torch")
    torch.set_num_threads(2)
    big = torch.rand(512, 512)
    (big @ big).sum()  # the parent's intra-op pool is up before the fork

    def torch_rope(x, positions):
        m = torch.rand(256, 256)
        (m @ m).sum()  # intra-op parallel work in the child
        return torch.from_numpy(numpy_rope(x.float().numpy(), positions.numpy())).to(x.dtype)

    report = pecheck.check(torch_rope, "rope", CONVENTION, framework="torch", dtypes="f32", cases=10, timeout=60)
    assert report.ok, report.summary()
    assert all(r.verdict in ("pass", "skip") for r in report.results)
