"""keras_hub's RotaryEmbedding (Keras 3 on JAX, XLA on the CPU), checked as a new user would: a
batched jax function of x (B, tokens, heads, head_dim) and positions (B, tokens), one layer a dtype.
It forms inv_freq with XLA's pow of an exponent XLA computes as a multiply by 1/d (two roundings),
and XLA flushes subnormals, inputs and results, to zero: stated with ftz=True, it meets fp32-angles
in every dtype with every law it takes passing (docs/error-model.md, rope.pair.fp32_angles, where
its f32 failure by 0.5% under the one-rounding term is recorded). head_dim is pinned to 64, as a
model's is, so that the eager layer compiles few shapes (docs/python.md, "JAX")."""
import os

import pytest

os.environ.setdefault("KERAS_BACKEND", "jax")  # read when keras is first imported
keras_hub = pytest.importorskip("keras_hub", reason="keras-hub is not installed (scripts/py-venv installs it)")
jnp = pytest.importorskip("jax.numpy")

import pecheck  # noqa: E402

LAYERS: dict = {}
LAWS = "rope.[aorc]*"  # agreement, orthogonal, offset invariance, relative, composition, call sequence


def keras_rope(x, positions, dtype):
    """The layer as a model calls it: positions given, the sequence axis 1, the features last."""
    name = {jnp.float32: "float32", jnp.bfloat16: "bfloat16", jnp.float16: "float16"}[dtype]
    if name not in LAYERS:
        LAYERS[name] = keras_hub.layers.RotaryEmbedding(max_wavelength=10000, dtype=name)
    return LAYERS[name](x, positions=positions)


def test_keras_hub_rotary_embedding_meets_fp32_angles_and_flushes_subnormals():
    report = pecheck.check(keras_rope, "rope", {"rope_theta": 10000.0, "head_dim": 64}, framework="jax",
                           batch=256, ftz=True, cases=30, properties=LAWS)
    assert report.ok, report.summary()
    assert "judged as flushing subnormals to zero" in report.summary()
    for dtype in ("f32", "bf16", "f16"):
        assert report.contract(dtype) == "fp32-angles", report.summary()
    assert all(r.verdict == "pass" and r.nontrivial_cases >= 25 for r in report.results), report.summary()
