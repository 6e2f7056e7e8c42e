"""python -m pecheck.zoo [--arch A,B] [--variant V,W] [--cases N] [--seed S] [--no-ladder]
                        [--markdown docs/model-zoo.md] [--json rows.json]
       python -m pecheck.zoo --from-json rows.json --markdown docs/model-zoo.md

Sweeps the installed transformers: every architecture's positional code built from its config class
and checked with pecheck.check under the convention its config states (docs/model-zoo.md)."""
import argparse
import json
import os
import sys
import time
from dataclasses import asdict

from . import judge, sweep, table
from .subject import Skip


def _cpu():
    """The CPU the sweep's time was measured on (a time means nothing without it), as lscpu names it."""
    try:
        import subprocess

        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
        info = {k.strip(): v.strip() for k, v in (line.split(":", 1) for line in out.splitlines() if ":" in line)}
        return (f"{info['Model name']} (CPU family {info['CPU family']}, model {info['Model']}), "
                f"{info['CPU(s)']} CPUs (lscpu)")
    except (OSError, KeyError, subprocess.SubprocessError):
        pass
    try:
        with open("/proc/cpuinfo") as f:
            info = {k.strip(): v for k, v in (line.split(":", 1) for line in f if ":" in line)}
        return (f"{info['model name'].strip()} (family {info['cpu family'].strip()}, model "
                f"{info['model'].strip()}), {os.cpu_count()} cores")
    except (OSError, KeyError):
        return "unknown CPU"


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m pecheck.zoo", description=__doc__.split("\n\n", 1)[1])
    p.add_argument("--arch", help="comma-separated model_types (default: every one)")
    p.add_argument("--variant", help="comma-separated variants (default, linear, yarn, ...)")
    p.add_argument("--cases", type=int, default=30, help="cases per property x dtype (default 30)")
    p.add_argument("--seed", type=int, default=None, help="the run's seed (default pecheck's)")
    p.add_argument("--no-ladder", action="store_true", help="skip the exact-to position ladder")
    p.add_argument("--jobs", type=int, default=None, help="rows judged at once, each in its own process "
                                                          "(default: the machine's cores)")
    p.add_argument("--markdown", help="write the table (docs/model-zoo.md) here")
    p.add_argument("--json", help="write rows and skips as JSON here")
    p.add_argument("--from-json", help="no sweep: write --markdown from the rows of an earlier --json")
    a = p.parse_args(argv)
    if a.cases < 1:
        p.error("--cases must be >= 1")
    if a.from_json:
        if not a.markdown:
            p.error("--from-json needs --markdown")
        with open(a.from_json) as f:
            saved = json.load(f)
        rows = [judge.Row(**r) for r in saved["rows"]]
        skips = [Skip(**s) for s in saved["skips"]]
        with open(a.markdown, "w") as f:
            f.write(table.markdown(rows, skips, saved["meta"]))
        return 0
    import transformers

    start = time.monotonic()
    rows, skips = sweep.run(a.arch.split(",") if a.arch else None, a.variant.split(",") if a.variant else None,
                            cases=a.cases, seed=a.seed, ladder=not a.no_ladder, jobs=a.jobs)
    seconds = time.monotonic() - start
    import torch

    meta = dict(transformers=transformers.__version__, torch=torch.__version__.split("+")[0], cases=a.cases,
                seconds=round(seconds), jobs=a.jobs or os.cpu_count(),
                seed=a.seed, whole=a.arch is None and a.variant is None, cpu=_cpu())
    if a.json:
        with open(a.json, "w") as f:
            json.dump(dict(meta=meta, rows=[asdict(r) for r in rows], skips=[asdict(s) for s in skips]), f, indent=1)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(table.markdown(rows, skips, meta))
    failed = [r for r in rows if r.verdict != "PASS"]
    print(f"pecheck.zoo: {len(rows)} rows ({len(failed)} not PASS), {len(skips)} architectures skipped, "
          f"{seconds:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
