"""The accuracy contracts an encoder can meet, strongest first, and the ladder check() climbs down
when none is asked for: per dtype, agreement under each contract until one holds; the catalogue
then runs under that one, and the report says which it is and where each stricter one first failed
(docs/python.md "Verdicts"). docs/error-model.md derives each contract's bounds."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Tuple

# Strongest first: exact (2u against the 50-digit reference), cos/sin stored in the dtype, and
# frequencies and angles formed in fp32 (the bound grows with the angle).
CONTRACTS: Tuple[str, ...] = ("exact", "dtype-trig", "fp32-angles")

# The operations whose agreement a contract governs, and that property's id.
AGREEMENT = {
    "rope_apply": "rope.agrees_with_reference",
    "mrope_apply": "mrope.agrees_with_reference",
    "sinusoidal_table": "sinusoidal.agrees_with_reference",
}

# The laws that compare calls with each other, whose bounds under a weaker contract add up the
# calls' contract bounds (properties/rope_contract_laws.hpp): judged below rope_law_ceiling, where
# those bounds still constrain the fastest pair.
RELATIONAL = {"rope_apply": ("rope.relative", "rope.composition", "rope.offset_invariance")}
# Laws that compare calls and have no bound derived under a weaker contract yet: under one they are
# not judged (a skip that says so), never judged by the exact contract's bound.
UNDERIVED = {
    "mrope_apply": ("mrope.relative",),
    "sinusoidal_table": ("sinusoidal.shift_linearity", "sinusoidal.offset_inner_product",
                         "sinusoidal.injectivity"),
}

_POSITION = re.compile(r"\bpos=(-?\d+)")


@dataclass(frozen=True)
class ContractMiss:
    """Where a stricter contract than the one met first failed: agreement's shrunk counterexample."""

    contract: str
    property: str
    position: Optional[int]  # the position of the worst pair or entry at the counterexample
    error_u: Optional[float]  # its error, in u of the dtype (None: a failure that measured nothing)
    bound_u: Optional[float]  # that contract's bound there
    counterexample: str
    replay: str

    def describe(self) -> str:
        where = "" if self.position is None else f" at position {self.position}"
        if self.error_u is None:
            return f"{self.contract} fails{where} ({self.property}: {self.counterexample or 'no measurement'})"
        bound = "" if self.bound_u is None else f" > {self.bound_u:.4g} u"
        return f"{self.contract} fails{where} ({self.property}, {self.error_u:.4g} u{bound})"


@dataclass(frozen=True)
class ContractVerdict:
    """One dtype's verdict on the contracts: `met` is the strongest that agreement holds under (None:
    none does, or agreement did not run), `asked` the one the caller named (None: the ladder ran)."""

    dtype: str
    met: Optional[str]
    asked: Optional[str]
    misses: Tuple[ContractMiss, ...]  # the stricter contracts tried, each with where it failed
    laws_below: Optional[int] = None  # the relational laws' positions were drawn below this (the contract's ceiling)
    note: str = ""  # why no contract was judged (agreement declined or skipped)

    def describe(self) -> str:
        if self.note:
            head = f"no contract judged ({self.note})"
        elif self.met is None:
            tried = self.asked or ", ".join(CONTRACTS)
            head = f"meets no named contract (tried {tried})"
        else:
            head = f"meets {self.met}"
        parts = [head] + [m.describe() for m in self.misses]
        if self.laws_below:
            parts.append(f"the laws comparing calls judged below position {self.laws_below}")
        return "; ".join(parts)


def position_of(message: str, counterexample: str) -> Optional[int]:
    """The position the measurement names (agreement writes pos=N beside its worst pair or entry)."""
    for text in (message, counterexample):
        found = _POSITION.search(text or "")
        if found:
            return int(found.group(1))
    return None


def miss_of(contract: str, result) -> ContractMiss:
    return ContractMiss(contract=contract, property=result.property,
                        position=position_of(result.message, result.counterexample),
                        error_u=result.counterexample_error_u, bound_u=result.bound_u,
                        counterexample=result.counterexample, replay=result.replay)
