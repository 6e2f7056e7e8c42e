"""framework="jax": fn receives jax Arrays of the dtype checked (jnp.bfloat16 and jnp.float16 as
themselves), positions as JAX's integers, and returns a floating jax.Array; each property runs in a
forked child that starts its own XLA backend. A `dtype` parameter is told the call's dtype in every
framework. JAX never runs in this pytest process itself: a child forked from a process whose
backend runs deadlocks, and check() refuses to fork one (asked of a subprocess below)."""
import functools
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import pecheck
from conftest import numpy_rope

jax = pytest.importorskip("jax", reason="jax does not import here (scripts/py-venv installs it)")
jnp = jax.numpy

HF = {"rope_theta": 10000.0}  # half_split: HF's rotate_half
INTERLEAVED = {"rope_theta": 10000.0, "layout": "interleaved"}
LAWS = "rope.[aro]*"  # agreement, relative, orthogonal, offset_invariance: a few seconds a dtype


def _angles(positions, d, base):
    inv_freq = 1.0 / (base ** (jnp.arange(0, d, 2, dtype=jnp.float32) / d))  # float32, as transformers
    return positions.astype(jnp.float32)[:, None] * inv_freq[None, :]


@jax.jit  # one compile per shape in each child, not one per operation
def jax_rope(x, positions, base=10000.0):
    """HF's rotate_half RoPE in JAX: angles in float32, cos and sin stored in x's dtype."""
    d = x.shape[-1]
    emb = jnp.concatenate([_angles(positions, d, base)] * 2, axis=-1)[:, None, :]
    rotated = jnp.concatenate([-x[..., d // 2:], x[..., : d // 2]], axis=-1)
    return x * jnp.cos(emb).astype(x.dtype) + rotated * jnp.sin(emb).astype(x.dtype)


@jax.jit
def jax_rope_interleaved(x, positions, base=10000.0):
    """GPT-J's pairs (2i, 2i + 1): right for INTERLEAVED, wrong for HF."""
    ang = _angles(positions, x.shape[-1], base)[:, None, :]
    c, s = jnp.cos(ang).astype(x.dtype), jnp.sin(ang).astype(x.dtype)
    a, b = x[..., 0::2], x[..., 1::2]
    return jnp.stack([a * c - b * s, a * s + b * c], axis=-1).reshape(x.shape)


@functools.lru_cache(maxsize=None)
def xla_flushes_subnormals():
    """Whether XLA here flushes subnormals to zero, as its CPU backend does. Asked of a subprocess:
    running JAX in this process would start its backend, and check() could no longer fork."""
    code = "import numpy as np, jax.numpy as jnp; print(float(jnp.asarray(np.float32(2.0**-140)) * 1.0))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    return float(out.stdout) == 0.0


@pytest.mark.parametrize("dtype", ["f32", "bf16", "f16"])
def test_a_correct_jax_rope_meets_fp32_angles(dtype):
    report = pecheck.check(jax_rope, "rope", HF, framework="jax", dtypes=dtype, cases=25, properties=LAWS)
    verdict = report.contracts[dtype]
    for law in ("rope.relative", "rope.offset_invariance"):
        r = report.result(law, dtype)
        assert r.verdict == "pass" and r.nontrivial_cases >= 20, (law, r)
    if dtype == "f16" or not xla_flushes_subnormals():
        assert report.ok, report.summary()
        assert verdict.met == "fp32-angles" and [m.contract for m in verdict.misses] == ["exact", "dtype-trig"]
        return
    # XLA on the CPU flushes subnormals to zero (f16 is spared: XLA computes it in float32, where f16's
    # subnormals are normal). Half of pecheck's tensors carry subnormals (harness/generators.hpp,
    # edge_values), so a correct f32 or bf16 RoPE fails exactly where its arithmetic cannot: at
    # position 0, R_0 = I keeps every value as it is in any float arithmetic, and a subnormal pair
    # comes back 0, missing agreement by about 1/u and orthogonality's R_0 = I. Unstated, that is a
    # failure (the next test states the platform's flush-to-zero); here it is asserted to be that.
    assert {r.property for r in report.failures} == {"rope.agrees_with_reference", "rope.orthogonal"}
    assert verdict.met is None
    fp32, u = verdict.misses[-1], {"f32": 2.0**-24, "bf16": 2.0**-8}[dtype]
    assert fp32.contract == "fp32-angles" and fp32.position == 0 and fp32.error_u > 0.5 / u, fp32  # 1/u: all lost
    orthogonal = report.result("rope.orthogonal", dtype)
    assert re.search(r"pos=\[0(,0)*\]", orthogonal.counterexample), orthogonal.counterexample
    # Its message names the lost pair (|x_p|, the norm of two subnormals at most, then |y_p| = 0) or,
    # under R_0 = I, the lost value.
    tiny = float(np.finfo(np.float32).tiny)  # the smallest normal float32 (and bfloat16)
    pair = re.search(r"\|x_p\| = ([0-9.e+-]+), \|y_p\| = 0\b", orthogonal.message)
    value = re.search(r"changed: (-?[0-9.e+-]+) -> -?0(;|$)", orthogonal.message)
    assert (pair and 0 < float(pair.group(1)) < 2**0.5 * tiny) or (value and 0 < abs(float(value.group(1))) < tiny), \
        orthogonal.message
    # And it says why, and what to state (dumpcheck/convention_hint.hpp asks fn at position 0).
    for law in ("rope.orthogonal", "rope.agrees_with_reference"):
        message = report.result(law, dtype).message
        assert "it flushes subnormal inputs to zero" in message and "ftz=True" in message, message


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_stated_flush_to_zero_the_correct_jax_rope_meets_fp32_angles(dtype):
    # ftz=True states the platform's convention: no input below FLT_MIN is drawn, every law is judged
    # as before, and the correct RoPE reads as what it is (docs/python.md, "Flush-to-zero").
    report = pecheck.check(jax_rope, "rope", HF, framework="jax", dtypes=dtype, cases=25, properties=LAWS, ftz=True)
    assert report.ok, report.summary()
    assert report.ftz and "judged as flushing subnormals to zero" in report.summary()
    assert report.contracts[dtype].met == "fp32-angles", report.summary()
    assert all(r.nontrivial_cases >= 20 for r in report.results), report.summary()


def test_interleaved_pairs_checked_as_half_split_fail_agreement():
    # f16, which XLA does not flush: the failure is the pairing's alone.
    wrong = pecheck.check(jax_rope_interleaved, "rope", HF, framework="jax", dtypes="f16", cases=20,
                          properties="rope.agrees_with_reference")
    assert not wrong.ok and wrong.contract("f16") is None
    first = wrong.contracts["f16"].misses[-1]
    assert first.position > 0 and first.error_u > 100, first  # at position 0 every pairing is R_0 = I
    right = pecheck.check(jax_rope_interleaved, "rope", INTERLEAVED, framework="jax", dtypes="f16", cases=20,
                          properties="rope.agrees_with_reference")
    assert right.ok and right.contract("f16") == "fp32-angles", right.summary()
    assert not pecheck._jax_backend_started()  # every JAX computation ran in the children


@pytest.mark.parametrize("returns, reason", [
    (lambda x: np.asarray(x), "TypeError: the output is a ndarray, not a jax.Array"),
    (lambda x: jnp.round(x).astype(jnp.int32), "TypeError: the output has dtype int32, not a floating dtype"),
])
def test_an_output_that_is_not_a_floating_jax_array_fails_its_case(returns, reason):
    report = pecheck.check(lambda x, positions: returns(x), "rope", HF, framework="jax", dtypes="f32", cases=5,
                           properties="rope.agrees_with_reference", contract="exact")
    (r,) = report.results
    assert r.verdict == "fail" and reason in r.message, r.message


def test_numpy_is_told_its_dtype():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    seen = []

    def rope(x, positions, dtype):
        seen.append(dtype)
        return numpy_rope(x, positions).astype(dtype)  # bf16: an ml_dtypes array, read back as it is

    report = pecheck.check(rope, "rope", INTERLEAVED, cases=5, properties="rope.agrees_with_reference",
                           isolate=False)
    assert report.ok, report.summary()
    assert set(seen) == {np.float32, ml_dtypes.bfloat16, np.float16}


def test_torch_is_told_its_dtype():
    torch = pytest.importorskip("torch")
    seen = []

    def rope(x, positions, dtype):
        seen.append((x.dtype, dtype))
        return torch.from_numpy(numpy_rope(x.float().numpy(), positions.numpy())).to(dtype)

    report = pecheck.check(rope, "rope", INTERLEAVED, framework="torch", cases=5,
                           properties="rope.agrees_with_reference", isolate=False)
    assert report.ok, report.summary()
    assert all(got is told for got, told in seen)
    assert {told for _, told in seen} == {torch.float32, torch.bfloat16, torch.float16}


@pytest.mark.parametrize("x64", [False, True])
def test_jax_is_told_its_dtype_and_gets_its_integers(x64):
    told = {"float32": jnp.float32, "bfloat16": jnp.bfloat16, "float16": jnp.float16}
    integers = jnp.int64 if x64 else jnp.int32

    def rope(x, positions, dtype):  # in the forked child: a wrong answer fails the case, saying so
        if dtype is not told[x.dtype.name] or positions.dtype != integers:
            raise AssertionError(f"told {dtype!r} for {x.dtype}, positions {positions.dtype}")
        out = numpy_rope(np.asarray(x).astype(np.float32), np.asarray(positions))  # float64, no XLA flush
        return jnp.asarray(out.astype(x.dtype))

    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", x64)  # configuration only: no backend starts here
    try:
        report = pecheck.check(rope, "rope", INTERLEAVED, framework="jax", cases=5,
                               dtypes="f32" if x64 else ("f32", "bf16", "f16"), properties="rope.agrees_with_reference")
    finally:
        jax.config.update("jax_enable_x64", before)
    assert report.ok and report.contract("f32") == "exact", report.summary()


def test_the_cos_sin_forms_hand_and_take_jax_tables():
    @jax.jit
    def rotate(x, cos, sin):  # transformers' apply_rotary_pos_emb, one sequence
        d = x.shape[-1]
        rotated = jnp.concatenate([-x[..., d // 2:], x[..., : d // 2]], axis=-1)
        return x * cos[:, None, :] + rotated * sin[:, None, :]

    def applies(x, cos, sin, dtype):  # told the dtype through the form too
        assert isinstance(cos, jax.Array) and cos.dtype == x.dtype == dtype, (cos.dtype, x.dtype, dtype)
        return rotate(x, cos, sin)

    @jax.jit
    def produces(x, positions):  # a rotary module's own cos and sin, angles in float32
        emb = jnp.concatenate([_angles(positions, x.shape[-1], 10000.0)] * 2, axis=-1)
        return jnp.cos(emb).astype(x.dtype), jnp.sin(emb).astype(x.dtype)

    # f16 for the applier, whose products XLA would flush in f32 and bf16 (as above); the producer's
    # tables are applied by pecheck, in float64.
    applied = pecheck.check(applies, "rope", HF, framework="jax", cos_sin="rotate_half", dtypes="f16", cases=20,
                            properties="rope.agrees_with_reference")
    assert applied.ok and applied.contract("f16") in ("exact", "dtype-trig"), applied.summary()
    produced = pecheck.check(produces, "rope", HF, framework="jax", produces_cos_sin="rotate_half",
                             dtypes=("f32", "bf16"), cases=20, properties="rope.agrees_with_reference")
    assert produced.ok, produced.summary()
    assert produced.contract("f32") == produced.contract("bf16") == "fp32-angles"


def test_in_place_is_refused():
    with pytest.raises(ValueError, match=r"^in_place: JAX arrays are immutable") as e:
        pecheck.check(jax_rope, "rope", HF, framework="jax", in_place=True)
    assert "\n" not in str(e.value)


def test_without_jax_the_framework_says_so(monkeypatch):
    monkeypatch.setitem(sys.modules, "jax", None)  # import jax now raises ImportError
    with pytest.raises(ImportError, match=r"^framework: 'jax' needs jax, which does not import here"):
        pecheck.check(jax_rope, "rope", HF, framework="jax")


def test_a_process_running_jax_is_refused_isolation_and_checks_in_process():
    script = textwrap.dedent("""
        import numpy as np, jax.numpy as jnp, pecheck
        from pecheck._invoke import Invoker

        def rope(x, positions):
            return jnp.asarray(x)  # R_0 = I, whatever the position: agreement fails

        jnp.zeros(1).block_until_ready()  # JAX's backend now runs in this process
        try:
            pecheck.check(rope, "rope", {"rope_theta": 1e4}, framework="jax", cases=5)
        except ValueError as e:
            print("refused:", e)
        report = pecheck.check(rope, "rope", {"rope_theta": 1e4}, framework="jax", cases=5, dtypes="f16",
                               isolate=False, properties="rope.agrees_with_reference", contract="exact")
        print("in process:", report.results[0].verdict)
        call = Invoker(rope, "jax", False)
        try:
            call("rope_apply", "f32", {"x": np.ones((1, 1, 2), np.float32), "positions": np.array([2**31])}, {},
                 None, (1, 1, 2))
        except ValueError as e:
            print("int32:", e)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("refused: isolate: JAX has already computed in this process"), out.stdout
    assert lines[1] == "in process: fail", out.stdout  # it ran, and the identity is caught
    assert lines[2] == ("int32: positions reaches 2147483648, past int32, which JAX's integers are with "
                        "jax_enable_x64 off (turn it on)"), out.stdout


def test_the_children_share_one_compilation_cache_and_the_callers_is_left_alone(tmp_path):
    # Each child records the cache directory it compiles into; an eager layer's ops compiled in one
    # property's child are then read back in the next (docs/python.md, "One compilation cache").
    seen = tmp_path / "seen"

    def rope(x, positions):
        with open(seen, "a") as f:
            f.write(f"{jax.config.jax_compilation_cache_dir} {jax.config.jax_persistent_cache_min_compile_time_secs}\n")
        return jax_rope(x, positions)

    report = pecheck.check(rope, "rope", HF, framework="jax", dtypes="f16", cases=5, properties="rope.[ar]*")
    assert report.ok, report.summary()
    dirs = {line.split()[0] for line in seen.read_text().splitlines()}
    assert len(dirs) == 1 and os.path.basename(dirs.pop()).startswith("pecheck-xla-"), seen.read_text()
    assert {line.split()[1] for line in seen.read_text().splitlines()} == {"0.0"}
    assert jax.config.jax_compilation_cache_dir is None  # restored, and the directory removed
    assert not pecheck._jax_backend_started()

    seen.unlink()
    mine = str(tmp_path / "mine")
    jax.config.update("jax_compilation_cache_dir", mine)
    try:
        pecheck.check(rope, "rope", HF, framework="jax", dtypes="f16", cases=5, properties="rope.relative")
    finally:
        jax.config.update("jax_compilation_cache_dir", None)
    assert {line.split()[0] for line in seen.read_text().splitlines()} == {mine}
