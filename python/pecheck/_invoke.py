"""The Python side of one call: pecheck's float32 arrays to the user's framework and dtype, the
call, and the output back to a float32 array of the expected shape, or an exception naming what
was wrong with it (pecheck._core turns the exception into a failed case)."""

import collections
import functools
import hashlib
import inspect
import itertools
import json
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

import numpy as np

# Starts the reason of a case declined because fn's parameters do not match pecheck's call: check()
# turns one that names a required parameter pecheck never passes into a ValueError.
CALL_MISMATCH = "fn's parameters do not match pecheck's call"
REQUIRES = "it requires"  # a mismatch naming a required parameter the call does not fill

# The inputs a function changes when it works in place, per operation.
_IN_PLACE = {"rope_apply": "x", "learned_add": "x", "rope2d_apply": "x", "mrope_apply": "x"}
_FLOAT_DTYPES = ("f32", "bf16", "f16")


def round_to_bf16(a):
    """Rounds float32 values to the nearest bfloat16 (ties to even), kept in float32."""
    a = np.ascontiguousarray(a, dtype=np.float32)
    bits = a.view(np.uint32)
    rounded = ((bits + (0x7FFF + ((bits >> 16) & 1))) & 0xFFFF0000).astype(np.uint32)
    out = rounded.view(np.float32).copy()
    nan = np.isnan(a)
    out[nan] = a[nan]
    return out


def to_storage(a, dtype):
    """float32 values rounded to the storage dtype, as pecheck measures them."""
    if dtype == "f32":
        return np.asarray(a, dtype=np.float32)
    if dtype == "f16":
        return np.asarray(a, dtype=np.float32).astype(np.float16).astype(np.float32)
    return round_to_bf16(a)


class Invoker:
    """Calls fn, once per call of any operation (its name comes with each call). framework: "numpy",
    "torch" or "jax"; in_place: fn modifies its input (x) and returns None; a spec, when the call
    brings one (convention="spec"), is passed as a dict. form: a RoPE cos/sin form (pecheck.cos_sin),
    which makes fn's call from the rope call's x and positions."""

    def __init__(self, fn, framework, in_place, form=None, device="cpu"):
        self.fn, self.framework, self.in_place, self.form, self.device = fn, framework, in_place, form, device
        self.signature: Optional[inspect.Signature]
        try:  # a builtin or C function may have no signature: it is then called as it is
            self.signature = inspect.signature(fn)
        except (TypeError, ValueError):
            self.signature = None
        # (op, keywords of a call) -> why fn cannot take them ("" if it can): bound once each
        self._mismatch: Dict[Tuple[str, ...], str] = {}
        # A parameter named dtype, which a keyword reaches, is told the dtype of each call (in the
        # framework's own object); any other function is called exactly as before.
        self.takes_dtype = self.signature is not None and any(
            p.name == "dtype" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
            for p in self.signature.parameters.values())
        if framework == "torch":
            import torch

            self.torch = torch
            self.torch_dtypes = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
        elif framework == "jax":
            # Imported only: nothing here starts JAX's backend, which a forked child could not use
            # (pecheck.check refuses to fork once it runs). Each child starts its own on first use.
            import jax
            import jax.numpy as jnp
            import ml_dtypes  # a dependency of jax: its bfloat16 is the one jnp arrays hold

            self.jax, self.jnp = jax, jnp
            self.jax_dtypes = {"f32": jnp.float32, "bf16": jnp.bfloat16, "f16": jnp.float16}
            self.host_dtypes = {"f32": np.float32, "bf16": ml_dtypes.bfloat16, "f16": np.float16}

    def dtype_object(self, dtype: str) -> Any:
        """The call's dtype as fn's framework names it: torch.bfloat16, jnp.bfloat16, np.float16, and
        for NumPy's bf16 (whose values travel in float32 arrays) ml_dtypes.bfloat16, or the string
        "bfloat16" where ml_dtypes does not import."""
        if self.framework == "torch":
            return self.torch_dtypes[dtype]
        if self.framework == "jax":
            return self.jax_dtypes[dtype]
        if dtype == "bf16":
            try:
                import ml_dtypes
            except ImportError:
                return "bfloat16"
            return ml_dtypes.bfloat16
        return {"f32": np.float32, "f16": np.float16}[dtype]

    def _to_framework(self, a, dtype, name=""):
        if a.dtype == np.int64:
            if self.framework == "jax":
                return self._jax_integers(a, name)
            return self.torch.from_numpy(a).to(self.device) if self.framework == "torch" else a
        if self.framework == "torch":
            # torch.from_numpy shares the buffer; .to() converts (a copy only for bf16 and f16, or
            # to another device).
            return self.torch.from_numpy(a).to(self.device, self.torch_dtypes[dtype])
        if self.framework == "jax":
            # Converted on the host (ml_dtypes; exact, pecheck's values being the dtype's), then
            # handed to JAX as they are: no XLA computation touches them first.
            return self.jnp.asarray(a.astype(self.host_dtypes[dtype]))
        # NumPy has no bfloat16: bf16 values travel in float32 arrays (exactly representable).
        return a.astype(np.float16) if dtype == "f16" else a

    def _jax_integers(self, a, name):
        """Positions as JAX holds integers: int64 under jax_enable_x64, int32 (JAX's default) else.
        pecheck draws positions within +-(2^24 - 1) (harness/tolerance.hpp's kMaxPosition), far inside
        int32, so nothing is lost; checked anyway, so that a position int32 cannot hold is never wrapped."""
        target = self.jax.dtypes.canonicalize_dtype(np.int64)  # int32 unless x64 is on (config or context)
        if target != np.int64 and a.size:
            info = np.iinfo(target)
            low, high = int(a.min()), int(a.max())
            if low < info.min or high > info.max:
                raise ValueError(f"{name or 'an integer input'} reaches {low if low < info.min else high}, past "
                                 f"{target}, which JAX's integers are with jax_enable_x64 off (turn it on)")
        return self.jnp.asarray(a.astype(target))

    def _from_framework(self, out, what):
        if self.framework == "torch":
            if not isinstance(out, self.torch.Tensor):
                raise TypeError(f"{what} is a {type(out).__name__}, not a torch.Tensor")
            if not out.is_floating_point():
                raise TypeError(f"{what} has dtype {out.dtype}, not a floating dtype")
            return out.detach().to("cpu", self.torch.float32).numpy()
        if self.framework == "jax":
            if not isinstance(out, self.jax.Array):
                raise TypeError(f"{what} is a {type(out).__name__}, not a jax.Array")
            if not self.jnp.issubdtype(out.dtype, self.jnp.floating):
                raise TypeError(f"{what} has dtype {out.dtype}, not a floating dtype")
            # To float32 on the host (ml_dtypes for bf16): exact, and no XLA computation between
            # fn's result and what is judged.
            return np.asarray(out).astype(np.float32)
        if not isinstance(out, np.ndarray):
            raise TypeError(f"{what} is a {type(out).__name__}, not a numpy.ndarray")
        # ml_dtypes' bfloat16 (kind "V" to NumPy): what x.astype(dtype) makes of a bf16 call's values
        if out.dtype.kind != "f" and out.dtype.name != "bfloat16":
            raise TypeError(f"{what} has dtype {out.dtype}, not a floating dtype")
        return out.astype(np.float32)

    def _check_call(self, op, passed):
        """Declines a case fn's parameters cannot take (pecheck.Unsupported, CALL_MISMATCH first),
        before calling it: a required parameter pecheck does not pass, or a keyword fn has no
        parameter for. Not fn's failure: check() names it."""
        if self.signature is None:
            return
        keys = (op, *passed)
        if keys not in self._mismatch:
            self._mismatch[keys] = self._why_not(op, passed)
        if self._mismatch[keys]:
            from . import Unsupported

            raise Unsupported(self._mismatch[keys])

    def _why_not(self, op, passed):
        assert self.signature is not None  # for the type checker: _check_call calls this only with one
        try:
            self.signature.bind(**passed)
            return ""
        except TypeError:
            params = self.signature.parameters.values()
            takes_any = any(p.kind is p.VAR_KEYWORD for p in params)
            required = [p.name for p in params if p.default is p.empty
                        and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
            missing = [n for n in required if n not in passed]
            unknown = [] if takes_any else [k for k in passed if k not in self.signature.parameters]
            what = []
            if missing:
                what.append(f"{REQUIRES} " + ", ".join(f"'{n}'" for n in missing) + ", which this call does not pass")
            if unknown:
                what.append("it takes no " + ", ".join(f"'{n}'" for n in unknown))
            return (f"{CALL_MISMATCH}: pecheck calls {op} as fn({', '.join(passed)}); "
                    + ("; ".join(what) or "its positional-only parameters cannot be passed by name"))

    def __call__(self, op, dtype, inputs, sizes, spec, out_shape):
        """One call of fn: pecheck's float32 (int64) NumPy inputs in, the output as pecheck measures it
        (float32 rounded to the storage dtype, of shape out_shape) back."""
        args = {k: self._to_framework(v, dtype, k) for k, v in inputs.items()}
        kwargs = dict(sizes)
        if spec is not None:
            kwargs["spec"] = spec
        if self.takes_dtype:
            kwargs["dtype"] = self.dtype_object(dtype)
        if self.form is not None:  # a cos/sin form: fn's own keywords, from the rope call's x and positions
            told = {"dtype": kwargs["dtype"]} if self.takes_dtype else {}
            self._check_call(op, dict.fromkeys(self.form.keywords() + tuple(told)))
            fn = functools.partial(self.fn, **told) if told else self.fn
            returned = self.form(fn, args["x"], args["positions"], _FormIO(self, dtype))
        else:
            self._check_call(op, {**args, **kwargs})
            returned = self.fn(**args, **kwargs)
        if self.in_place:
            name = _IN_PLACE.get(op)
            if name is None:
                raise TypeError(f"in_place=True, but {op} has no input it could change in place")
            if returned is not None:
                raise TypeError(f"in_place=True, but the function returned a {type(returned).__name__}, not None")
            returned, what = args[name], f"the input {name}, changed in place,"
        else:
            if returned is None:
                raise TypeError("the function returned None (pass in_place=True if it works in place)")
            what = "the output"
        out = self._from_framework(returned, what)
        if tuple(out.shape) != tuple(out_shape):
            raise ValueError(f"{what} has shape {tuple(out.shape)}, expected {tuple(out_shape)}")
        return np.ascontiguousarray(to_storage(out, dtype), dtype=np.float32)

    def batch_session(self, most: int) -> "BatchSession":
        """A fresh session of batched calls, up to `most` cases a call (one per property run)."""
        return BatchSession(self, most)

    def answer_batch(self, requests: List["_Request"], most: int) -> List[Any]:
        """Each request's answer (its output, or the exception fn raised for it), fn called once for
        each group of requests that can share a call (_group_key), `most` at a time. A call that raises
        anything but Unsupported is made again for each of its requests alone, so that an exception
        (an IndexError for a position outside a table, a ValueError on a NaN) is the answer of the
        case that caused it only; an Unsupported declines the group, whose every request shares
        what fn may decline by (dtype, sizes, spec, head_dim)."""
        from . import Unsupported

        groups: Dict[Tuple[Any, ...], List[int]] = {}
        for i, r in enumerate(requests):
            groups.setdefault(_group_key(r), []).append(i)
        answers: List[Any] = [None] * len(requests)

        def answer(indices):
            outs: List[Any]
            try:
                outs = list(self._call_stacked([requests[i] for i in indices]))
            except Unsupported as e:
                outs = [e] * len(indices)
            except Exception as e:  # noqa: BLE001 (fn's exception is the case's result)
                if len(indices) > 1:
                    for i in indices:
                        answer([i])
                    return
                outs = [e]
            for i, out in zip(indices, outs):
                answers[i] = out

        for indices in groups.values():
            for start in range(0, len(indices), most):
                answer(indices[start:start + most])
        return answers

    def _call_stacked(self, requests: List["_Request"]) -> List[np.ndarray]:
        """One call of fn for requests that share a group: each input stacked on a new leading axis,
        padded where its op's axes allow (_PADDED); each request's output cut back to its own shape."""
        first = requests[0]
        axes = _PADDED.get(first.op, {})
        extent: Dict[str, int] = {}
        for r in requests:
            for name, a in r.inputs.items():
                for size, axis in zip(a.shape, axes.get(name, ())):
                    if axis:
                        extent[axis] = max(extent.get(axis, 0), size)

        def padded(a, name):
            widths = [(0, extent[axis] - size if axis else 0)
                      for size, axis in itertools.zip_longest(a.shape, axes.get(name, ()))]
            return np.pad(a, widths) if any(w for _, w in widths) else a

        stacked = {name: np.stack([padded(r.inputs[name], name) for r in requests]) for name in first.inputs}
        out_shape = tuple(extent[axis] if axis else size
                          for size, axis in itertools.zip_longest(first.out_shape, axes.get("out", ())))
        out = self(first.op, first.dtype, stacked, first.sizes, first.spec, (len(requests), *out_shape))
        return [np.ascontiguousarray(out[(i,) + tuple(slice(0, size) for size in r.out_shape)])
                for i, r in enumerate(requests)]


# Under check(batch=), the axes along which each operation's cases may be padded to share a call:
# per input, an axis name where its rows are independent (a token's RoPE depends on its own x and
# position, a head's on its own x), None where the size is part of the call (head_dim, a table);
# "out" names the output's. Padding is zeros (position 0, x 0), cut away from each case's output.
# Operations absent here (ALiBi, T5, Shaw, attention: each output entry depends on a pair of
# positions, or every key) share a call only between cases of the same shapes.
_TOKENS_HEADS = ("tokens", "heads", None)
_PADDED: Dict[str, Dict[str, Tuple[Optional[str], ...]]] = {
    "rope_apply": {"x": _TOKENS_HEADS, "positions": ("tokens",), "out": _TOKENS_HEADS},
    "rope2d_apply": {"x": _TOKENS_HEADS, "rows": ("tokens",), "cols": ("tokens",), "out": _TOKENS_HEADS},
    "mrope_apply": {"x": _TOKENS_HEADS, "temporal": ("tokens",), "height": ("tokens",), "width": ("tokens",),
                    "out": _TOKENS_HEADS},
    "learned_add": {"x": ("tokens", None), "positions": ("tokens",), "out": ("tokens", None)},
    "sinusoidal_table": {"positions": ("tokens",), "out": ("tokens", None)},
    "sinusoidal2d_table": {"rows": ("tokens",), "cols": ("tokens",), "out": ("tokens", None)},
}


class _Request(NamedTuple):
    """One call pecheck made, as the Invoker takes it."""
    op: str
    dtype: str
    inputs: Dict[str, np.ndarray]
    sizes: Dict[str, Any]
    spec: Optional[Dict[str, Any]]
    out_shape: Tuple[int, ...]


def _json(v) -> str:
    return json.dumps(v, sort_keys=True, default=str)


def _group_key(r: _Request) -> Tuple[Any, ...]:
    """What requests sharing one call of fn must share: op, dtype, keywords, spec, and each input's
    and the output's sizes along the axes that are not padded."""
    axes = _PADDED.get(r.op, {})

    def fixed(name, shape):
        return tuple(None if axis else size for size, axis in itertools.zip_longest(shape, axes.get(name, ())))

    return (r.op, r.dtype, _json(r.sizes), _json(r.spec), fixed("out", r.out_shape),
            tuple((name, a.dtype.str, fixed(name, a.shape)) for name, a in sorted(r.inputs.items())))


def _content_key(r: _Request) -> bytes:
    """The request's whole content (bit for bit: NaNs and signed zeros included), as a digest. On
    every call of a batched pass: repr, not JSON, for the small parts."""
    h = hashlib.blake2b(repr((r.op, r.dtype, sorted(r.sizes.items()), r.out_shape)).encode(), digest_size=20)
    if r.spec is not None:
        h.update(_json(r.spec).encode())
    for name, a in sorted(r.inputs.items()):
        h.update(repr((name, a.dtype.str, a.shape)).encode())
        h.update(np.ascontiguousarray(a).tobytes())
    return h.digest()


class BatchSession:
    """The calls of one property run under check(batch=), as interface/encoder.hpp's CallBatcher
    states them: the runner makes its passes over the same draws; each call's answer is kept by its
    content and occurrence (the n-th call of the same content in a pass), so a pass gets the answers
    of the last; while deferring, a new call returns None (left unanswered) until flush() sends every
    deferred call in as few calls of fn as _group_key allows."""

    def __init__(self, invoker: Invoker, most: int):
        self.invoker, self.most = invoker, most
        self.defer = False
        self.deferred = 0  # calls deferred since the pass began (read by the runner)
        self._answers: Dict[Tuple[bytes, int], Any] = {}
        self._made: "collections.Counter[bytes]" = collections.Counter()
        self._pending: List[Tuple[Tuple[bytes, int], _Request]] = []

    def begin_pass(self, defer: bool) -> None:
        self.defer, self.deferred = defer, 0
        self._made.clear()

    def __call__(self, op, dtype, inputs, sizes, spec, out_shape):
        request = _Request(op, dtype, dict(inputs), dict(sizes), spec, tuple(out_shape))
        content = _content_key(request)
        key = (content, self._made[content])
        self._made[content] += 1
        if key not in self._answers:
            if self.defer:
                self._pending.append((key, request))
                self.deferred += 1
                return None
            self._answers[key] = self.invoker.answer_batch([request], self.most)[0]
        answer = self._answers[key]
        if isinstance(answer, BaseException):
            raise answer
        return answer

    def flush(self) -> None:
        pending, self._pending = self._pending, []
        answers = self.invoker.answer_batch([r for _, r in pending], self.most)
        for (key, _), answer in zip(pending, answers):
            self._answers[key] = answer


class _FormIO:
    """What a cos/sin form (pecheck.cos_sin) needs of the Invoker: float64 tables in the call's
    framework and dtype (rounded once to it), framework tensors as NumPy, and an output."""

    def __init__(self, invoker, dtype):
        self.invoker, self.dtype = invoker, dtype

    def table(self, a):
        if self.invoker.framework == "torch":
            torch = self.invoker.torch
            return torch.from_numpy(np.ascontiguousarray(a)).to(self.invoker.device, self.invoker.torch_dtypes[self.dtype])
        if self.invoker.framework == "jax":  # float64 rounded once to the dtype on the host, as torch's .to() does
            host = np.asarray(a, dtype=np.float64).astype(self.invoker.host_dtypes[self.dtype])
            return self.invoker.jnp.asarray(host)
        stored = to_storage(np.asarray(a, dtype=np.float64), self.dtype)
        return stored.astype(np.float16) if self.dtype == "f16" else stored

    def copy(self, t):
        if self.invoker.framework == "jax":  # immutable: a second array of the same values
            return self.invoker.jnp.array(t, copy=True)
        return t.clone() if self.invoker.framework == "torch" else np.array(t, copy=True)

    def numpy(self, t):
        if self.invoker.framework == "torch":
            t = t.detach().cpu()
            return (t if not t.is_floating_point() else t.to(self.invoker.torch.float64)).numpy()
        if self.invoker.framework == "jax":
            a = np.asarray(t)  # bf16 as ml_dtypes' bfloat16, which NumPy's float64 takes exactly
            return a.astype(np.float64) if self.invoker.jnp.issubdtype(a.dtype, self.invoker.jnp.floating) else a
        return np.asarray(t)

    def output(self, a):
        if self.invoker.framework == "torch":
            return self.invoker.torch.from_numpy(a).to(self.invoker.device)
        if self.invoker.framework == "jax":  # float32 first, as the other frameworks' outputs are read back
            return self.invoker.jnp.asarray(np.asarray(a, dtype=np.float32))
        return a
