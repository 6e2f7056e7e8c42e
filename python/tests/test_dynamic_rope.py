"""transformers' dynamic NTK RoPE pinned: each call's base from its own length max(position) + 1
(dynamic_rope_update), so only the laws that call the encoder at a case's own positions judge it;
the laws comparing calls at different positions are reported skipped with that reason. A module
called afresh meets fp32-angles; one module kept across calls (its cache of the longest call seen,
transformers' max_seq_len_cached) does not, nor does one that ignores the call's length."""
import warnings

import pytest

transformers = pytest.importorskip("transformers")
torch = pytest.importorskip("torch")

import pecheck  # noqa: E402
from pecheck.hf_config import convention_from_config  # noqa: E402
from pecheck.zoo.rope import rotary_fn  # noqa: E402

V5 = int(transformers.__version__.split(".")[0]) >= 5
pytestmark = pytest.mark.skipif(not V5, reason="transformers 5's rope_parameters and dynamic_rope_update")

PER_CALL = ("rope.agrees_with_reference", "rope.orthogonal", "rope.nan_parity", "rope.inf_parity")
ACROSS_CALLS = ("rope.relative", "rope.composition", "rope.inverse", "rope.offset_invariance")
L0 = 256  # small, so that most drawn positions stretch the base


def llama(rule):
    from transformers.models.llama import modeling_llama

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cfg = transformers.LlamaConfig(hidden_size=256, num_attention_heads=4, max_position_embeddings=L0,
                                       rope_parameters={"rope_theta": 10000.0, **rule})
    return cfg, modeling_llama


@pytest.fixture(scope="module")
def dynamic():
    return llama({"rope_type": "dynamic", "factor": 4.0})


def fresh_module_fn(cfg, ml):
    """A new rotary module per call: what one forward of a model built afresh computes."""
    return rotary_fn(lambda q, pos, **kw: ml.LlamaRotaryEmbedding(config=cfg)(q, pos, **kw),
                     ml.apply_rotary_pos_emb, 0)


def check(fn, conv, **kw):
    return pecheck.check(fn, "rope", conv, framework="torch", cases=50, **{"dtypes": ("f32", "bf16"), **kw})


def test_the_config_states_l0_as_the_rule_reads_it(dynamic):
    cfg, _ = dynamic
    conv = convention_from_config(cfg)
    assert conv["rope_scaling"] == {"rope_type": "dynamic", "factor": 4.0, "original_max_position_embeddings": L0}


def test_a_fresh_module_meets_fp32_angles_on_every_law_that_can_judge_it(dynamic):
    cfg, ml = dynamic
    report = check(fresh_module_fn(cfg, ml), convention_from_config(cfg))
    assert report.ok, report.summary()
    for dtype in ("f32", "bf16"):
        assert report.contract(dtype) == "fp32-angles", report.summary()
        assert report.contracts[dtype].laws_below is None
        for law in PER_CALL:
            r = report.result(law, dtype)
            assert r.verdict == "pass" and r.nontrivial_cases >= 45, (law, dtype, r)
        for law in ACROSS_CALLS:
            r = report.result(law, dtype)
            assert r.verdict == "skip" and "each call's own length" in r.message, (law, r)
    assert "the laws comparing calls not judged" in report.summary()


def test_the_pinned_rule_is_not_the_default_rope(dynamic):
    """The stretched base matters: the same module judged as plain RoPE fails agreement."""
    cfg, ml = dynamic
    report = check(fresh_module_fn(cfg, ml), {"rope_theta": 10000.0, "head_dim": 64}, dtypes="f32")
    agreement = report.result("rope.agrees_with_reference", "f32")
    assert agreement.verdict == "fail" and report.contract("f32") is None, report.summary()


def test_one_module_kept_across_calls_fails(dynamic):
    """transformers' cache keeps the longest call's frequencies until a call shorter than L0
    resets it: a later, shorter call past L0 rotates at the wrong base (history, not convention)."""
    cfg, ml = dynamic
    kept = rotary_fn(ml.LlamaRotaryEmbedding(config=cfg), ml.apply_rotary_pos_emb, 0)
    report = check(kept, convention_from_config(cfg), dtypes="f32")
    assert not report.ok and report.contract("f32") is None, report.summary()
    assert report.result("rope.agrees_with_reference", "f32").verdict == "fail"


def test_a_module_that_ignores_the_calls_length_fails(dynamic):
    """The base stretched once for L0 * factor (vLLM issue 3488's bug) is not the per-call rule."""
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    cfg, ml = dynamic
    module = ml.LlamaRotaryEmbedding(config=cfg)
    module.max_seq_len_cached = 1 << 30  # never grows, never resets: stretched for L0 * factor always
    stretched, _ = ROPE_INIT_FUNCTIONS["dynamic"](cfg, None, seq_len=L0 * 4)
    module.register_buffer("inv_freq", stretched, persistent=False)
    report = check(rotary_fn(module, ml.apply_rotary_pos_emb, 0), convention_from_config(cfg), dtypes="f32")
    assert report.result("rope.agrees_with_reference", "f32").verdict == "fail", report.summary()


def test_dynamic_needs_its_trained_context_stated(good_rope):
    with pytest.raises(ValueError, match="^convention: .*rope_type 'dynamic' needs 'original_max_position_embeddings'"):
        pecheck.check(good_rope, "rope", {"rope_scaling": {"rope_type": "dynamic", "factor": 2.0}})
