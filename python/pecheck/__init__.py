"""pecheck: check a positional encoder written in Python against the property catalogue.

    import pecheck
    report = pecheck.check(apply_rope, op="rope", convention={"rope_theta": 10000.0})
    assert report.ok, report.summary()

or, in a test, ``pecheck.assert_holds(...)`` with the same arguments (pecheck.testing). The
function's signature per operation, the conventions and the isolation are in docs/python.md.
"""

import collections.abc
import contextlib
import fnmatch
import inspect
import json
import math
import os
import sys
import tempfile
from typing import Any, Callable, Iterable, Iterator, Literal, Mapping, Optional, Union

from ._contracts import (ATTENTION_CONTRACTS, CONTRACTS, POSITION_CONTRACTS, ContractMiss, ContractVerdict, contracts_of,
                         verdict_of)
from ._dtypes import DTYPES as _DTYPES
from ._dtypes import dtype_name
from ._report import Report, Result

from ._version import __version__  # CMakeLists.txt's project(pecheck VERSION ...), via the installed metadata
__all__ = ["check", "assert_holds", "Report", "Result", "ContractVerdict", "ContractMiss", "CONTRACTS",
           "POSITION_CONTRACTS", "ATTENTION_CONTRACTS", "Unsupported",
           "OPERATIONS", "ATTENTION_FORMS", "DEFAULT_SEED", "Framework"]

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
    "relative_bias_2d": "relative_bias_2d",
}
# What fn receives and returns: NumPy arrays, torch tensors or JAX arrays.
Framework = Literal["numpy", "torch", "jax"]
_FRAMEWORKS = ("numpy", "torch", "jax")
# The attention forms a function may declare (spec/attention_forms.hpp): what each sends it.
ATTENTION_FORMS = {
    "grouped_query": "k and v with fewer heads than q (kv_heads dividing heads; GQA, MQA)",
    "window": "a causal sliding window, as the keyword window (0: none)",
    "decode": "fewer query rows than keys: the last tokens' queries against every key (a decode step)",
    "scale": "the softmax scale, as the keyword scale (cases draw scales other than 1/sqrt(head_dim))",
    "rope_rules": "with convention='spec': RoPE with a partial rotary_dim or a scaling rule",
}
# Forms that arrive as a keyword: a function declaring one must take it.
_FORM_KEYWORDS = ("scale", "window")


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
    fn: Callable[..., Any],
    op: str = "rope",
    convention: Union[Mapping[str, Any], str, None] = None,
    *,
    dtypes: Union[Iterable[Any], str, Any] = ("f32", "bf16", "f16"),
    cases: int = 100,
    seed: Optional[int] = None,
    properties: str = "*",
    framework: Framework = "numpy",
    in_place: bool = False,
    isolate: bool = True,
    timeout: float = 300.0,
    max_position: Optional[int] = None,
    contract: Optional[str] = None,
    forms: Union[Iterable[str], str, None] = None,
    cos_sin: Optional[str] = None,
    produces_cos_sin: Optional[str] = None,
    device: Optional[str] = None,
    ftz: bool = False,
    batch: Optional[int] = None,
) -> Report:
    """Runs every property of `op` that applies to `fn` and returns a Report.

    dtypes: any of f32, bf16, f16, as pecheck, NumPy or torch name them (torch.bfloat16, "float16"); the
    report names them f32, bf16, f16.
    convention: None (opaque: the convention-free properties only), a dict (the one convention fn
    implements: HF's words for RoPE, spec field names otherwise), or "spec" (fn honours every spec
    and receives it as `spec=`). seed: the run's seed (default: PECHECK_SEED, else DEFAULT_SEED).
    framework: what fn receives and returns: "numpy" (bf16 values in float32 arrays), "torch" (tensors
    of the dtype) or "jax" (jax Arrays of the dtype, jnp.bfloat16 included; positions int32, or int64
    under jax_enable_x64; no in_place, and with isolate, nothing may have run JAX in this process).
    isolate: run each property x dtype in a forked child, so that a crash in fn is a result.
    max_position: the largest position fn takes (a table of max_position + 1 rows); drawn positions
    are drawn below half of it so that sums of two stay within it. Default: up to 2^24 - 1.
    contract: what the agreement of rope, mrope, rope2d, sinusoidal and attention judges by, and the
    bounds of the laws that build on it. For a position encoding: "exact" (2u), "dtype-trig" (cos and
    sin stored in the dtype) or "fp32-angles" (angles formed in fp32; the bound grows with the
    angle); for attention: "exact" (softmax probabilities P in fp32 where they meet V), "rounded-p"
    (P rounded to the dtype before P.V, as FlashAttention-2 does), then "dtype-trig" and
    "fp32-angles" (that, and the RoPE inside attention under those contracts). None (the default): per dtype, the
    strongest that agreement meets; the report's `contracts` says which, and where each stricter one
    first failed (position, error in u). With a contract named, only that one is judged.
    forms: for attention, the call forms fn takes beyond the plain one (ATTENTION_FORMS: "grouped_query",
    "window", "decode", "scale", "rope_rules", or "all"): every case is drawn within them, and a property
    whose cases all need another is "not applicable", saying which.
    cos_sin: for rope, fn applies a cos/sin it is handed, in this layout (pecheck.cos_sin.LAYOUTS):
    fn(x, cos, sin), or fn(x, positions, cos_sin_cache); fn(q, k, ...) -> (q, k) is handed x twice
    and must rotate both alike. pecheck hands it the stated convention's exact cos and sin in the
    call's dtype. produces_cos_sin: fn is a cos/sin producer, fn(x, positions)
    -> (cos, sin) in this layout, which pecheck applies exactly.
    device: with framework="torch", where fn's tensors live ("cpu" by default, "cuda", "cuda:1"); a
    device this machine lacks skips every property, saying so (assert_holds skips the test).
    ftz: fn runs where subnormals are flushed to zero (XLA on CPU, CUDA or Triton built with fast
    math), a platform convention: no input below FLT_MIN is drawn, every law is judged as before,
    and the report says so (Report.ftz). Not stated, a function that flushes fails where a subnormal
    input meets it (rope.orthogonal at position 0, agreement).
    batch: fn takes a leading batch axis on every input and its output (x (B, tokens, heads,
    head_dim), positions (B, tokens) for rope), and pecheck sends it up to `batch` cases a call:
    each property's cases run in passes over the same draws, the calls of a pass answered together
    (docs/python.md, "Batched calls"); every verdict, measurement and counterexample is the one the
    same fn would get call by call. Cases of one call share dtype, keywords, spec and head_dim;
    token-wise operations pad tokens and heads with zeros (position 0), cut from each output."""
    if not callable(fn):
        raise ValueError(f"fn: not callable ({type(fn).__name__})")
    if op not in OPERATIONS and op not in OPERATIONS.values():
        raise ValueError(f"op: '{op}' is not one of {', '.join(OPERATIONS)}")
    full_op = OPERATIONS.get(op, op)
    if isinstance(dtypes, str) or not isinstance(dtypes, collections.abc.Iterable):
        dtypes = (dtypes,)  # one name, or one torch or NumPy dtype
    dtypes = tuple(dict.fromkeys(dtype_name(d) for d in dtypes))
    if not dtypes:
        raise ValueError("dtypes: an empty sequence (name at least one of f32, bf16, f16)")
    if not isinstance(ftz, bool):
        raise ValueError(f"ftz: {ftz!r} must be True or False")
    if isinstance(cases, bool) or not isinstance(cases, int) or cases < 1:
        raise ValueError(f"cases: {cases!r} must be an integer >= 1")
    if seed is None:
        seed = int(os.environ.get("PECHECK_SEED", DEFAULT_SEED))
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise ValueError(f"seed: {seed!r} must be an integer in [0, 2^64)")
    if framework not in _FRAMEWORKS:
        raise ValueError(f"framework: '{framework}' is not numpy, torch or jax")
    if batch is not None and (isinstance(batch, bool) or not isinstance(batch, int) or batch < 1):
        raise ValueError(f"batch: {batch!r} must be an integer >= 1 (the most cases a call) or None")
    if batch is not None and (cos_sin is not None or produces_cos_sin is not None):
        raise ValueError("batch: not with cos_sin or produces_cos_sin (their tables are built per call): "
                         "check such a function unbatched")
    if framework == "jax":
        _jax_ready(in_place, isolate)
    if not isinstance(properties, str) or not properties:
        raise ValueError("properties: a glob over property ids, e.g. 'rope.*'")
    if not (isinstance(timeout, (int, float)) and timeout > 0):
        raise ValueError(f"timeout: {timeout!r} must be a number of seconds > 0")
    if max_position is not None and (isinstance(max_position, bool) or not isinstance(max_position, int)
                                     or not 1 <= max_position < 2**24):
        raise ValueError(f"max_position: {max_position!r} must be an integer in [1, 2^24) or None")
    if contract is not None and contract not in contracts_of(full_op):
        raise ValueError(f"contract: {contract!r} is not one of {op}'s: {', '.join(contracts_of(full_op))} "
                         "(or None: the strongest met)")
    mode, convention_json = _mode(convention)
    form_names = _forms(forms, full_op, fn)
    form = _cos_sin_form(cos_sin, produces_cos_sin, full_op, convention, max_position, fn)
    device = _device(device, framework)

    from . import _core
    from ._invoke import Invoker

    catalogue = _core.catalogue()
    if not any(p["op"] == full_op and fnmatch.fnmatchcase(p["id"], properties) for p in catalogue):
        raise ValueError(f"properties: '{properties}' matches no property of {full_op}")
    name = _name_of(fn)
    if (absent := _device_absent(device)) is not None:
        return _skipped_everywhere(name, full_op, catalogue, properties, dtypes, seed, cases, absent)
    invoker = Invoker(fn, framework, bool(in_place), form, device)

    sys.stdout.flush()
    sys.stderr.flush()
    global _checking
    _checking = True
    try:
        with _jax_compilations_shared(framework == "jax"):
            raw = _core.run(invoker, name, full_op, mode, convention_json, list(dtypes), int(cases), int(seed),
                            properties, bool(isolate), float(timeout), int(max_position or 0), contract or "",
                            form_names, ftz, int(batch or 0))
    finally:
        _checking = False

    def replay(r, contract_used, top):
        return _replay(name, op, convention, framework, in_place, top or None, contract_used, seed, r, form_names,
                       {"cos_sin": cos_sin, "produces_cos_sin": produces_cos_sin,
                        "device": None if device == "cpu" else device,
                        "ftz": True if ftz else None, "batch": batch})  # each stated only when set

    _raise_on_call_mismatch(name, raw["results"])
    results = [_result(r, replay) for r in raw["results"]]
    order = {p["id"]: i for i, p in enumerate(catalogue)}
    results.sort(key=lambda r: (order.get(r.property, len(order)), _DTYPES.index(r.dtype)))
    verdicts = {v["dtype"]: verdict_of(v, lambda m: replay({"property": m["property"], "dtype": v["dtype"]},
                                                            m["contract"], max_position))
                for v in raw["contracts"]}
    coverage = raw["coverage"]
    return Report(function=name, op=full_op, seed=seed, cases=cases, results=tuple(results), contracts=verdicts,
                  ftz=ftz, never_exercised=tuple(coverage.get("never_exercised", ())), coverage=coverage.get("line", ""))


def _forms(forms, full_op, fn):
    """check()'s forms= as a list of names, each known, each keyword form one fn can take."""
    if forms is None:
        return []
    if full_op != "attention":
        raise ValueError(f"forms: only attention takes forms ({full_op} has one call form)")
    names = list(ATTENTION_FORMS) if forms == "all" else [forms] if isinstance(forms, str) else list(forms)
    for f in names:
        if f not in ATTENTION_FORMS:
            raise ValueError(f"forms: unknown form {f!r} (known: {', '.join(ATTENTION_FORMS)}, or 'all')")
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # no signature to check against: the calls will tell
        return sorted(set(names))
    takes_any = any(p.kind is p.VAR_KEYWORD for p in params.values())
    for f in _FORM_KEYWORDS:
        if f in names and f not in params and not takes_any:
            raise ValueError(f"forms: '{f}' is declared, so each call passes {f}=, but fn takes no '{f}' parameter")
    return sorted(set(names))


def _jax_ready(in_place, isolate):
    """framework="jax": JAX imports, fn returns its result (JAX arrays are immutable), and each
    forked child can start its own XLA backend."""
    if in_place:
        raise ValueError("in_place: JAX arrays are immutable, so a framework='jax' function returns its result; "
                         "it cannot change x in place")
    try:
        import jax  # noqa: F401
        import ml_dtypes  # noqa: F401  (jax's own dependency: the bfloat16 of jnp arrays)
    except ImportError as e:
        raise ImportError(f"framework: 'jax' needs jax, which does not import here ({type(e).__name__}: {e})") from None
    if isolate and _jax_backend_started():
        # XLA's thread pools do not survive fork(): a child of a process whose backend runs
        # deadlocks on its first computation (JAX warns "os.fork() was called ..."), and starting a
        # fresh backend in the child aborts in absl's mutex. Measured with jax 0.10.2, docs/python.md.
        raise ValueError("isolate: JAX has already computed in this process, and a forked child of it deadlocks "
                         "(XLA's threads do not survive fork()): call check before JAX runs here, or pass "
                         "isolate=False")


@contextlib.contextmanager
def _jax_compilations_shared(jax_used: bool) -> Iterator[None]:
    """framework="jax": the forked children share one XLA compilation cache, a directory of this
    check's, so a shape compiled in one property's child is read back in the next instead of
    compiled again (an eager Keras layer compiles each op for each new shape: 0.65 s a shape,
    measured). Left alone where the caller set a cache directory of their own."""
    if not jax_used:
        yield
        return
    import jax

    if getattr(jax.config, "jax_compilation_cache_dir") is not None:
        yield
        return
    keys = ("jax_compilation_cache_dir", "jax_persistent_cache_min_compile_time_secs",
            "jax_persistent_cache_min_entry_size_bytes")
    before = {k: getattr(jax.config, k) for k in keys}
    with tempfile.TemporaryDirectory(prefix="pecheck-xla-") as cache:
        jax.config.update("jax_compilation_cache_dir", cache)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)  # every compilation, eager ops too
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
        try:
            yield
        finally:
            for k, v in before.items():
                jax.config.update(k, v)


def _jax_backend_started():
    """Whether this process has started a JAX backend (made an array, listed devices). JAX has no
    public question for it; where its private one is gone, the answer is no (a child that then
    deadlocks is reported as hung after timeout)."""
    try:
        from jax._src import xla_bridge

        return bool(xla_bridge.backends_are_initialized())
    except (ImportError, AttributeError):
        return False


def _device(device, framework):
    """check()'s device= as a torch device string ("cpu" when not given)."""
    if device is None:
        return "cpu"
    if not isinstance(device, str) or not device:
        raise ValueError(f"device: {device!r} is not a device name such as 'cpu' or 'cuda'")
    if device != "cpu" and framework != "torch":
        raise ValueError(f"device: only framework='torch' puts tensors on a device ('{device}' with {framework})")
    return device


def _device_absent(device):
    """Why this machine has no such device, or None (it has, or it is the CPU)."""
    if device == "cpu":
        return None
    import torch

    if device.startswith("cuda"):
        # Only asked, never used here: a parent that has initialised CUDA cannot fork children that
        # use it, and each property runs in a forked child.
        if not torch.cuda.is_available():
            return f"device '{device}': this machine has none (torch.cuda.is_available() is False)"
        return None
    try:
        torch.empty(1, device=device)
    except (RuntimeError, ValueError) as e:
        return f"device '{device}': {str(e).splitlines()[0]}"
    return None


def _skipped_everywhere(name, full_op, catalogue, properties, dtypes, seed, cases, reason):
    """The report of a check that could not run at all: every selected property x dtype a skip."""
    rows = [Result(property=p["id"], dtype=dt, verdict="skip", cases=0, nontrivial_cases=0, max_error_u=None,
                   bound_u=None, direction="at_most", property_seed=0, statement=p["statement"], doc=p["doc"],
                   seconds=0.0, encoder=name, message=reason)
            for p in catalogue if p["op"] == full_op and fnmatch.fnmatchcase(p["id"], properties)
            for dt in dtypes if dt in p["dtypes"]]
    return Report(function=name, op=full_op, seed=seed, cases=cases, results=tuple(rows))


def _cos_sin_form(cos_sin, produces, full_op, convention, max_position, fn):
    """check()'s cos_sin= or produces_cos_sin= as the Invoker's form (pecheck.cos_sin), or None."""
    if cos_sin is None and produces is None:
        return None
    from .cos_sin import CosSinForm, check_layout

    name = "cos_sin" if cos_sin is not None else "produces_cos_sin"
    if full_op != "rope_apply":
        raise ValueError(f"{name}: only rope is written around a cos/sin cache, not {full_op}")
    if cos_sin is not None and produces is not None:
        raise ValueError("cos_sin: fn either applies a cos/sin (cos_sin=) or produces one (produces_cos_sin=), not both")
    layout = check_layout(name, cos_sin if cos_sin is not None else produces)
    if cos_sin is not None and not isinstance(convention, dict):
        raise ValueError("cos_sin: needs the convention stated as a dict: the cos and sin fn is handed are that "
                         "convention's")
    if layout == "cos_sin_cache" and (produces is not None or max_position is None):
        raise ValueError(f"{name}: 'cos_sin_cache' is a table fn is handed (cos_sin=), of max_position + 1 rows: "
                         "state max_position")
    pairs = convention.get("layout", "half_split") if isinstance(convention, dict) else "half_split"
    try:  # fn(q, k, ...): both handed over, as the kernels take them
        params = inspect.signature(fn).parameters
        pairwise = cos_sin is not None and "q" in params and "k" in params
    except (TypeError, ValueError):
        pairwise = False
    return CosSinForm(layout, produces is not None, convention if isinstance(convention, dict) else None, pairs,
                      max_position, pairwise)


def _raise_on_call_mismatch(name, rows):
    """A parameter of fn that pecheck's call never fills is the caller's error, not a finding about
    fn: one ValueError naming it (the first such case's reason), not a failure per property. A
    keyword fn merely has no parameter for declines those cases only (their skip says why)."""
    from ._invoke import CALL_MISMATCH, REQUIRES

    for r in rows:
        message = r.get("message") or ""
        at = message.find(CALL_MISMATCH)
        if at >= 0 and REQUIRES in message[at:]:
            raise ValueError(f"fn: {name} cannot be called as pecheck calls it: " + message[at:].splitlines()[0])


def _result(r, replay):
    """One row of _core's JSON as a Result: the replay line for a failure (under the contract and
    position ceiling the row ran with), infinities restored."""
    contract_used, top = r.pop("contract", "exact") or "exact", r.pop("max_position", 0)
    r["replay"] = replay(r, contract_used, top) if r["verdict"] in ("fail", "crash") else ""
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


def _replay(name, op, convention, framework, in_place, max_position, contract, seed, r, forms=(), keywords=None):
    """The call that runs exactly this result's cases again (its seed is derived from the run's)."""
    stated = repr(convention)
    args = [name, f"op={op!r}", f"convention={stated if len(stated) <= 160 else '...'}"]
    if framework != "numpy":
        args.append(f"framework={framework!r}")
    if in_place:
        args.append("in_place=True")
    if forms:
        args.append(f"forms={sorted(forms)!r}")
    args += [f"{k}={v!r}" for k, v in (keywords or {}).items() if v is not None]
    if max_position is not None:
        args.append(f"max_position={max_position}")
    args.append(f"contract={contract!r}")
    args += [f"seed={seed}", f"properties={r['property']!r}", f"dtypes=({r['dtype']!r},)"]
    return f"pecheck.check({', '.join(args)})  # under pytest: --pecheck-seed {seed}"


def assert_holds(fn: Callable[..., Any], op: str = "rope", convention: Union[Mapping[str, Any], str, None] = None,
                 **kwargs: Any) -> Report:
    """check(), then fails (AssertionError) with every failing property's statement, shrunk
    counterexample, error against bound, page and replay line. Returns the Report when it holds."""
    from .testing import assert_holds as _assert_holds

    return _assert_holds(fn, op, convention, **kwargs)
