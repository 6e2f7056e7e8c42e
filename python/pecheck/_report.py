"""What check() returns: one Result per property x dtype (the fields of docs/json-schema.md) in a
Report that knows whether the function passed and how to say why not."""

import builtins
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Tuple

from ._contracts import ContractVerdict
from ._dtypes import dtype_name


@dataclass(frozen=True)
class Result:
    property: str
    dtype: str
    verdict: str  # "pass", "fail", "skip" or "crash"
    cases: int
    nontrivial_cases: int
    max_error_u: Optional[float]  # in u of the dtype; math.inf: a NaN or a changed pass-through dim; None: skipped
    bound_u: Optional[float]
    direction: str  # "at_most": the error must stay below the bound; "at_least": a separation
    property_seed: int
    statement: str
    doc: str
    seconds: float
    encoder: str = ""
    message: str = ""
    counterexample: str = ""  # the shrunk case, or the one a crash died on
    vacuous: bool = False
    counterexample_error_u: Optional[float] = None  # None: the failure was not a measurement
    counterexample_bound_u: Optional[float] = None  # the bound that error is judged against (bound_u: the worst case's)
    other_rules: Tuple[Mapping[str, Any], ...] = ()  # {"rule", "counterexample", "message", ...} per other rule
    distribution: Dict[str, int] = field(default_factory=dict)  # case tag -> cases that carried it
    replay: str = ""

    # builtins.property: to a type checker the field `property` above hides the builtin in this
    # class body (at run time it is only an annotation).
    @builtins.property
    def ok(self) -> bool:
        return self.verdict in ("pass", "skip")

    def explain(self) -> str:
        """The failure as a few lines: statement, counterexample, error against bound, replay."""
        head = f"{self.verdict.upper()} {self.property} / {self.dtype} after {self.cases} cases"
        lines = [head, f"  theorem: {self.statement}  ({self.doc})"]
        if self.counterexample:
            lines.append(f"  counterexample (shrunk): {self.counterexample}")
        if self.counterexample_error_u is not None:
            own = "" if self.counterexample_bound_u is None else f" (its bound {self.counterexample_bound_u:.4g} u)"
            lines.append(f"  error: {self.counterexample_error_u:.4g} u at the counterexample{own}, "
                         f"{self.max_error_u:.4g} u at worst over {self.cases} cases (bound {self.bound_u:.4g} u there)")
        if self.message:
            lines.append(f"  {self.message}")
        for other in self.other_rules:
            lines.append(f"  also under {other['rule']}: {other['counterexample']}")
        if self.replay:
            lines.append(f"  replay: {self.replay}")
        return "\n".join(lines)


@dataclass(frozen=True)
class Report:
    function: str
    op: str
    seed: int
    cases: int
    results: Tuple[Result, ...]
    # Per dtype, for the operations a contract governs (rope, mrope, sinusoidal) with a convention
    # stated: the strongest contract met and where each stricter one first failed (_contracts.py).
    contracts: Mapping[str, ContractVerdict] = field(default_factory=dict)
    # check(ftz=True): judged as running where subnormals are flushed to zero (no input below FLT_MIN).
    ftz: bool = False
    # What the cases exercised (properties/coverage.hpp): the forms real kernels are written in that
    # no case drew (a layout, a scaling rule, a window, a decode step, a position past 2^20), and the
    # summary's line saying so ("" when no case ran).
    never_exercised: Tuple[str, ...] = ()
    coverage: str = ""

    @property
    def ok(self) -> bool:
        """Something was judged, and no property failed or crashed (skips are not failures). Where a
        contract governs the operation, every law was judged under the contract met (`contracts`): ok
        means the function meets that named contract, and agreement fails where it meets none. A
        report where every property was skipped is not ok (`vacuous`): it judged nothing."""
        return not self.vacuous and all(r.ok for r in self.results)

    @property
    def vacuous(self) -> bool:
        """Every property was skipped (declined, not applicable, not judged): nothing was judged."""
        return not any(r.verdict != "skip" for r in self.results)

    def contract(self, dtype: Any = "f32") -> Optional[str]:
        """The strongest contract `dtype` meets ("exact", "dtype-trig", "fp32-angles"), None if none;
        dtype as check() takes it (torch.bfloat16 too)."""
        dtype = dtype_name(dtype)
        if dtype not in self.contracts:
            raise KeyError(f"no contract verdict for {dtype} (the operation has none, or it was not run)")
        return self.contracts[dtype].met

    @property
    def failures(self) -> List[Result]:
        return [r for r in self.results if not r.ok]

    def result(self, property: str, dtype: Any = "f32") -> Result:
        dtype = dtype_name(dtype)
        for r in self.results:
            if r.property == property and r.dtype == dtype:
                return r
        raise KeyError(f"no result for {property} / {dtype}")

    def summary(self) -> str:
        rows = [f"pecheck: {self.function} as {self.op}, seed {self.seed}, {self.cases} cases per property"
                + ("; judged as flushing subnormals to zero (ftz=True)" if self.ftz else "")]
        if self.vacuous:
            first = next((r.message for r in self.results if r.message), "no property selected")
            rows.append(f"  nothing was judged: all {len(self.results)} checks were skipped (first: {first})")
        for dtype, verdict in self.contracts.items():
            rows.append(f"  {dtype}: {verdict.describe()}")
        if self.coverage:
            rows.append(f"  {self.coverage}")
        for r in self.results:
            worst = "-" if r.max_error_u is None else f"{r.max_error_u:.3g}"
            bound = "-" if r.bound_u is None else f"{r.bound_u:.3g}"
            note = f"  {r.message}" if r.verdict == "skip" else ""
            rows.append(f"  {r.verdict:5} {r.property:40} {r.dtype:5} max {worst:>9} u  bound {bound:>8} u{note}")
        return "\n".join(rows)

    def __str__(self) -> str:
        return self.summary()
