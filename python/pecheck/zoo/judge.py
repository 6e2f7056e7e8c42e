"""One Subject checked: the catalogue of its operation under the convention its config states, the
strongest contract its agreement meets per dtype, how far it stays exact, and a verdict."""
import fnmatch
import time
import traceback
from dataclasses import dataclass, field

import pecheck

# Ceilings of the exact-to ladder: positions are drawn below half of each (check()'s max_position).
LADDER = (2 ** 4, 2 ** 8, 2 ** 12, 2 ** 16, 2 ** 20, 2 ** 24 - 1)


@dataclass
class Row:
    arch: str
    family: str
    variant: str
    module: str
    stated: str
    quirk: str
    reading: str  # the convention pecheck was given (compact)
    contract: dict = field(default_factory=dict)  # dtype -> strongest contract met ("" if none)
    exact_to: str = ""  # "below 2^k" per the ladder, f32
    verdict: str = ""  # PASS, FAIL, ERROR, INCOMPLETE (agreement never ran: nothing was judged)
    failures: list = field(default_factory=list)  # one text per failing asserted property
    reported: list = field(default_factory=list)  # "id: verdict" of the laws shown, not asserted
    seconds: float = 0.0


def reading(conv):
    if conv is None:
        return "opaque (the convention-free properties)"
    parts = []
    for k, v in conv.items():
        if isinstance(v, dict):
            v = "{" + ",".join(f"{a}={b}" for a, b in v.items() if a not in ("short_factor", "long_factor")) + "}"
        parts.append(f"{k}={v}")
    return " ".join(parts)


def _check(subject, fn, cases, seed, **kw):
    args = dict(framework="torch", cases=cases, seed=seed, max_position=subject.max_position)
    args.update(subject.extra)
    args.update(kw)
    return pecheck.check(fn, subject.op, subject.convention, **args)


def _asserted(subject, result):
    return any(fnmatch.fnmatchcase(result.property, a) for a in subject.asserted)


def _failure_text(r):
    err = "" if r.counterexample_error_u is None else f" (error {r.counterexample_error_u:.3g} u, bound {r.bound_u:.3g} u)"
    what = r.counterexample or r.verdict
    if r.message and r.message not in what:
        what += f" ({r.message.splitlines()[0][:300]})"
    return f"{r.property} {r.dtype}: {what}{err}; replay: {r.replay}"


def judge(subject, cases=30, seed=pecheck.DEFAULT_SEED, ladder=True, isolate=True):
    """isolate: pecheck.check's (each property x dtype in a forked child); the sweep judges each row in a
    child process of its own instead (sweep.py), one fork a row rather than one a property."""
    row = Row(subject.arch, subject.family, subject.variant, subject.module, subject.stated, subject.quirk,
              reading(subject.convention))
    start = time.monotonic()
    try:
        fn = subject.build()
        pinned = subject.convention is not None
        # One check: pecheck.check climbs the contract ladder itself (exact, dtype-trig, fp32-angles:
        # the strongest agreement meets, per dtype) and judges every other law under the contract met
        # (docs/python.md "Verdicts"); an operation with one contract (ALiBi, T5, learned) is judged
        # by it.
        contract = None if len(subject.contracts) > 1 else subject.contracts[0]
        report = _check(subject, fn, cases, seed, isolate=isolate, dtypes=subject.dtypes, contract=contract)
        results = list(report.results)
        agreement = [r for r in results if r.property.endswith("agrees_with_reference")]
        for dtype in subject.dtypes if pinned else ():
            if dtype in report.contracts:
                row.contract[dtype] = report.contracts[dtype].met or ""
            else:
                agree = [r for r in agreement if r.dtype == dtype]
                row.contract[dtype] = contract if agree and all(r.verdict == "pass" for r in agree) else ""
        # Agreement is what says the module computes the stated convention: a run where every case of it
        # was declined (or it could not run) has judged nothing, whatever the other laws say.
        if pinned and any(r.verdict == "skip" for r in agreement):
            row.verdict = "INCOMPLETE"
            row.failures += [f"{r.property} {r.dtype} skipped: {r.message}" for r in agreement if r.verdict == "skip"]
            return row
        if not [r for r in results if r.verdict != "skip"]:
            row.verdict = "ERROR"
            row.failures.append("every property skipped: " + "; ".join(r.message for r in results[:2]))
            return row
        for r in results:
            if r.verdict == "skip":
                continue
            if _asserted(subject, r) and r.verdict != "pass":
                row.failures.append(_failure_text(r))
            elif any(fnmatch.fnmatchcase(r.property, p) for p in subject.reported):
                row.reported.append(f"{r.property} {r.dtype}: {r.verdict}")
        if row.contract.get("f32") == "exact":
            row.exact_to = f"< {((subject.max_position or LADDER[-1]) + 1) // 2}"
        elif ladder and pinned and "f32" in subject.dtypes:
            row.exact_to = _exact_to(subject, fn, seed, isolate=isolate)
        row.verdict = "FAIL" if row.failures else "PASS"
    except Exception as e:  # a module that cannot be built or called is a row, not a crash of the sweep
        row.verdict = "ERROR"
        row.failures.append(f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''} "
                            f"({traceback.extract_tb(e.__traceback__)[-1].name})")
    finally:
        row.seconds = time.monotonic() - start
    return row


def _exact_to(subject, fn, seed, cases=20, isolate=True):
    """The largest ceiling of LADDER under which agreement meets the exact contract (f32)."""
    top = subject.max_position or LADDER[-1]
    passed = ""
    for ceiling in LADDER:
        ceiling = min(ceiling, top)
        report = _check(subject, fn, cases, seed, isolate=isolate, dtypes=("f32",), contract="exact", max_position=ceiling,
                        properties=f"{subject.op}*.agrees_with_reference")
        if not report.results or any(r.verdict != "pass" for r in report.results):
            break
        passed = f"{(ceiling + 1) // 2}"
        if ceiling == top:
            break
    return f"< {passed}" if passed else "none"
