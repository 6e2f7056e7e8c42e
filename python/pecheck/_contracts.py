"""The accuracy contracts an encoder can meet, strongest first, and what check() reports of the
ladder the native side climbs when none is asked for (harness/contract_ladder.hpp): per dtype, the
strongest contract agreement meets and where each stricter one first failed (docs/python.md
"Verdicts"). docs/error-model.md derives each contract's bounds."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

# A position encoding's, strongest first: exact (2u against the 50-digit reference), cos/sin stored
# in the dtype, and frequencies and angles formed in fp32 (the bound grows with the angle).
POSITION_CONTRACTS: Tuple[str, ...] = ("exact", "dtype-trig", "fp32-angles")
# Attention's, each allowing what the ones before it do: exact (the softmax probabilities P in fp32
# or wider where they meet V), P rounded to the dtype before P.V as FlashAttention-2 does in bf16
# and f16 (one u more), then the RoPE inside attention with cos/sin stored in the dtype, then with
# its angles formed in fp32 (HF's and most kernels').
ATTENTION_CONTRACTS: Tuple[str, ...] = ("exact", "rounded-p", "dtype-trig", "fp32-angles")
# Every contract's name.
CONTRACTS: Tuple[str, ...] = POSITION_CONTRACTS + ("rounded-p",)


def contracts_of(op: str) -> Tuple[str, ...]:
    """The contracts that govern `op` (a full operation name), strongest first."""
    return ATTENTION_CONTRACTS if op == "attention" else POSITION_CONTRACTS

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



@dataclass(frozen=True)
class ContractVerdict:
    """One dtype's verdict on the contracts: `met` is the strongest that agreement holds under (None:
    none does, or agreement did not run), `asked` the one the caller named (None: the ladder ran)."""

    dtype: str
    met: Optional[str]
    asked: Optional[str]
    misses: Tuple[ContractMiss, ...]  # the stricter contracts tried, each with where it failed
    # The relational laws' positions were drawn below this (the contract's ceiling); for attention
    # under fp32-angles, every attention law's.
    laws_below: Optional[int] = None
    note: str = ""  # why no contract was judged (agreement declined or skipped)
    text: str = ""  # the native side's one-line description (harness/contract_ladder.cpp describe())

    def describe(self) -> str:
        return self.text


def verdict_of(v: dict, replay) -> ContractVerdict:
    """A dtype's verdict as _core reports it (harness/contract_ladder.hpp); replay(miss) renders
    the call that reruns a miss."""
    misses = tuple(ContractMiss(contract=m["contract"], property=m["property"], position=m["position"],
                                error_u=m["error_u"], bound_u=m["bound_u"], counterexample=m["counterexample"],
                                replay=replay(m)) for m in v["misses"])
    return ContractVerdict(dtype=v["dtype"], met=v["met"], asked=v["asked"], misses=misses,
                           laws_below=v["laws_below"], note=v["note"], text=v["describe"])
