"""RoPE around a precomputed cos/sin cache (issue 33, item 2): a function that applies the cos and
sin it is handed (cos_sin=LAYOUT), in each layout real kernels take, and a module's own cos/sin
producer (produces_cos_sin=LAYOUT), each checked as a RoPE; a planted bug in either fails."""
import numpy as np
import pytest

import pecheck

CASES = 30
LLAMA = {"rope_theta": 10000.0}


def rotate_half(x):
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def hf_apply(x, cos, sin):
    """transformers' apply_rotary_pos_emb, in the storage dtype: x * cos + rotate_half(x) * sin."""
    return x * cos[:, None, :] + rotate_half(x) * sin[:, None, :]


def flash_apply(x, cos, sin):
    """flash-attention's apply_rotary_emb (not interleaved): cos, sin (n, r/2), the rest passed through."""
    r = 2 * cos.shape[-1]
    x1, x2 = x[..., : r // 2], x[..., r // 2:r]
    c, s = cos[:, None, :], sin[:, None, :]
    return np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s, x[..., r:]], axis=-1)


def gptj_apply(x, cos, sin):
    """GPT-J's pairs (2i, 2i + 1), cos and sin repeated per pair."""
    partner = np.empty_like(x)
    partner[..., 0::2], partner[..., 1::2] = -x[..., 1::2], x[..., 0::2]
    return x * cos[:, None, :] + partner * sin[:, None, :]


def vllm_apply(x, positions, cos_sin_cache):
    """vLLM's neox-style forward_native: cos and sin gathered from one [cos | sin] cache row per token."""
    cos, sin = np.split(cos_sin_cache[positions], 2, axis=-1)
    return flash_apply(x, cos, sin)


def check(fn, convention=LLAMA, **kwargs):
    kwargs.setdefault("dtypes", ("f32", "bf16"))
    return pecheck.check(fn, "rope", convention, cases=CASES, **kwargs)


@pytest.mark.parametrize("fn, layout, convention, extra", [
    (hf_apply, "rotate_half", LLAMA, {}),
    (flash_apply, "half", LLAMA, {}),
    (flash_apply, "half", {"rope_theta": 10000.0, "partial_rotary_factor": 0.5, "head_dim": 32}, {}),
    (gptj_apply, "interleaved", {"rope_theta": 10000.0, "layout": "interleaved"}, {}),
    (vllm_apply, "cos_sin_cache", LLAMA, {"max_position": 4095}),
], ids=["transformers", "flash-attention", "flash-attention-partial", "gpt-j", "vllm-cache"])
def test_an_apply_handed_exact_cos_sin_is_a_rope(fn, layout, convention, extra):
    report = check(fn, convention, cos_sin=layout, **extra)
    assert report.ok, report.summary()
    assert report.result("rope.agrees_with_reference", "f32").cases == CASES
    # cos and sin stored in the dtype, as these kernels take them: nothing weaker is needed.
    assert report.contract("f32") in ("exact", "dtype-trig") and report.contract("bf16") in ("exact", "dtype-trig")


def hf_pair(q, k, cos, sin):
    """As the kernels are called: q and k together, both rotated."""
    return hf_apply(q, cos, sin), hf_apply(k, cos, sin)


def test_q_and_k_are_both_handed_over_and_must_turn_alike():
    assert check(hf_pair, cos_sin="rotate_half", dtypes="f32").ok
    k_wrong = check(lambda q, k, cos, sin: (hf_apply(q, cos, sin), hf_apply(k, cos, -sin)), cos_sin="rotate_half",
                    dtypes="f32", properties="rope.agrees_with_reference")
    (r,) = k_wrong.results
    assert r.verdict == "fail" and "k, handed the same values as q, came back rotated differently" in r.message, \
        r.explain()


def test_yarns_attention_factor_is_in_the_tables():
    yarn = {"rope_theta": 10000.0, "head_dim": 64, "rope_scaling": {"rope_type": "yarn", "factor": 4.0,
                                                                    "original_max_position_embeddings": 2048}}
    assert check(hf_apply, yarn, cos_sin="rotate_half").ok


@pytest.mark.parametrize("fn, layout", [
    (lambda x, cos, sin: x * cos[:, None, :] + rotate_half(x) * cos[:, None, :], "rotate_half"),
    (hf_apply, "interleaved"),
    (lambda x, cos, sin: x * cos[:, None, :] - rotate_half(x) * sin[:, None, :], "rotate_half"),
], ids=["sin-ignored", "wrong-layout", "clockwise"])
def test_an_apply_bug_fails(fn, layout):
    report = check(fn, cos_sin=layout, dtypes="f32", properties="rope.agrees_with_reference")
    assert report.results[0].verdict == "fail"
    assert f"cos_sin='{layout}'" in report.results[0].replay


def fp32_producer(base):
    """A rotary module's producer as transformers writes it: inv_freq and the angles in float32."""

    def produce(x, positions):
        d = x.shape[-1]
        inv_freq = (1.0 / (base ** (np.arange(0, d, 2, dtype=np.int64).astype(np.float32) / d))).astype(np.float32)
        angles = positions.astype(np.float32)[:, None] * inv_freq[None, :]
        emb = np.concatenate([angles, angles], axis=-1)
        return np.cos(emb).astype(x.dtype), np.sin(emb).astype(x.dtype)

    return produce


def test_a_producer_with_fp32_angles_meets_fp32_angles():
    report = check(fp32_producer(10000.0), produces_cos_sin="rotate_half", dtypes="f32")
    assert report.ok and report.contract("f32") == "fp32-angles", report.summary()


def test_a_producer_of_the_wrong_base_fails():
    report = check(fp32_producer(500000.0), produces_cos_sin="rotate_half", dtypes="f32",
                   properties="rope.agrees_with_reference")
    assert report.results[0].verdict == "fail"


def test_bad_cos_sin_arguments_are_one_line_each():
    with pytest.raises(ValueError, match="cos_sin: 'neox' is not one of half, rotate_half"):
        check(hf_apply, cos_sin="neox")
    with pytest.raises(ValueError, match="cos_sin: needs the convention stated as a dict"):
        check(hf_apply, None, cos_sin="rotate_half")
    with pytest.raises(ValueError, match="cos_sin: 'cos_sin_cache' .* state max_position"):
        check(vllm_apply, cos_sin="cos_sin_cache")
    with pytest.raises(ValueError, match="cos_sin: only rope is written around a cos/sin cache"):
        pecheck.check(hf_apply, "mrope", {"mrope_section": [2, 3, 3]}, cos_sin="rotate_half")
    with pytest.raises(ValueError, match="not both"):
        check(hf_apply, cos_sin="rotate_half", produces_cos_sin="rotate_half")
    with pytest.raises(ValueError, match="fn: .* cannot be called as pecheck calls it: .* it requires 'q'"):
        check(lambda q, cos, sin: q, cos_sin="rotate_half")
