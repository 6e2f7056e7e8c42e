"""transformers' RoPE taken apart as models call it: apply_rotary_pos_emb handed pecheck's exact
cos and sin (cos_sin="rotate_half"), and the rotary module as a cos/sin producer
(produces_cos_sin="rotate_half"), each checked as a RoPE (docs/python.md, "cos/sin caches").
Runs on transformers 5.x and 4.49."""
import pytest

pytest.importorskip("transformers")

import pecheck  # noqa: E402
import hf_rope  # noqa: E402
import torch  # noqa: E402
from transformers.models.llama.configuration_llama import LlamaConfig  # noqa: E402
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb  # noqa: E402

CASES = 30
LLAMA = {"rope_theta": 10000.0, "head_dim": hf_rope.HEAD_DIM}


def apply(q, k, cos, sin):
    """q, k (n, heads, d), cos and sin (n, d) -> apply_rotary_pos_emb's (batch, heads, seq, d) and back;
    pecheck hands q and k the same values and checks that both come back rotated alike."""
    to_hf, back = (lambda t: t.transpose(0, 1).unsqueeze(0)), (lambda t: t[0].transpose(0, 1))
    q_out, k_out = apply_rotary_pos_emb(to_hf(q), to_hf(k), cos.unsqueeze(0), sin.unsqueeze(0))
    return back(q_out), back(k_out)


def producer(rope_theta, rope_scaling=None):
    config = LlamaConfig(hidden_size=2 * hf_rope.HEAD_DIM, num_attention_heads=2, head_dim=hf_rope.HEAD_DIM,
                         max_position_embeddings=8192, **hf_rope.rope_kwargs(rope_theta, rope_scaling))
    rotary = LlamaRotaryEmbedding(config=config)

    def produce(x, positions):
        with torch.no_grad():
            cos, sin = rotary(x, positions.unsqueeze(0))
        return cos[0], sin[0]

    return produce


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_apply_rotary_pos_emb_handed_exact_cos_sin_meets_dtype_trig(dtype):
    report = pecheck.check(apply, "rope", LLAMA, cos_sin="rotate_half", framework="torch", dtypes=dtype,
                           cases=CASES)
    assert report.ok, report.summary()
    assert report.contract(dtype) in ("exact", "dtype-trig"), report.summary()


def test_the_rotary_module_as_a_producer_meets_fp32_angles():
    report = pecheck.check(producer(10000.0), "rope", LLAMA, produces_cos_sin="rotate_half", framework="torch",
                           dtypes="f32", cases=CASES)
    assert report.ok and report.contract("f32") == "fp32-angles", report.summary()


def test_a_yarn_producer_carries_its_attention_factor():
    yarn = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 8192}
    report = pecheck.check(producer(10000.0, yarn), "rope", dict(LLAMA, rope_scaling=yarn),
                           produces_cos_sin="rotate_half", framework="torch", dtypes="f32", cases=CASES,
                           properties="rope.agrees_with_reference")
    assert report.results[0].verdict == "pass", report.results[0].explain()
