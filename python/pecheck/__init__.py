"""pecheck: check a positional encoder written in Python against the property catalogue.

    import pecheck
    report = pecheck.check(apply_rope, op="rope", convention={"rope_theta": 10000.0})
    assert report.ok, report.summary()

or, in a test, ``pecheck.assert_holds(...)`` with the same arguments (pecheck.testing). The
function's signature per operation, the conventions and the isolation are in docs/python.md.
"""

import fnmatch
import json
import math
import os
import sys

from ._contracts import AGREEMENT, CONTRACTS, RELATIONAL, UNDERIVED, ContractMiss, ContractVerdict, miss_of
from ._report import Report, Result

__version__ = "0.1.0"
__all__ = ["check", "assert_holds", "Report", "Result", "ContractVerdict", "ContractMiss", "CONTRACTS", "Unsupported",
           "OPERATIONS", "DEFAULT_SEED"]

DEFAULT_SEED = 20261130


class Unsupported(Exception):
    """Raised by a checked function for a case it does not offer (a dtype, a size, a mask): the
    case is discarded, never counted as a failure; a function that declines every case is a skip."""


# Short names for the operations of pecheck's table, and each one's full name there.
OPERATIONS = {
    "sinusoidal": "sinusoidal_table",
    "learned": "learned_add",
    "rope": "rope_apply",
    "alibi": "alibi_bias",
    "shaw": "shaw_scores",
    "t5": "t5_bias",
    "attention": "attention",
    "sinusoidal2d": "sinusoidal2d_table",
    "rope2d": "rope2d_apply",
    "mrope": "mrope_apply",
}
_DTYPES = ("f32", "bf16", "f16")
_FRAMEWORKS = ("numpy", "torch")


# True while check() runs: its children are the only forks pecheck's at-fork hook touches.
_checking = False


def _after_fork_in_child():
    """torch's intra-op pool (OpenMP) does not survive fork(): a parallel region in the child waits
    for threads that live only in the parent, and hangs (tests/test_isolation.py). A child that
    check() forked runs torch on one thread instead."""
    if _checking and "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)


os.register_at_fork(after_in_child=_after_fork_in_child)


def _name_of(fn):
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__


def _mode(convention):
    if convention is None:
        return "opaque", ""
    if isinstance(convention, str):
        if convention != "spec":
            raise ValueError(f"convention: a dict, \"spec\" or None, not '{convention}'")
        return "spec", ""
    if not isinstance(convention, dict):
        raise ValueError(f"convention: a dict, \"spec\" or None, not a {type(convention).__name__}")
    try:
        return "pinned", json.dumps(convention)
    except (TypeError, ValueError) as e:
        raise ValueError(f"convention: not JSON-serialisable: {e}") from None


def check(
    fn,
    op="rope",
    convention=None,
    *,
    dtypes=("f32", "bf16", "f16"),
    cases=100,
    seed=None,
    properties="*",
    framework="numpy",
    in_place=False,
    isolate=True,
    timeout=300.0,
    max_position=None,
    contract=None,
):
    """Runs every property of `op` that applies to `fn` and returns a Report.

    convention: None (opaque: the convention-free properties only), a dict (the one convention fn
    implements: HF's words for RoPE, spec field names otherwise), or "spec" (fn honours every spec
    and receives it as `spec=`). seed: the run's seed (default: PECHECK_SEED, else DEFAULT_SEED).
    isolate: run each property x dtype in a forked child, so that a crash in fn is a result.
    max_position: the largest position fn takes (a table of max_position + 1 rows); drawn positions
    are drawn below half of it so that sums of two stay within it. Default: up to 2^24 - 1.
    contract: what the agreement of rope, mrope and sinusoidal judges by, and the bounds of the laws
    that build on it: "exact" (2u), "dtype-trig" (cos and sin stored in the dtype) or "fp32-angles"
    (angles formed in fp32; the bound grows with the angle). None (the default): per dtype, the
    strongest of the three that agreement meets; the report's `contracts` says which, and where each
    stricter one first failed (position, error in u). With a contract named, only that one is judged."""
    if not callable(fn):
        raise ValueError(f"fn: not callable ({type(fn).__name__})")
    if op not in OPERATIONS and op not in OPERATIONS.values():
        raise ValueError(f"op: '{op}' is not one of {', '.join(OPERATIONS)}")
    full_op = OPERATIONS.get(op, op)
    if isinstance(dtypes, str):
        dtypes = (dtypes,)
    dtypes = tuple(dtypes)
    if not dtypes or any(d not in _DTYPES for d in dtypes):
        raise ValueError(f"dtypes: {dtypes!r} must be a non-empty sequence of f32, bf16, f16")
    if isinstance(cases, bool) or not isinstance(cases, int) or cases < 1:
        raise ValueError(f"cases: {cases!r} must be an integer >= 1")
    if seed is None:
        seed = int(os.environ.get("PECHECK_SEED", DEFAULT_SEED))
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise ValueError(f"seed: {seed!r} must be an integer in [0, 2^64)")
    if framework not in _FRAMEWORKS:
        raise ValueError(f"framework: '{framework}' is not numpy or torch")
    if not isinstance(properties, str) or not properties:
        raise ValueError("properties: a glob over property ids, e.g. 'rope.*'")
    if not (isinstance(timeout, (int, float)) and timeout > 0):
        raise ValueError(f"timeout: {timeout!r} must be a number of seconds > 0")
    if max_position is not None and (isinstance(max_position, bool) or not isinstance(max_position, int)
                                     or not 1 <= max_position < 2**24):
        raise ValueError(f"max_position: {max_position!r} must be an integer in [1, 2^24) or None")
    if contract is not None and contract not in CONTRACTS:
        raise ValueError(f"contract: {contract!r} is not one of {', '.join(CONTRACTS)} (or None: the strongest met)")
    mode, convention_json = _mode(convention)

    from . import _core
    from ._invoke import Invoker

    catalogue = json.loads(_core.catalogue())
    if not any(p["op"] == full_op and fnmatch.fnmatchcase(p["id"], properties) for p in catalogue):
        raise ValueError(f"properties: '{properties}' matches no property of {full_op}")
    invoker = Invoker(fn, framework, bool(in_place))
    name = _name_of(fn)

    def run(run_dtypes, glob, judged, skip=(), ceiling=None):
        top = max_position if ceiling is None else min(max_position or ceiling, ceiling)
        raw = _core.run(invoker, name, full_op, mode, convention_json, list(run_dtypes), int(cases), int(seed),
                        glob, bool(isolate), float(timeout), int(top or 0), judged, list(skip))
        return [_result(r, lambda r: _replay(name, op, convention, framework, in_place, top, judged, seed, r))
                for r in json.loads(raw)]

    sys.stdout.flush()
    sys.stderr.flush()
    global _checking
    _checking = True
    try:
        agreement = AGREEMENT.get(full_op) if mode != "opaque" else None
        if agreement is None:  # no contract governs this operation, or nothing is stated to agree with
            results, verdicts = run(dtypes, properties, contract or "exact"), {}
        else:
            results, verdicts = _climb(run, catalogue, full_op, dtypes, properties, contract)
    finally:
        _checking = False
    order = {p["id"]: i for i, p in enumerate(catalogue)}
    results.sort(key=lambda r: (order.get(r.property, len(order)), _DTYPES.index(r.dtype)))
    return Report(function=name, op=full_op, seed=seed, cases=cases, results=tuple(results), contracts=verdicts)


def _climb(run, catalogue, op, dtypes, properties, asked):
    """Per dtype: agreement under each contract, strongest first (only `asked` when one is named),
    until one holds; then the rest of the catalogue under that one (under the weakest tried when none
    holds, so that every law is judged as leniently as any contract would). Under a contract whose
    bounds grow with the position, the laws comparing calls are drawn below its ceiling, and those
    with no bound derived under it are not judged (a skip that says why)."""
    from . import _core

    agreement = AGREEMENT[op]
    results, verdicts = [], {}
    for dtype in dtypes:
        misses, met, agree, note = [], None, [], ""
        for contract in (asked,) if asked else CONTRACTS:
            agree = run((dtype,), agreement, contract)
            if any(r.verdict == "skip" for r in agree):  # declined or not applicable: no contract judged
                note = f"{agreement} did not run: {agree[0].message}"
                break
            if all(r.verdict == "pass" for r in agree):
                met = contract
                break
            misses.append(miss_of(contract, agree[0]))
        judged = met or (asked or CONTRACTS[-1])
        if fnmatch.fnmatchcase(agreement, properties):
            results += agree
        relational = [p for p in RELATIONAL.get(op, ()) if fnmatch.fnmatchcase(p, properties)]
        underived = [p for p in UNDERIVED.get(op, ()) if fnmatch.fnmatchcase(p, properties)]
        ceiling = _core.rope_law_ceiling(judged, dtype) or None
        apart = [agreement] + (relational if ceiling else []) + (underived if judged != "exact" else [])
        results += run((dtype,), properties, judged, skip=apart)
        if ceiling:
            for law in relational:
                results += run((dtype,), law, judged, ceiling=ceiling)
        if judged != "exact":
            results += [_not_judged(p, dtype, judged, catalogue) for p in underived]
        verdicts[dtype] = ContractVerdict(dtype=dtype, met=met, asked=asked, misses=tuple(misses),
                                          laws_below=ceiling if relational else None, note=note)
    return results, verdicts


def _not_judged(law, dtype, contract, catalogue):
    entry = next(p for p in catalogue if p["id"] == law)
    return Result(property=law, dtype=dtype, verdict="skip", cases=0, nontrivial_cases=0, max_error_u=None,
                  bound_u=None, direction="at_most", property_seed=0, statement=entry["statement"],
                  doc=entry["doc"], seconds=0.0,
                  message=f"not judged: {law} has no bound derived under the {contract} contract yet "
                          f"(docs/error-model.md); the exact contract's would fail a correct {contract} encoder")


def _result(r, replay):
    """One row of _core's JSON as a Result: the replay line for a failure, infinities restored."""
    r["replay"] = replay(r) if r["verdict"] in ("fail", "crash") else ""
    r["other_rules"] = tuple(r.get("other_rules", ()))
    # JSON has no infinity: null is an infinite measurement (a NaN where none belonged, a changed
    # pass-through dim); a skip measured nothing and keeps None.
    if r["verdict"] != "skip":
        for key in ("max_error_u", "bound_u"):
            if r[key] is None:
                r[key] = math.inf
    if "counterexample_error_u" in r and r["counterexample_error_u"] is None:
        r["counterexample_error_u"] = math.inf
    return Result(**r)


def _replay(name, op, convention, framework, in_place, max_position, contract, seed, r):
    """The call that runs exactly this result's cases again (its seed is derived from the run's)."""
    stated = repr(convention)
    args = [name, f"op={op!r}", f"convention={stated if len(stated) <= 160 else '...'}"]
    if framework != "numpy":
        args.append(f"framework={framework!r}")
    if in_place:
        args.append("in_place=True")
    if max_position is not None:
        args.append(f"max_position={max_position}")
    args.append(f"contract={contract!r}")
    args += [f"seed={seed}", f"properties={r['property']!r}", f"dtypes=({r['dtype']!r},)"]
    return f"pecheck.check({', '.join(args)})  # under pytest: --pecheck-seed {seed}"


def assert_holds(fn, op="rope", convention=None, **kwargs):
    """check(), then fails (AssertionError) with every failing property's statement, shrunk
    counterexample, error against bound, page and replay line. Returns the Report when it holds."""
    from .testing import assert_holds as _assert_holds

    return _assert_holds(fn, op, convention, **kwargs)
