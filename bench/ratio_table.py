#!/usr/bin/env python3
"""Prints pecheck_bench's JSON (--benchmark_out) as one table: the median CPU time of each
benchmark, its rate, and the ratios that say how good a kernel is: time against the floor that
moves the same bytes, speedup over the scalar baseline, fraction of the measured FMA peak; and for
the rows over two threads (.../2threads, wall time), the same against two-thread floors and the
speedup over one thread.

Medians come from the run's median aggregates (--benchmark_repetitions=N); a run without them
(no repetitions) falls back to the median of its iterations entries. Whatever is missing,
skipped or filtered out prints as "-". Standard library only.

usage: bench/ratio_table.py build/bench.json
"""

import json
import re
import statistics
import sys

# The read-modify-write passes over RoPE's bytes, at the baseline width and the kernels' own
# (bench/rmw_kernel.hpp): a kernel is held against the fastest of them in the run, the cheapest
# code that moved those bytes there.
RMW_F32 = ("floor/rmw/f32", "floor/rmw/f32/avx2", "floor/rmw/f32/avx512")
RMW_BF16 = ("floor/rmw/bf16", "floor/rmw/bf16/avx2", "floor/rmw/bf16/avx512")
# (benchmark, floor it is held against (or the floors whose fastest it is), scalar baseline), in
# the order the table prints them.
KNOWN = [
    ("rope_inplace/f32/avx2", RMW_F32, "rope_inplace/f32/scalar"),
    ("rope_inplace/f32/avx512", RMW_F32, "rope_inplace/f32/scalar"),
    ("rope_inplace/f32/scalar", RMW_F32, None),
    ("floor/rmw/f32", None, None),
    ("floor/rmw/f32/avx2", None, None),
    ("floor/rmw/f32/avx512", None, None),
    ("rope_inplace/bf16/avx2", RMW_BF16, "rope_inplace/bf16/scalar"),
    ("rope_inplace/bf16/avx512", RMW_BF16, "rope_inplace/bf16/scalar"),
    ("rope_inplace/bf16/scalar", RMW_BF16, None),
    ("floor/rmw/bf16", None, None),
    ("floor/rmw/bf16/avx2", None, None),
    ("floor/rmw/bf16/avx512", None, None),
    ("sinusoidal_table/f32/avx2", "floor/memset", "sinusoidal_table/f32/scalar"),
    ("sinusoidal_table/f32/avx512", "floor/memset", "sinusoidal_table/f32/scalar"),
    ("sinusoidal_table/f32/scalar", "floor/memset", None),
    ("floor/memset", None, None),
    ("attention/f32/avx2", "floor/fma_peak/f32", "attention/f32/scalar"),
    ("attention/f32/avx512", "floor/fma_peak512/f32", "attention/f32/scalar"),
    ("attention/f32/scalar", "floor/fma_peak/f32", None),
    ("floor/fma_peak/f32", None, None),
    ("floor/fma_peak512/f32", None, None),
    ("rope_decode/f32/avx2", "floor/copy/decode_f32", None),
    ("rope_decode/f32/avx512", "floor/copy/decode_f32", None),
    ("floor/copy/decode_f32", None, None),
    ("rope_decode/bf16/avx2", "floor/copy/decode_bf16", None),
    ("rope_decode/bf16/avx512", "floor/copy/decode_bf16", None),
    ("floor/copy/decode_bf16", None, None),
]
# The scaling rows: the same calls split over two threads (impl/parallel.hpp), timed by the wall
# clock, held against the floors' own two-thread passes, and their speedup over the one-thread row.
TWO = "/2threads"
RMW_F32_2 = tuple(f + TWO for f in RMW_F32[1:])
RMW_BF16_2 = tuple(f + TWO for f in RMW_BF16[1:])
SCALING = [
    ("rope_inplace/f32/avx2" + TWO, RMW_F32_2),
    ("rope_inplace/f32/avx512" + TWO, RMW_F32_2),
    ("rope_inplace/bf16/avx2" + TWO, RMW_BF16_2),
    ("rope_inplace/bf16/avx512" + TWO, RMW_BF16_2),
    ("sinusoidal_table/f32/avx2" + TWO, "floor/memset" + TWO),
    ("sinusoidal_table/f32/avx512" + TWO, "floor/memset" + TWO),
    ("attention/f32/avx2" + TWO, "floor/fma_peak/f32" + TWO),
    ("attention/f32/avx512" + TWO, "floor/fma_peak512/f32" + TWO),
] + [(f, None) for f in RMW_F32_2 + RMW_BF16_2 + ("floor/memset" + TWO, "floor/fma_peak/f32" + TWO,
                                                  "floor/fma_peak512/f32" + TWO)]
KNOWN += [(name, floor, name[: -len(TWO)] if floor else None) for name, floor in SCALING]
GROUP_ENDS = {"floor/rmw/f32/avx512", "floor/rmw/bf16/avx512", "floor/memset", "floor/fma_peak512/f32",
              "floor/copy/decode_f32", "floor/copy/decode_bf16", "attention/f32/avx512" + TWO}
SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
# Suffixes Google Benchmark appends to a name (UseRealTime, Iterations, MinTime, ...).
SUFFIX = re.compile(r"(/(real_time|manual_time|iterations:\d+|min_time:[\d.]+|repeats:\d+|threads:\d+))+$")


class Result:
    """One benchmark: median seconds per iteration, rates per second, or why it was skipped."""

    def __init__(self):
        self.seconds = None
        self.real_seconds = None
        self.bytes_per_second = None
        self.flops = None
        self.skipped = None


def base_name(entry):
    return SUFFIX.sub("", entry.get("run_name", entry["name"]))


def load(path):
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    medians, iterations, results = {}, {}, {}
    context = dict(data.get("context", {}))
    for e in data.get("benchmarks", []):
        name = base_name(e)
        results.setdefault(name, Result())
        if e.get("error_occurred"):
            results[name].skipped = e.get("error_message", "skipped")
        elif e.get("run_type") == "aggregate":
            if e.get("aggregate_name") == "median":
                medians[name] = e
                context["repetitions"] = max(context.get("repetitions", 0), e.get("repetitions", 0))
        else:
            iterations.setdefault(name, []).append(e)
    for name, r in results.items():
        if r.skipped:
            continue
        runs = [medians[name]] if name in medians else iterations.get(name, [])
        if not runs:
            continue

        def median_of(key, runs=runs):
            values = [run[key] for run in runs if key in run]
            return statistics.median(values) if values else None

        unit = SECONDS[runs[0].get("time_unit", "ns")]
        # A row over several threads counts wall time: the main thread's CPU time is its own share.
        r.real_seconds = median_of("real_time") * unit
        r.seconds = r.real_seconds if name.endswith(TWO) else median_of("cpu_time") * unit
        r.bytes_per_second = median_of("bytes_per_second")
        r.flops = median_of("FLOP/s")
    return context, results


def fmt_time(s):
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if s >= scale:
            return f"{s / scale:.4g} {unit}"
    return f"{s / 1e-9:.4g} ns"


def fmt_rate(r):
    if r.flops is not None:
        return f"{r.flops / 1e9:.4g} GFLOP/s"
    if r.bytes_per_second is not None:
        return f"{r.bytes_per_second / 1e9:.4g} GB/s"
    return "-"


# A kernel may not beat the floor it is held against by more than this: the floor moves the
# same bytes by the cheapest code there is, so a kernel 10% faster says the floor was slowed on
# this run (other load, a frequency drop, a transition penalty), and every ratio against it lies.
BEATS_FLOOR = 0.10


def gbs(r):
    return f"{r.bytes_per_second / 1e9:.4g} GB/s" if r.bytes_per_second is not None else "? GB/s"


def vs_floor(results, name, floor, refused):
    """Time ratio to a byte floor (same bytes counted, so also the inverse rate ratio), with both
    sides' GB/s, or the fraction of the FMA peak reached by a FLOP/s benchmark. A ratio whose
    kernel beats its floor by more than BEATS_FLOOR is not printed: the reason is, and `refused`
    gets it."""
    if floor is None:
        return ""
    if isinstance(floor, tuple):  # the fastest of the candidates measured
        timed = [c for c in floor if results.get(c) is not None and results[c].seconds is not None]
        if not timed:
            return "-"
        floor = min(timed, key=lambda c: results[c].seconds)
    r, f = results.get(name), results.get(floor)
    if floor.startswith("floor/fma_peak"):
        if r is None or f is None or r.flops is None or f.flops is None:
            return "-"
        share = r.flops / f.flops
        if share > 1 + BEATS_FLOOR:
            refused.append(f"{name}: {r.flops / 1e9:.4g} GFLOP/s is {share:.3g}x its peak {floor} "
                           f"({f.flops / 1e9:.4g} GFLOP/s): the peak was not reached on this run")
            return f"refused: {share:.3g}x the peak (see below)"
        return f"{share:.3g} of {floor}"
    if r is None or f is None or r.seconds is None or f.seconds is None:
        return "-"
    ratio = r.seconds / f.seconds
    if ratio < 1 - BEATS_FLOOR:
        refused.append(f"{name} ({gbs(r)}) beats {floor} ({gbs(f)}) by {1 - ratio:.0%}: the floor moves the same "
                       f"bytes by the cheapest code, so it was slowed on this run; time it alone "
                       f"(--benchmark_filter='^{floor}$') and compare")
        return f"refused: {ratio:.3g}x {floor} (see below)"
    return f"{ratio:.3g}x {floor} ({gbs(r)} vs {gbs(f)})"


def vs_scalar(results, name, scalar):
    """Speedup over the scalar baseline, or, for a two-thread row, over the same call on one thread
    (both by the wall clock: a one-thread row's CPU time is its wall time but for other load)."""
    if scalar is None:
        return ""
    r, s = results.get(name), results.get(scalar)
    if r is None or s is None or r.seconds is None or s.seconds is None:
        return "-"
    if name.endswith(TWO):
        return f"{s.real_seconds / r.real_seconds:.3g}x over 1 thread"
    return f"{s.seconds / r.seconds:.3g}x"


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    try:
        context, results = load(argv[1])
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"ratio_table.py: cannot read {argv[1]}: {e}", file=sys.stderr)
        return 2

    known = {name for name, _, _ in KNOWN}
    rows, gap, refused = [], False, []
    for name, floor, scalar in KNOWN + [(n, None, None) for n in results if n not in known]:
        if name in results:
            if gap and rows:
                rows.append(None)
            r = results[name]
            rate = fmt_rate(r) if r.seconds is not None else "-"
            time = fmt_time(r.seconds) if r.seconds is not None else "-"
            note = f"skipped: {r.skipped}" if r.skipped else ""
            rows.append((name, time, rate, vs_floor(results, name, floor, refused), vs_scalar(results, name, scalar), note))
            gap = False
        gap = gap or name in GROUP_ENDS

    print(
        f"pecheck_bench {context.get('date', '')} on {context.get('host_name', '?')}: "
        f"{context.get('num_cpus', '?')} CPUs at {context.get('mhz_per_cpu', '?')} MHz, "
        f"median CPU time per iteration of {context.get('repetitions', 1)} repetition(s)"
    )
    # bench/cpu_context.cpp names the CPU: figures from different cores must not be confused.
    print(
        f"CPU: {context.get('cpu_model', 'not recorded')} ({context.get('cpu_family', '?')}); "
        f"kernels use {context.get('kernel_isa', '?')}; AVX-512F {context.get('cpu_avx512f', '?')}; "
        f"avx512 kernels: {context.get('avx512_kernels', 'not recorded')}"
    )
    header = ("benchmark", "median", "rate", "vs floor", "speedup vs scalar (or 1 thread)", "")
    widths = [max(len(str(row[i])) for row in [header] + [r for r in rows if r]) for i in range(6)]
    aligns = ["<", ">", ">", "<", ">", "<"]

    def line(row):
        return "  ".join(f"{c:{a}{w}}" for c, a, w in zip(row, aligns, widths)).rstrip()

    print(line(header))
    for row in rows:
        print(line(row) if row else "")
    if not rows:
        print("(no benchmarks in the file)")
    for why in refused:
        print(f"refused: {why}")
    print("vs floor: time / floor time (both count the same bytes; the kernel's GB/s vs the floor's), or")
    print(f"FLOP/s / peak FLOP/s; a ratio below {1 - BEATS_FLOOR:.2g}x (or above {1 + BEATS_FLOOR:.2g} of a peak) is refused;")
    print('GB/s: 1e9 bytes/s (the console\'s G/s is 2^30); "-": not measured (skipped or filtered out)')
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
