"""pecheck.hf_config.convention_from_config against real transformers config classes: the convention
stated, with every field a config leaves out filled in as transformers fills it (the module it builds
computes exactly that: test_zoo.py checks the modules)."""
import math
import warnings

import pytest

transformers = pytest.importorskip("transformers")

from pecheck.hf_config import convention_from_config, read_rope, rope_layer_types  # noqa: E402

V5 = int(transformers.__version__.split(".")[0]) >= 5
needs_v5 = pytest.mark.skipif(not V5, reason="transformers 5's rope_parameters")
needs_v4 = pytest.mark.skipif(V5, reason="transformers 4's rope_theta + rope_scaling attributes")


def config(name, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return getattr(transformers, name)(**kw)


def v5_or_v4(rule):
    """A rule in the words the installed transformers takes it: rope_parameters (5) or rope_scaling (4)."""
    return {"rope_parameters": {"rope_theta": 10000.0, **rule}} if V5 else {"rope_scaling": dict(rule)}


def test_the_default_rope_is_rope_theta_and_the_head_width():
    assert convention_from_config(config("LlamaConfig")) == {"rope_theta": 10000.0, "head_dim": 128}
    # head_dim absent: hidden_size / num_attention_heads, as every rule computes it
    assert convention_from_config(config("LlamaConfig", hidden_size=512, num_attention_heads=8))["head_dim"] == 64


def test_a_partial_rotary_factor_is_stated():
    conv = convention_from_config(config("GPTNeoXConfig"))
    assert conv["partial_rotary_factor"] == 0.25 and conv["head_dim"] == 96


def test_linear_and_llama3_keep_their_fields():
    conv = convention_from_config(config("LlamaConfig", **v5_or_v4({"rope_type": "linear", "factor": 4.0})))
    assert conv["rope_scaling"] == {"rope_type": "linear", "factor": 4.0}
    rule = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192}
    conv = convention_from_config(config("LlamaConfig", max_position_embeddings=131072, **v5_or_v4(rule)))
    assert conv["rope_scaling"] == rule


def test_yarn_takes_its_trained_context_from_max_position_embeddings_when_not_stated():
    conv = convention_from_config(config("LlamaConfig", max_position_embeddings=8192,
                                         **v5_or_v4({"rope_type": "yarn", "factor": 4.0})))
    assert conv["rope_scaling"] == {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 8192,
                                    "beta_fast": 32.0, "beta_slow": 1.0}


def test_yarn_stated_trained_context_is_kept():
    conv = convention_from_config(config("LlamaConfig", max_position_embeddings=8192, **v5_or_v4(
        {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 2048})))
    assert conv["rope_scaling"]["original_max_position_embeddings"] == 2048


def test_yarn_without_factor_takes_the_ratio_of_the_two_contexts():
    reading = read_rope(config("LlamaConfig", max_position_embeddings=16384, **v5_or_v4(
        {"rope_type": "yarn", "factor": None, "original_max_position_embeddings": 4096})))
    assert reading.parameters["factor"] == 4.0
    assert math.isclose(reading.parameters["attention_factor"], 0.1 * math.log(4.0) + 1)


def test_phi3_longrope_takes_l0_from_the_top_level_and_the_factor_from_it():
    pairs = 48
    rule = {"rope_type": "longrope", "short_factor": [1.0] * pairs, "long_factor": [2.0] * pairs}
    c = config("Phi3Config", max_position_embeddings=131072, original_max_position_embeddings=4096, **v5_or_v4(rule))
    scaling = convention_from_config(c)["rope_scaling"]
    assert scaling["original_max_position_embeddings"] == 4096 and scaling["factor"] == 32.0
    assert "attention_factor" not in scaling  # left to pecheck's (and transformers') default
    assert math.isclose(read_rope(c).parameters["attention_factor"], math.sqrt(1 + math.log(32) / math.log(4096)))


@needs_v5
def test_yarn_with_a_mscale_attention_factor_is_stated_in_rope_parameters():
    # Ministral 3: mscale = mscale_all_dim = 1 gives attention factor 1, not 0.1 ln 16 + 1.
    conv = convention_from_config(config("Ministral3Config"))
    params = conv["rope_parameters"]
    assert params["rope_type"] == "yarn" and params["attention_factor"] == 1.0 and params["truncate"] is True
    assert "llama_4_scaling_beta" not in params and "mscale" not in params  # not the rotary module's
    assert conv["head_dim"] == 128


@needs_v5
def test_yarn_untruncated_is_stated_in_rope_parameters():
    conv = convention_from_config(config("GptOssConfig"))
    assert conv["rope_parameters"]["truncate"] is False
    assert conv["rope_parameters"]["original_max_position_embeddings"] == 4096
    assert math.isclose(conv["rope_parameters"]["attention_factor"], 0.1 * math.log(32) + 1)


@needs_v5
def test_a_rope_per_layer_type_gives_one_convention_per_type():
    c = config("Gemma3TextConfig")
    assert set(rope_layer_types(c)) == {"sliding_attention", "full_attention"}
    conv = convention_from_config(c)
    assert conv["sliding_attention"] == {"rope_theta": 10000.0, "head_dim": 256}
    assert conv["full_attention"] == {"rope_theta": 1000000.0, "head_dim": 256}
    assert convention_from_config(c, layer_type="full_attention") == conv["full_attention"]
    with pytest.raises(ValueError, match="layer_type"):
        convention_from_config(c, layer_type="chunked_attention")


@needs_v5
def test_only_the_layer_types_a_config_has_are_read():
    # Laguna's default rope_parameters has a sliding_attention entry, but every layer is full_attention.
    assert rope_layer_types(config("LagunaConfig")) == ("full_attention",)


@needs_v5
def test_proportional_rope_takes_the_layer_types_own_head_dim():
    conv = convention_from_config(config("Gemma4TextConfig"), layer_type="full_attention")
    assert conv["head_dim"] == 512  # per_layer_config: Gemma 4's global layers are wider
    assert conv["rope_parameters"]["rope_type"] == "proportional"
    assert conv["rope_parameters"]["partial_rotary_factor"] == 0.25


@needs_v5
def test_deepseek_v3s_rope_interleave_is_its_layout():
    conv = convention_from_config(config("DeepseekV3Config"))
    assert conv == {"rope_theta": 10000.0, "head_dim": 64, "layout": "interleaved"}


@needs_v5
def test_mrope_is_stated_for_the_mrope_operation():
    c = config("Qwen3VLTextConfig", rope_parameters={"rope_type": "default", "rope_theta": 5e5,
                                                     "mrope_section": [24, 20, 20], "mrope_interleaved": True})
    assert convention_from_config(c) == {"rope_theta": 5e5, "head_dim": 128, "mrope_section": [24, 20, 20],
                                         "assignment": "interleaved"}


@needs_v5
def test_axial_rope_is_refused():
    with pytest.raises(ValueError, match="axial"):
        convention_from_config(config("PixtralVisionConfig"))


@needs_v4
def test_v4_gemma3_local_base_is_the_sliding_layers_rope():
    conv = convention_from_config(config("Gemma3TextConfig"))
    assert conv["sliding_attention"]["rope_theta"] == 10000.0
    assert conv["full_attention"]["rope_theta"] == 1000000.0


def test_transformers_is_not_imported_by_the_module():
    import subprocess
    import sys

    code = "import sys, pecheck.hf_config; assert 'transformers' not in sys.modules"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
