"""transformers' own RoPE, as models call it, adapted to pecheck's RoPE call: the model's rotary
module computes (cos, sin) for the position_ids pecheck gives, and the model's
apply_rotary_pos_emb rotates x laid out as the model lays it out (batch, heads, seq, head_dim).
Each case names the HF convention it implements, in HF's own words (the `convention` of
pecheck.check): rope_theta and the rope_scaling dict, which transformers 5 still takes (its own
configs say rope_parameters, rope_theta inside). Runs on transformers 5.x and 4.49."""
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

HEAD_DIM = 64
V5 = int(transformers.__version__.split(".")[0]) >= 5


def rope_kwargs(rope_theta, rope_scaling):
    """The config's RoPE arguments in this transformers' words, from a copy: transformers 5 fills
    the dict it is given in place (rope_theta, partial_rotary_factor, L0), which would then no
    longer be the convention as stated."""
    rope_scaling = copy.deepcopy(rope_scaling)
    if V5:
        return {"rope_parameters": dict(rope_scaling or {"rope_type": "default"}, rope_theta=rope_theta)}
    return {"rope_theta": rope_theta, "rope_scaling": rope_scaling}


def rotary_fn(rope, apply, rotary_dim=HEAD_DIM):
    """fn(x, positions) for pecheck: x (n, heads, d) -> the model's layout and back."""

    def fn(x, positions):
        q = x.transpose(0, 1).unsqueeze(0)  # (1, heads, n, d)
        with torch.no_grad():
            cos, sin = rope(q, positions.unsqueeze(0))
            if rotary_dim < q.shape[-1]:  # GPT-NeoX rotates the first rotary_dim dims only
                y, _ = apply(q[..., :rotary_dim], q[..., :rotary_dim], cos, sin)
                y = torch.cat((y, q[..., rotary_dim:]), dim=-1)
            else:
                y, _ = apply(q, q, cos, sin)
        return y[0].transpose(0, 1)

    return fn


def llama(rope_theta, rope_scaling=None, max_position_embeddings=8192):
    config = LlamaConfig(hidden_size=2 * HEAD_DIM, num_attention_heads=2, head_dim=HEAD_DIM,
                         max_position_embeddings=max_position_embeddings, **rope_kwargs(rope_theta, rope_scaling))
    fn = rotary_fn(LlamaRotaryEmbedding(config=config), apply_rotary_pos_emb)
    convention = {"rope_theta": rope_theta, "head_dim": HEAD_DIM}
    if rope_scaling is not None:
        convention["rope_scaling"] = rope_scaling
    return fn, convention


def neox_partial(rotary_pct=0.25):
    if V5:
        kw = {"rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": rotary_pct}}
    else:
        kw = {"rotary_pct": rotary_pct}
    config = GPTNeoXConfig(hidden_size=2 * HEAD_DIM, num_attention_heads=2, max_position_embeddings=8192, **kw)
    rotary_dim = int(HEAD_DIM * rotary_pct)
    fn = rotary_fn(GPTNeoXRotaryEmbedding(config=config), neox_apply, rotary_dim)
    return fn, {"rope_theta": 10000.0, "head_dim": HEAD_DIM, "partial_rotary_factor": rotary_pct}


def phi3_longrope(original=4096):
    """Phi-3's LongRoPE: the short factors while max(position_ids) + 1 <= original (pecheck's pinned
    spec states that regime: check it with max_position=original - 1), the long ones beyond."""
    pairs = HEAD_DIM // 2
    short = [round(1.0 + 0.02 * (i % 7) + 0.1 * i / pairs, 4) for i in range(pairs)]
    long = [round(1.0 + 49.0 * (i / (pairs - 1)) ** 2.5 + 0.03 * (i % 3), 4) for i in range(pairs)]
    rope_scaling = {"type": "longrope", "short_factor": short, "long_factor": long}
    config = Phi3Config(hidden_size=2 * HEAD_DIM, num_attention_heads=2, num_key_value_heads=2,
                        max_position_embeddings=32 * original, original_max_position_embeddings=original,
                        **rope_kwargs(10000.0, rope_scaling))
    fn = rotary_fn(Phi3RotaryEmbedding(config=config), phi3_apply)
    convention = {"rope_theta": 10000.0, "head_dim": HEAD_DIM,
                  "rope_scaling": dict(rope_scaling, original_max_position_embeddings=original, factor=32.0)}
    return fn, convention


def every_rope_type():
    """(name, fn, convention, max_position) for each rope_type transformers ships: 4.49's, and on
    5.x YaRN's mscale and truncate and Gemma 4's proportional (4.49 ignores mscale and
    mscale_all_dim, and has neither truncate nor proportional)."""
    yarn = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 8192}
    cases = [
        ("default-1e4", *llama(10000.0), None),
        ("default-5e5", *llama(500000.0), None),
        ("linear", *llama(10000.0, {"rope_type": "linear", "factor": 4.0}), None),
        # transformers 4.49's YaRN takes L0 from config.max_position_embeddings (8192 here), not
        # from rope_scaling (5.x from rope_scaling): both compute this one.
        ("yarn", *llama(10000.0, yarn), None),
        ("llama3", *llama(500000.0, {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                     "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}), None),
        ("neox-partial", *neox_partial(), None),
        ("longrope-short", *phi3_longrope(), 4095),
        ("yarn-attention-factor", *llama(10000.0, dict(yarn, attention_factor=1.2)), None),
    ]
    if V5:
        # DeepSeek-V3's: the attention factor is mscale's over mscale_all_dim's, here 1.
        mscale = {"rope_type": "yarn", "factor": 40.0, "mscale": 1.0, "mscale_all_dim": 1.0,
                  "original_max_position_embeddings": 4096}
        # gpt-oss's: the correction range between fractional pairs.
        truncate = {"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0, "truncate": False,
                    "original_max_position_embeddings": 4096}
        cases += [("yarn-mscale", *llama(10000.0, mscale, 4096), None),
                  ("yarn-truncate-false", *llama(150000.0, truncate, 131072), None),
                  ("gemma4-proportional", *gemma4_full_attention(), None)]
    return cases


def gemma4_full_attention():
    """Gemma 4's full-attention layers (transformers 5): rope_type proportional, a quarter of each
    head's pairs rotated at base 1e6 (their exponents over the whole head), the others left as
    they are; Gemma 4 rotates x laid out (batch, seq, heads, head_dim). Stated as its config's own
    rope_parameters for that layer type."""
    from transformers.models.gemma4.configuration_gemma4 import Gemma4TextConfig
    from transformers.models.gemma4.modeling_gemma4 import Gemma4TextRotaryEmbedding
    from transformers.models.gemma4.modeling_gemma4 import apply_rotary_pos_emb as gemma4_apply

    config = Gemma4TextConfig(hidden_size=2 * HEAD_DIM, num_attention_heads=2, num_key_value_heads=2,
                              head_dim=HEAD_DIM, global_head_dim=HEAD_DIM, num_hidden_layers=6)
    rope = Gemma4TextRotaryEmbedding(config)

    def fn(x, positions):
        q = x.unsqueeze(0)  # (1, n, heads, d)
        with torch.no_grad():
            cos, sin = rope(q, positions.unsqueeze(0), "full_attention")
            return gemma4_apply(q, cos, sin, unsqueeze_dim=2)[0]

    return fn, {"head_dim": HEAD_DIM, "rope_parameters": copy.deepcopy(config.rope_parameters["full_attention"])}


def dynamic():
    """Llama with rope_type dynamic: rescaled by each call's own length (and stateful across calls)."""
    return llama(10000.0, {"rope_type": "dynamic", "factor": 4.0})[0]
