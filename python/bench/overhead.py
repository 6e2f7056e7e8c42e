"""Benchmark, not a test: what pecheck.check costs beyond the checked function itself, measured
in one run on the seed's apply_rope (examples/python/seed_adapters.py, torch).

  1. the default check (every applicable RoPE property, 100 cases each, f32 + bf16 + f16), timed;
  2. per call: the time inside the function, beside pecheck's wrapping and copying (its C++
     marshalling, the Python invoker and the copy back: _core.time_rope_calls on the same shapes);
  3. isolation: the same check with isolate=True and isolate=False, the difference per call.

    python python/bench/overhead.py        # a venv with pecheck and torch (scripts/python-test's)

Prints the CPU it ran on beside every figure (these machines differ a lot)."""
import os
import platform
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "examples", "python"))

import torch  # noqa: E402

import pecheck  # noqa: E402
from pecheck import _core  # noqa: E402
from pecheck._invoke import Invoker  # noqa: E402
import seed_adapters  # noqa: E402

CONVENTION = {"rope_theta": 10000.0, "layout": "interleaved"}
MAX_POSITION = 8191  # the seed builds arange(seq_len): positions beyond cost it a table that long


def cpu():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


class Timed:
    """fn, counting its calls and the time spent inside it (in this process only)."""

    def __init__(self, fn):
        self.fn, self.calls, self.inside = fn, 0, 0.0
        self.__qualname__ = fn.__name__

    def __call__(self, *args, **kwargs):
        start = time.perf_counter()
        try:
            return self.fn(*args, **kwargs)
        finally:
            self.inside += time.perf_counter() - start
            self.calls += 1


def main():
    torch.set_num_threads(1)  # as in check()'s children: the comparison is like for like
    print(f"CPU: {cpu()}; torch {torch.__version__}, threads 1")

    start = time.perf_counter()
    report = pecheck.check(seed_adapters.seed_apply_rope, "rope", CONVENTION, framework="torch",
                           max_position=MAX_POSITION)
    default_s = time.perf_counter() - start
    ran = sum(r.verdict != "skip" for r in report.results)
    print(f"default check of the seed's apply_rope: {default_s:.1f} s ({ran} property x dtype runs, 100 cases)")

    print("\nper call, (3 tokens, 2 heads, head_dim 64), 2000 calls:")
    print(f"{'dtype':6} {'inside fn':>12} {'pecheck wrap+copy':>18} {'ratio':>7}")
    for dtype in ("f32", "bf16", "f16"):
        timed = Timed(seed_adapters.seed_apply_rope)
        total = _core.time_rope_calls(Invoker(timed, "rope_apply", "torch", False), dtype, 3, 2, 64, 2000)
        inside = timed.inside / timed.calls
        wrap = (total - timed.inside) / timed.calls
        print(f"{dtype:6} {inside * 1e6:10.1f} us {wrap * 1e6:16.1f} us {wrap / inside:7.2f}")

    print("\nisolation (f32, every applicable property, 100 cases):")
    timings = {}
    for isolate in (False, True):
        timed = Timed(seed_adapters.seed_apply_rope)
        start = time.perf_counter()
        pecheck.check(timed, "rope", CONVENTION, framework="torch", dtypes="f32", max_position=MAX_POSITION,
                      isolate=isolate)
        timings[isolate] = (time.perf_counter() - start, timed.calls, timed.inside)
    wall_in, calls, inside = timings[False]
    wall_iso = timings[True][0]
    runs = sum(r.verdict != "skip" for r in report.results if r.dtype == "f32")
    per_call = (wall_iso - wall_in) / calls
    print(f"  in process {wall_in:.2f} s, {calls} calls, {inside:.2f} s inside fn ({inside / calls * 1e6:.1f} us/call)")
    print(f"  isolated   {wall_iso:.2f} s: {runs} forks, {(wall_iso - wall_in) / runs * 1e3:.1f} ms each, "
          f"{per_call * 1e6:.1f} us per call ({per_call / (inside / calls):.2f} of the time inside fn)")


if __name__ == "__main__":
    main()
