"""Liger-Kernel's Triton RoPE (liger_rotary_pos_emb) on the CPU, run by Triton's interpreter
(TRITON_INTERPRET=1, set before Liger's kernels are compiled), checked through the cos/sin form:
pecheck hands it the convention's exact tables (cos_sin="rotate_half"), as transformers' rotary
module hands them over in a model. In f32 and f16 it meets dtype-trig. In bf16 the interpreter
itself computes garbage (it turns R_0 x = x into other values: NumPy, which it runs on, has no
bfloat16), which says nothing about Liger's kernel on a GPU: asserted, so that a Triton release
that fixes it is noticed (docs/python.md, "cos/sin caches")."""
import os

import pytest

os.environ.setdefault("TRITON_INTERPRET", "1")  # read when Liger's triton.jit kernels are defined
torch = pytest.importorskip("torch")
rope = pytest.importorskip("liger_kernel.transformers.rope", reason="liger-kernel is not installed")

import pecheck  # noqa: E402

CASES = 20
LLAMA = {"rope_theta": 10000.0}


def liger(q, k, cos, sin):
    """q, k (n, heads, d) -> Liger's (batch, heads, seq, d) and back: both rotated, both checked."""
    to_liger, back = (lambda t: t.transpose(0, 1).unsqueeze(0).contiguous()), (lambda t: t[0].transpose(0, 1))
    q_out, k_out = rope.liger_rotary_pos_emb(to_liger(q), to_liger(k), cos.unsqueeze(0), sin.unsqueeze(0))
    return back(q_out), back(k_out)


@pytest.mark.skipif(os.environ["TRITON_INTERPRET"] != "1", reason="checks the interpreter's run on the CPU")
@pytest.mark.parametrize("dtype", ["f32", "f16"])
def test_liger_rope_is_a_rope(dtype):
    report = pecheck.check(liger, "rope", LLAMA, cos_sin="rotate_half", framework="torch", dtypes=dtype,
                           cases=CASES)
    assert report.ok, report.summary()
    assert report.contract(dtype) in ("exact", "dtype-trig"), report.summary()


@pytest.mark.skipif(os.environ["TRITON_INTERPRET"] != "1", reason="checks the interpreter's run on the CPU")
def test_the_interpreters_bf16_is_not_a_rope():
    report = pecheck.check(liger, "rope", LLAMA, cos_sin="rotate_half", framework="torch", dtypes="bf16",
                           cases=CASES, properties="rope.orthogonal")
    (r,) = report.results
    assert r.verdict == "fail" and "R_0 != I" in r.message, r.explain()
