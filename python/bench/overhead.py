"""Benchmark, not a test: what pecheck.check costs beyond the checked function itself, measured
in one run on the seed's apply_rope (examples/python/seed_adapters.py, torch).

  1. the default check (every applicable RoPE property, 100 cases each, f32 + bf16 + f16), timed;
  2. per call, in the f32 check's own calls: the time inside the function, beside the rest of
     pecheck in this process (wrapping, copying, drawing cases, the reference, the measurement)
     and beside isolation (the same check with isolate=True minus isolate=False);
  3. wrapping and copying alone (C++ marshalling, the Python invoker, the copy back:
     _core.time_rope_calls, positions 0 1 2), beside the function on the same call.

    python python/bench/overhead.py        # a venv with pecheck and torch (scripts/python-test's)

Prints the CPU it ran on beside every figure (these machines differ a lot)."""
import os
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "examples", "python"))

import torch  # noqa: E402

import pecheck  # noqa: E402
from pecheck import _core  # noqa: E402
from pecheck._invoke import Invoker  # noqa: E402
import seed_adapters  # noqa: E402
from cpu_name import cpu  # noqa: E402

CONVENTION = {"rope_theta": 10000.0, "layout": "interleaved"}
MAX_POSITION = 8191  # the seed builds arange(seq_len): positions beyond cost it a table that long


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

    print("\nthe f32 check (every applicable property, 100 cases), per call of the function:")
    timings = {}
    for isolate in (False, True):
        timed = Timed(seed_adapters.seed_apply_rope)
        start = time.perf_counter()
        pecheck.check(timed, "rope", CONVENTION, framework="torch", dtypes="f32", max_position=MAX_POSITION,
                      isolate=isolate)
        timings[isolate] = (time.perf_counter() - start, timed.calls, timed.inside)
    wall_in, calls, inside = timings[False]  # the children's counts do not come back: same seed, same calls
    wall_iso = timings[True][0]
    forks = sum(r.verdict != "skip" for r in report.results if r.dtype == "f32")
    fn_us, rest_us = inside / calls * 1e6, (wall_in - inside) / calls * 1e6
    iso_us = (wall_iso - wall_in) / calls * 1e6
    print(f"  {calls} calls; inside fn {fn_us:.0f} us; rest of pecheck in process {rest_us:.0f} us; isolation "
          f"{iso_us:.0f} us ({forks} forks, {(wall_iso - wall_in) / forks * 1e3:.0f} ms each)")
    # The isolated run's difference is within the noise at this scale; a fork's own cost is not.
    start = time.perf_counter()
    for _ in range(20):
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
    fork_ms = (time.perf_counter() - start) / 20 * 1e3
    fork_us = fork_ms * 1e3 * forks / calls
    print(f"  a fork + exit + wait of this process: {fork_ms:.1f} ms, {fork_us:.0f} us per call over {forks} forks")
    print(f"  pecheck's overhead / time inside fn: {(rest_us + max(iso_us, fork_us)) / fn_us:.2f} "
          f"(rest + the larger of the two isolation figures)")

    print("\nwrapping and copying alone, per call of (3 tokens, 2 heads, head_dim 64), 2000 calls:")
    print(f"{'dtype':6} {'inside fn':>12} {'wrap+copy':>12} {'ratio':>7}")
    for dtype in ("f32", "bf16", "f16"):
        timed = Timed(seed_adapters.seed_apply_rope)
        total = _core.time_rope_calls(Invoker(timed, "torch", False), dtype, 3, 2, 64, 2000)
        inside = timed.inside / timed.calls
        wrap = (total - timed.inside) / timed.calls
        print(f"{dtype:6} {inside * 1e6:9.1f} us {wrap * 1e6:9.1f} us {wrap / inside:7.2f}")


if __name__ == "__main__":
    main()
