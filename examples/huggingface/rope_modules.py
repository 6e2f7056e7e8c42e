"""transformers' own rotary modules and apply functions, built from a config the way models build
them, on transformers 4.49 (rope_theta + rope_scaling) and 5.x (rope_parameters, keyed by layer
type where a config has several). Each case returns (x, y) and the attention factor the module
applies (its `attention_scaling`), which is what the rotated pairs' magnitude must read as."""
import copy

import torch
import transformers
from transformers.models.gpt_neox.configuration_gpt_neox import GPTNeoXConfig
from transformers.models.gpt_neox.modeling_gpt_neox import GPTNeoXRotaryEmbedding
from transformers.models.gpt_neox.modeling_gpt_neox import apply_rotary_pos_emb as neox_apply
from transformers.models.llama.configuration_llama import LlamaConfig
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb
from transformers.models.phi3.configuration_phi3 import Phi3Config
from transformers.models.phi3.modeling_phi3 import Phi3RotaryEmbedding
from transformers.models.phi3.modeling_phi3 import apply_rotary_pos_emb as phi3_apply

V5 = int(transformers.__version__.split(".")[0]) >= 5
HEADS, HEAD_DIM = 2, 128


def queries(dtype, tokens, layout="bhnd"):
    g = torch.Generator().manual_seed(11)
    x = torch.rand(1, HEADS, tokens, HEAD_DIM, generator=g) * 2 - 1
    x = x if layout == "bhnd" else x.transpose(1, 2).contiguous()
    return x.to(torch.bfloat16 if dtype == "bf16" else torch.float32)


def rope_kwargs(rope_theta, params):
    """A config's RoPE arguments in this transformers' words. A copy: transformers 5 fills the dict
    it is given in place (rope_theta, partial_rotary_factor, original_max_position_embeddings)."""
    params = copy.deepcopy(params) if params else {"rope_type": "default"}
    if V5:
        return {"rope_parameters": dict(params, rope_theta=rope_theta)}
    return {"rope_theta": rope_theta, "rope_scaling": None if params.get("rope_type") == "default" else params}


def statement(params, rope_theta):
    """The convention as a config.json of this transformers states it: 5.x's rope_parameters
    (rope_theta inside), 4.49's rope_theta and rope_scaling."""
    params = copy.deepcopy(params) if params else {"rope_type": "default"}
    if V5:
        return {"head_dim": HEAD_DIM, "rope_parameters": dict(params, rope_theta=rope_theta)}
    return {"head_dim": HEAD_DIM, "rope_theta": rope_theta, "rope_scaling": params}


def rotate(rope, apply, x, positions, **forward):
    with torch.no_grad():
        cos, sin = rope(x, torch.tensor([positions]), **forward)
        y, _ = apply(x, x, cos, sin)
    return y


def llama(params, rope_theta, dtype, positions, max_position_embeddings=8192):
    config = LlamaConfig(hidden_size=HEADS * HEAD_DIM, num_attention_heads=HEADS,
                         max_position_embeddings=max_position_embeddings, **rope_kwargs(rope_theta, params))
    rope = LlamaRotaryEmbedding(config=config)
    x = queries(dtype, len(positions))
    return x, rotate(rope, apply_rotary_pos_emb, x, positions), rope.attention_scaling


def neox(dtype, positions, rotary_pct=0.25):
    """GPT-NeoX's partial rotary: the first rotary_pct of each head rotated, the rest passed through."""
    if V5:
        kw = {"rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": rotary_pct}}
    else:
        kw = {"rotary_pct": rotary_pct}
    config = GPTNeoXConfig(hidden_size=HEADS * HEAD_DIM, num_attention_heads=HEADS, max_position_embeddings=8192, **kw)
    rope = GPTNeoXRotaryEmbedding(config=config)
    x = queries(dtype, len(positions))
    with torch.no_grad():
        cos, sin = rope(x, torch.tensor([positions]))
        rot = cos.shape[-1]
        y_rot, _ = neox_apply(x[..., :rot], x[..., :rot], cos, sin)
    return x, torch.cat((y_rot, x[..., rot:]), dim=-1), rope.attention_scaling


def longrope_config(short, long, original=4096):
    """Phi-3-mini-128k's shape: 128k context over 4k, L0 outside rope_scaling (Phi3Config's own
    field, which transformers 5 gives priority), the factor formed as max / original."""
    params = {"rope_type" if V5 else "type": "longrope", "short_factor": short, "long_factor": long}
    return Phi3Config(hidden_size=HEADS * HEAD_DIM, num_attention_heads=HEADS, num_key_value_heads=HEADS,
                      max_position_embeddings=32 * original, original_max_position_embeddings=original,
                      **rope_kwargs(10000.0, params))


def phi3_longrope(config, positions):
    rope = Phi3RotaryEmbedding(config=config)
    x = queries("f32", len(positions))
    return x, rotate(rope, phi3_apply, x, positions), rope.attention_scaling


def longrope_statement(config, short, long, original=4096):
    """The convention a LongRoPE dump states (its lists cannot be fitted), in the words of the
    config this transformers writes: 5.x's rope_parameters as the config holds them, 4.49's
    rope_theta and rope_scaling; with the factor made explicit as `pecheck manifest
    --from-hf-config` forms it (max_position_embeddings / original)."""
    if V5:
        return {"head_dim": HEAD_DIM, "rope_parameters": dict(copy.deepcopy(config.rope_parameters), factor=32.0)}
    return {"rope_theta": 10000.0, "head_dim": HEAD_DIM,
            "rope_scaling": {"type": "longrope", "short_factor": short, "long_factor": long,
                             "original_max_position_embeddings": original, "factor": 32.0}}


def gemma_layer(model, layer_type, positions):
    """One layer type of a config with several (transformers 5): Gemma 3's sliding layers at base
    1e4 and full ones at 1e6 with linear scaling 8 (as Gemma 3 4B and up), Gemma 4's sliding
    layers at 1e4 and full ones under `proportional` (a quarter of the pairs rotated at base 1e6,
    the rest left as they are). Returns (x, y, attention factor, axes) in the model's layout and
    the convention as the config states it (its rope_parameters keyed by layer type, and which)."""
    if model == "gemma3":
        from transformers.models.gemma3.configuration_gemma3 import Gemma3TextConfig
        from transformers.models.gemma3.modeling_gemma3 import Gemma3RotaryEmbedding
        from transformers.models.gemma3.modeling_gemma3 import apply_rotary_pos_emb as gemma3_apply

        config = Gemma3TextConfig(
            hidden_size=HEADS * HEAD_DIM, num_attention_heads=HEADS, num_key_value_heads=HEADS, head_dim=HEAD_DIM,
            num_hidden_layers=6, rope_parameters={
                "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0}})
        rope = Gemma3RotaryEmbedding(config)
        x = queries("f32", len(positions))
        y = rotate(rope, gemma3_apply, x, positions, layer_type=layer_type)
        return (x, y, getattr(rope, f"{layer_type}_attention_scaling"), "bhnd"), keyed_statement(config, layer_type)
    from transformers.models.gemma4.configuration_gemma4 import Gemma4TextConfig
    from transformers.models.gemma4.modeling_gemma4 import Gemma4TextRotaryEmbedding
    from transformers.models.gemma4.modeling_gemma4 import apply_rotary_pos_emb as gemma4_apply

    # Gemma 4's default rope_parameters; its full layers' heads (global_head_dim) made HEAD_DIM wide.
    config = Gemma4TextConfig(hidden_size=HEADS * HEAD_DIM, num_attention_heads=HEADS, num_key_value_heads=HEADS,
                              head_dim=HEAD_DIM, global_head_dim=HEAD_DIM, num_hidden_layers=6)
    rope = Gemma4TextRotaryEmbedding(config)
    x = queries("f32", len(positions), layout="bnhd")  # Gemma 4 rotates (batch, seq, heads, head_dim)
    with torch.no_grad():
        cos, sin = rope(x, torch.tensor([positions]), layer_type)
        y = gemma4_apply(x, cos, sin, unsqueeze_dim=2)
    return (x, y, getattr(rope, f"{layer_type}_attention_scaling"), "bnhd"), keyed_statement(config, layer_type)


def keyed_statement(config, layer_type):
    return {"head_dim": HEAD_DIM, "layer_type": layer_type, "rope_parameters": copy.deepcopy(config.rope_parameters)}
