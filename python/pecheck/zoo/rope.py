"""RoPE as each architecture computes it: the model's rotary module builds (cos, sin) for the positions
pecheck gives, the model's apply function rotates x in the model's layout (batch, heads, seq, head_dim),
and a partial rotary split is made where the model makes it (inside apply, or in the attention layer
on the first cos.shape[-1] dims). The convention is read from the config as a user reads config.json.

Nothing here is fitted to the code: a layout the config cannot state (an interleaved rotate_half) is
a quirk written down per architecture with where it comes from (QUIRKS)."""
import inspect

from .discover import text_config
from .subject import Subject

# Conventions a config does not state, per architecture, each with its source. The layout of pairs:
# HF's rotate_half pairs dim i with i + d/2 (half_split); these pair 2i with 2i + 1.
QUIRKS = {
    "cohere": ({"layout": "interleaved"}, "pairs (2i, 2i+1): Cohere's rotate_half takes x[..., ::2], x[..., 1::2]"),
    "cohere2": ({"layout": "interleaved"}, "pairs (2i, 2i+1): Cohere2's rotate_half, as Cohere's"),
    "glm": ({"layout": "interleaved"}, "pairs (2i, 2i+1): GLM's rotate_half stacks x[..., 0::2], x[..., 1::2]"),
    "moonshine": ({"layout": "interleaved"}, "pairs (2i, 2i+1): Moonshine's rotate_half, as GLM's"),
    "helium": ({"layout": "interleaved"}, "pairs (2i, 2i+1): Helium's apply repeat_interleaves the first half of cos "
               "and sin and its rotate_half stacks x[..., 0::2], x[..., 1::2]"),
    "gptj": ({"layout": "interleaved"}, "pairs (2i, 2i+1): GPT-J's rotate_every_two"),
    "codegen": ({"layout": "interleaved"}, "pairs (2i, 2i+1): CodeGen's rotate_every_two, as GPT-J's"),
}

# HF's rope_scaling rules, as a config states each one (L0: the trained context; the config's
# max_position_embeddings is the stretched one, as YaRN's paper and Phi-3's configs write it).
SCALING_FACTOR = 4


def head_dim_of(config):
    """The head size the attention layer uses, from the keys a config states it with (Zamba2 states
    attention_head_dim: its attention runs on the hidden state concatenated with the embeddings)."""
    if getattr(config, "attention_head_dim", None):
        return config.attention_head_dim, f"attention_head_dim={config.attention_head_dim}"
    if getattr(config, "head_dim", None):
        return config.head_dim, f"head_dim={config.head_dim}"
    heads = getattr(config, "num_attention_heads", None) or getattr(config, "n_head", None)
    hidden = getattr(config, "hidden_size", None) or getattr(config, "n_embd", None)
    return hidden // heads, f"hidden_size/num_attention_heads={hidden}/{heads}"


def rope_theta_of(config):
    for key in ("rope_theta", "rotary_emb_base", "rope_base"):
        if getattr(config, key, None) is not None:
            return float(getattr(config, key)), f"{key}={getattr(config, key):g}"
    return 10000.0, "rope_theta absent (HF's default 10000)"


def partial_of(config):
    for key in ("partial_rotary_factor", "rotary_pct"):
        v = getattr(config, key, None)
        if v is not None and v != 1.0:
            return float(v), f"{key}={v:g}"
    return None, ""


def convention_of(config, arch, rope_scaling=None):
    """(convention in HF's words, what was read, quirk) for a config-style rotary module."""
    head_dim, hd_text = head_dim_of(config)
    theta, theta_text = rope_theta_of(config)
    conv = {"rope_theta": theta, "head_dim": head_dim}
    stated = [theta_text, hd_text]
    partial, partial_text = partial_of(config)
    if partial is not None:
        conv["partial_rotary_factor"] = partial
        stated.append(partial_text)
    if rope_scaling is not None:
        conv["rope_scaling"] = rope_scaling
        stated.append("rope_scaling=" + ",".join(f"{k}={v}" for k, v in rope_scaling.items()
                                                   if k not in ("short_factor", "long_factor")))
    quirk = ""
    if arch in QUIRKS:
        extra, quirk = QUIRKS[arch]
        conv.update(extra)
    return conv, "; ".join(stated), quirk


def rotary_fn(make_cos_sin, apply, split):
    """fn(x, positions) for pecheck: x (n, heads, d) in the model's layout (1, heads, n, d) and back.
    split: the attention layer (not apply) rotates the first cos.shape[-1] dims and passes the rest."""
    import torch

    def fn(x, positions):
        q = x.transpose(0, 1).unsqueeze(0)
        with torch.no_grad():
            cos, sin = make_cos_sin(q, positions.unsqueeze(0))
            r = cos.shape[-1]
            if split and r < q.shape[-1]:
                y, _ = apply(q[..., :r], q[..., :r], cos, sin)
                y = torch.cat((y, q[..., r:]), dim=-1)
            else:
                y, _ = apply(q, q, cos, sin)
        return y[0].transpose(0, 1)

    return fn


def splits_inside(apply):
    """Whether apply itself splits q into rotated and passed dims (GLM, Phi-3, GPT-NeoX in 4.49)."""
    src = inspect.getsource(apply)
    return "q_pass" in src or "rot_dim" in src


def rotary_class(module):
    found = [c for n, c in vars(module).items()
             if inspect.isclass(c) and n.endswith("RotaryEmbedding") and "Vision" not in n
             and "Linear" not in n and "Dynamic" not in n and "Unpadded" not in n]
    return found[0] if len(found) == 1 else None


def uses_rope_init(cls):
    return "rope_init_fn" in inspect.getsource(cls)


def scaling_variants(config):
    """(variant, rope_scaling, config changes, max_position) for each rule of HF's ROPE_INIT_FUNCTIONS
    but "dynamic", which rescales by each call's length: no pinned convention states that yet."""
    stretched = config.max_position_embeddings
    l0 = stretched // SCALING_FACTOR
    f = float(SCALING_FACTOR)
    head_dim, _ = head_dim_of(config)
    partial, _ = partial_of(config)
    pairs = int(head_dim * (partial or 1.0)) // 2
    short = [round(1.0 + 0.02 * (i % 7) + 0.1 * i / pairs, 4) for i in range(pairs)]
    long = [round(1.0 + 3.0 * (i / max(pairs - 1, 1)) ** 2.5 + 0.03 * (i % 3), 4) for i in range(pairs)]
    return [
        ("linear", {"rope_type": "linear", "factor": f}, {}, None),
        # Qwen2.5's model card: L0 = max_position_embeddings, both stated.
        ("yarn", {"rope_type": "yarn", "factor": f, "original_max_position_embeddings": stretched}, {}, None),
        # YaRN's paper and DeepSeek's configs: max_position_embeddings is the stretched context.
        ("yarn-stretched", {"rope_type": "yarn", "factor": f, "original_max_position_embeddings": l0}, {}, None),
        ("llama3", {"rope_type": "llama3", "factor": f, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                    "original_max_position_embeddings": l0}, {}, None),
        # Phi-3's configs: original_max_position_embeddings at the top level; the short regime.
        ("longrope-short", {"rope_type": "longrope", "short_factor": short, "long_factor": long},
         {"original_max_position_embeddings": l0}, l0 - 1),
    ]


# The verdict's properties for a pinned RoPE: agreement (under the strongest contract met) and the
# per-call laws; the laws that compare calls with each other are shown, not asserted: under fp32
# angles they have no bound (docs/python.md).
LAWS = dict(
    contracts=("exact", "dtype-trig", "fp32-angles"),
    asserted=("rope.agrees_with_reference", "rope.orthogonal", "rope.inverse", "rope.nan_parity", "rope.inf_parity"),
    reported=("rope.relative", "rope.composition", "rope.offset_invariance"),
    why_reported="relational laws: no bound under the fp32-angles contract",
)


def no_negative(positions):
    """A module that gathers rows of a table cannot take a negative position (Python indexing would
    read the table from its end): such a case is declined, not judged."""
    import pecheck

    if int(positions.min()) < 0:
        raise pecheck.Unsupported("a table of rows 0..max_position has no negative position")


def config_style(arch, module, config_cls):
    """Modules built as XRotaryEmbedding(config=config), forward(x, position_ids) -> (cos, sin)."""
    cls = rotary_class(module)
    apply = getattr(module, "apply_rotary_pos_emb", None)
    if cls is None or apply is None:
        return None
    try:
        sig = inspect.signature(cls.__init__)
        if "config" not in sig.parameters or list(inspect.signature(cls.forward).parameters)[1:3] != [
                "x", "position_ids"]:
            return None
    except (TypeError, ValueError):
        return None
    split = not splits_inside(apply)
    names = f"{cls.__name__} + apply_rotary_pos_emb" + ("" if not split else " (split as the attention layer does)")
    subjects = []

    def make(config):
        return lambda: rotary_fn(cls(config=config), apply, split)

    config = text_config(config_cls())
    config_cls = type(config)
    conv, stated, quirk = convention_of(config, arch)
    subjects.append(Subject(arch, "rope", "default", "rope", make(config), conv, stated, names, quirk,
                            **LAWS))
    if not uses_rope_init(cls):
        return subjects
    for variant, scaling, changes, max_position in scaling_variants(config):
        cfg = None
        for spelling in (scaling, {("type" if k == "rope_type" else k): v for k, v in scaling.items()}):
            try:  # a config class validates rope_scaling: HF's "rope_type", or the older "type" (Phi-3, OLMo)
                cfg = config_cls(rope_scaling=dict(spelling), **changes)
                scaling = spelling
                break
            except (ValueError, KeyError, TypeError):
                continue
        if cfg is None or getattr(cfg, "rope_scaling", None) != scaling:
            continue  # a rule the config class refuses or rewrites is not offered
        stated_scaling = dict(scaling)
        if variant == "longrope-short":
            stated_scaling.update(original_max_position_embeddings=changes["original_max_position_embeddings"],
                                  factor=cfg.max_position_embeddings / changes["original_max_position_embeddings"])
        c, s, q = convention_of(cfg, arch, stated_scaling)
        if changes:
            s += "; " + ",".join(f"{k}={v}" for k, v in changes.items())
        subjects.append(Subject(arch, "rope", variant, "rope", make(cfg), c, s, names, q, max_position,
                                **LAWS))
    return subjects


def dim_style(arch, module, config_cls):
    """Modules built from (dim, base[, max_position_embeddings]) by the attention layer, as each
    architecture's attention __init__ builds them."""
    config = config_cls()
    apply = getattr(module, "apply_rotary_pos_emb", None)
    if arch == "chameleon":
        head_dim, hd = head_dim_of(config)
        rope = module.ChameleonRotaryEmbedding(head_dim, max_position_embeddings=config.max_position_embeddings,
                                               base=config.rope_theta)
        conv, stated, quirk = convention_of(config, arch)
        return [Subject(arch, "rope", "default", "rope", lambda: rotary_fn(rope, apply, True), conv, stated,
                        "ChameleonRotaryEmbedding + apply_rotary_pos_emb", quirk, **LAWS)]
    if arch == "dbrx":
        head_dim = config.d_model // config.n_heads
        theta = config.attn_config.rope_theta
        rope = module.DbrxRotaryEmbedding(head_dim, max_position_embeddings=config.max_seq_len, base=theta)
        conv = {"rope_theta": theta, "head_dim": head_dim}
        stated = f"attn_config.rope_theta={theta:g}; d_model/n_heads={config.d_model}/{config.n_heads}"
        return [Subject(arch, "rope", "default", "rope", lambda: rotary_fn(rope, apply, True), conv, stated,
                        "DbrxRotaryEmbedding + apply_rotary_pos_emb", **LAWS)]
    if arch == "recurrent_gemma":
        head_dim, _ = head_dim_of(config)
        rope = module.RecurrentGemmaRotaryEmbedding(int(config.partial_rotary_factor * head_dim),
                                                    base=config.rope_theta)
        conv, stated, quirk = convention_of(config, arch)
        return [Subject(arch, "rope", "default", "rope", lambda: rotary_fn(rope, apply, True), conv, stated,
                        "RecurrentGemmaRotaryEmbedding + apply_rotary_pos_emb (chunked as the attention layer does)",
                        quirk, **LAWS)]
    return None
