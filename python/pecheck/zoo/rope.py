"""RoPE as each architecture computes it: the model's rotary module builds (cos, sin) for the positions
pecheck gives, the model's apply function rotates x in the model's layout (batch, heads, seq, head_dim),
and a partial rotary split is made where the model makes it (inside apply, or in the attention layer
on the first cos.shape[-1] dims). The convention is read from the config by pecheck.hf_config, as
transformers fills it in (rope_parameters in transformers 5, rope_theta and rope_scaling in 4); a
config with a RoPE per attention layer type gives one row per type.

Nothing here is fitted to the code: a layout the config cannot state (an interleaved rotate_half) is
a quirk written down per architecture with where it comes from (QUIRKS)."""
import inspect

from pecheck.hf_config import RopeReading, convention_from_config, read_rope

from . import discover
from .discover import text_config
from .subject import NotCallable, Subject

# Conventions a config does not state, per modeling module, each with its source. The layout of
# pairs: HF's rotate_half pairs dim i with i + d/2 (half_split); these pair 2i with 2i + 1.
QUIRKS = {
    "cohere": ({"layout": "interleaved"}, "pairs (2i, 2i+1): Cohere's rotate_half takes x[..., ::2], x[..., 1::2]"),
    "cohere2": ({"layout": "interleaved"}, "pairs (2i, 2i+1): Cohere2's rotate_half, as Cohere's"),
    "glm": ({"layout": "interleaved"}, "pairs (2i, 2i+1): GLM's rotate_half stacks x[..., 0::2], x[..., 1::2]"),
    "moonshine": ({"layout": "interleaved"}, "pairs (2i, 2i+1): Moonshine's rotate_half, as GLM's"),
    "helium": ({"layout": "interleaved"}, "pairs (2i, 2i+1): Helium's apply repeat_interleaves the first half of cos "
               "and sin and its rotate_half stacks x[..., 0::2], x[..., 1::2]"),
    "gptj": ({"layout": "interleaved"}, "pairs (2i, 2i+1): GPT-J's rotate_every_two"),
    "codegen": ({"layout": "interleaved"}, "pairs (2i, 2i+1): CodeGen's rotate_every_two, as GPT-J's"),
    **{m: ({"layout": "interleaved"}, f"pairs (2i, 2i+1): {name}'s rotary module repeat_interleaves its "
               "frequencies and its rotate_half stacks x[..., ::2], x[..., 1::2] (Cohere's)")
       for m, name in (("blt", "BLT"), ("cohere2_moe", "Cohere2-MoE"))},
    **{m: ({"layout": "interleaved"}, f"pairs (2i, 2i+1): {name}'s apply repeat_interleaves the first half of "
               "cos and sin and its rotate_half stacks x[..., 0::2], x[..., 1::2] (GLM's)")
       for m, name in (("glm4", "GLM-4"), ("ernie4_5", "ERNIE 4.5"), ("ernie4_5_moe", "ERNIE 4.5 MoE"),
                       ("moonshine_streaming", "Moonshine Streaming"))},
    **{m: ({"layout": "interleaved"}, f"pairs (2i, 2i+1): {name}'s apply_rotary_emb views adjacent dims as complex "
               "numbers and multiplies them by freqs_cis")
       for m, name in (("llama4", "Llama 4"), ("deepseek_v2", "DeepSeek-V2"))},
    **{m: ({"layout": "interleaved"}, "pairs (2i, 2i+1): the Perception Encoder's apply views adjacent dims as "
               "pairs and multiplies each by the 2x2 rotation of its frequency (stack_freqs of the first half of cos "
               "and sin)") for m in ("pe_audio", "pe_audio_video", "pe_video")},
    "openai_privacy_filter": ({"layout": "interleaved"}, "pairs (2i, 2i+1): its _apply_rotary_emb rotates "
                              "(x[..., ::2], x[..., 1::2]) by one frequency each and stacks them back"),
    **{m: ({"layout": "interleaved"}, f"pairs (2i, 2i+1): {name}'s attention always calls "
               "apply_rotary_pos_emb_interleave (DeepSeek-V3's, which its config cannot switch off)")
       for m, name in (("bailing_hybrid", "Bailing-Hybrid"), ("glm_moe_dsa", "GLM-MoE-DSA"),
                       ("longcat_flash", "LongCat-Flash"), ("mistral_large4", "Mistral Large 4"))},
    "mistral4": ({}, "the attention layer splits each head into [nope | rope] and rotates the trailing rotary dims "
                 "(the adapter moves pecheck's leading rotary dims there and back)"),
    "deepseek_v4": ({"layout": "interleaved"}, "pairs (2i, 2i+1) on the trailing rotary dims of a head laid out "
                    "[nope | rope]: DeepSeek-V4's apply repeat_interleaves cos and sin, rotates x[..., -rotary_dim:] "
                    "(the adapter moves pecheck's leading rotary dims there and back)"),
}
# Modules whose apply rotates the last rotary_dim dims of a head, not the first (QUIRKS says so).
TRAILING = ("deepseek_v4", "mistral4")

SCALING_FACTOR = 4

# Config keys stated beside the class defaults where those cannot build a runnable RoPE, each as the
# released configs state it: GLM-4.5's class default gives head_dim 4096 // 96 = 42, an odd rotary
# width int(42 * 0.5) = 21 that no rule can pair.
RELEASED = {"glm4_moe": ({"head_dim": 128}, "head_dim=128 (GLM-4.5's released config; the class default "
                                            "4096 // 96 = 42 gives an odd rotary width, 21)")}


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


def _number(v):
    return f"{v:g}" if isinstance(v, float) else str(v)


def stated_text(config, reading: RopeReading):
    """What was read, as a user reads it in config.json: the rope parameters the config states (long
    factor lists elided), the head width's source, and what transformers filled in."""
    raw = getattr(config, "rope_parameters", None)
    if raw is not None and reading.layer_type is not None:
        raw = raw.get(reading.layer_type)
    if raw is not None:
        text = "rope_parameters" + (f"[{reading.layer_type}]" if reading.layer_type else "") + "={" + ",".join(
            f"{k}={_number(v)}" for k, v in raw.items() if k not in ("short_factor", "long_factor")) + "}"
    else:  # transformers 4
        text = f"rope_theta={reading.rope_theta:g}"
        if getattr(config, "rope_scaling", None):
            text += "; rope_scaling={" + ",".join(f"{k}={_number(v)}" for k, v in config.rope_scaling.items()
                                                   if k not in ("short_factor", "long_factor")) + "}"
    try:
        width, hd = head_dim_of(config)
    except (AttributeError, RuntimeError):  # a heterogeneous config (Gemma 4): head_dim is per layer
        width, hd = None, ""
    if width != reading.head_dim:
        hd = f"head_dim={reading.head_dim}" + (f" (per_layer_config[{reading.layer_type!r}])" if width is None else "")
    parts = [text, hd]
    if getattr(config, "rope_interleave", False):
        parts.append("rope_interleave=True")
    return "; ".join(parts + list(reading.notes))


def convention_of(config, key, layer_type=None):
    """(convention, what was read, quirk) for a config-built rotary module of modeling module `key`."""
    conv = convention_from_config(config, layer_type)
    reading = read_rope(config, layer_type)
    quirk = ""
    if key in QUIRKS:  # what the config states wins (DeepSeek's rope_interleave)
        extra, quirk = QUIRKS[key]
        conv = {**extra, **conv}
    return conv, stated_text(config, reading), quirk


def rotary_fn(make_cos_sin, apply, split, layer_type=None, deinterleaved=False, trailing=0):
    """fn(x, positions) for pecheck: x (n, heads, d) in the model's layout (1, heads, n, d) and back.
    split: the attention layer (not apply) rotates the first `split` dims (its int(head_dim *
    partial_rotary_factor)) and passes the rest; True: the first cos.shape[-1] (transformers 4's modules).
    deinterleaved: apply reads pairs (2i, 2i+1) and writes pair i's result at (i, i + d/2) (DeepSeek's
    apply_rotary_pos_emb_interleave): its output is put back in the pairs' own places.
    trailing: apply rotates the last `trailing` dims (DeepSeek-V4): pecheck's leading rotary dims are
    moved there and back."""
    import torch

    extra = {} if layer_type is None else {"layer_type": layer_type}

    def fn(x, positions):
        q = x.transpose(0, 1).unsqueeze(0)
        if trailing:
            q = torch.cat((q[..., trailing:], q[..., :trailing]), dim=-1)
        with torch.no_grad():
            cos, sin = make_cos_sin(q, positions.unsqueeze(0), **extra)

            def rotate(part):
                y, _ = apply(part, part, cos, sin)
                if deinterleaved:
                    half = y.shape[-1] // 2
                    y = torch.stack((y[..., :half], y[..., half:]), dim=-1).flatten(-2)
                return y

            r = cos.shape[-1] if split is True else split
            if split and trailing:  # the attention layer splits [nope | rope] (Mistral 4)
                y = torch.cat((q[..., :-trailing], rotate(q[..., -trailing:])), dim=-1)
            elif split and r < q.shape[-1]:
                y = torch.cat((rotate(q[..., :r]), q[..., r:]), dim=-1)
            else:
                y = rotate(q)
        if trailing:
            y = torch.cat((y[..., -trailing:], y[..., :-trailing]), dim=-1)
        return y[0].transpose(0, 1)

    return fn


def splits_inside(apply):
    """Whether apply itself splits q into rotated and passed dims (GLM, Phi-3, GPT-NeoX)."""
    src = inspect.getsource(apply)
    return "q_pass" in src or "rot_dim" in src or "rotary_dim" in src


def uses_rope_init(cls):
    return "ROPE_INIT_FUNCTIONS" in inspect.getsource(cls) or "rope_init_fn" in inspect.getsource(cls)


def scaling_variants(reading: RopeReading, max_position):
    """(variant, the rule's rope parameters, max_position) for each rule of HF's ROPE_INIT_FUNCTIONS
    but "proportional" (Gemma 4's, checked where a config states it). "dynamic" rescales by each
    call's length past L0 = max_position_embeddings: pinned so, it is judged by the laws that call
    at a case's own positions (FRESH_MODULE)."""
    stretched = max_position
    l0 = stretched // SCALING_FACTOR
    f = float(SCALING_FACTOR)
    pairs = reading.rotary_dim // 2
    short = [round(1.0 + 0.02 * (i % 7) + 0.1 * i / pairs, 4) for i in range(pairs)]
    long = [round(1.0 + 3.0 * (i / max(pairs - 1, 1)) ** 2.5 + 0.03 * (i % 3), 4) for i in range(pairs)]
    return [
        ("linear", {"rope_type": "linear", "factor": f}, None),
        # Qwen2.5's model card: L0 = max_position_embeddings, both stated.
        ("yarn", {"rope_type": "yarn", "factor": f, "original_max_position_embeddings": stretched}, None),
        # YaRN's paper and DeepSeek's configs: max_position_embeddings is the stretched context.
        ("yarn-stretched", {"rope_type": "yarn", "factor": f, "original_max_position_embeddings": l0}, None),
        ("llama3", {"rope_type": "llama3", "factor": f, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                    "original_max_position_embeddings": l0}, None),
        # Phi-3's configs: L0 stated, the factor left to max_position_embeddings / L0; the short regime.
        ("longrope-short", {"rope_type": "longrope", "short_factor": short, "long_factor": long,
                            "original_max_position_embeddings": l0}, l0 - 1),
        # dynamic NTK-aware scaling: the base stretched by each call's length past max_position_embeddings.
        ("dynamic", {"rope_type": "dynamic", "factor": f}, None),
    ]


# The verdict's properties for a pinned RoPE: agreement (under the strongest contract met), the
# per-call laws, and the laws that compare calls, each judged under the contract met (under
# fp32-angles on each call's own bound, below that contract's ceiling: docs/error-model.md
# rope.relational.contract).
LAWS = dict(
    contracts=("exact", "dtype-trig", "fp32-angles"),
    asserted=("rope.agrees_with_reference", "rope.orthogonal", "rope.inverse", "rope.nan_parity", "rope.inf_parity",
              "rope.relative", "rope.composition", "rope.offset_invariance"),
)

# transformers' dynamic NTK pinned: each call's base from its own max(position) + 1, so pecheck skips
# the laws comparing calls at different positions (they do not hold, and say so) and the verdict
# rests on those calling at a case's own positions. The rotary module is built afresh per call: one
# kept across calls rotates by the longest call it has seen (max_seq_len_cached).
FRESH_MODULE = ", a rotary module built afresh per call (its cache keeps the longest call's frequencies)"


def no_negative(positions):
    """A module that gathers rows of a table cannot take a negative position (Python indexing would
    read the table from its end): such a case is declined, not judged."""
    import pecheck

    if int(positions.min()) < 0:
        raise pecheck.Unsupported("a table of rows 0..max_position has no negative position")


def apply_for(module, config):
    """The apply function the attention layer calls: DeepSeek-V3's interleaved one where the config
    says rope_interleave or the module has no other (the MLA models: LongCat, GLM-5 DSA, Bailing),
    Llama 4's and DeepSeek-V2's complex apply_rotary_emb, else apply_rotary_pos_emb."""
    plain = getattr(module, "apply_rotary_pos_emb", None)
    interleave = getattr(module, "apply_rotary_pos_emb_interleave", None)
    if interleave is not None and (plain is None or getattr(config, "rope_interleave", False)):
        return interleave, "apply_rotary_pos_emb_interleave"
    if plain is None and hasattr(module, "apply_rotary_emb"):
        return module.apply_rotary_emb, "apply_rotary_emb"
    return plain, "apply_rotary_pos_emb"


def complex_fn(rope, apply, seq_first):
    """fn(x, positions) for a rotary module returning freqs_cis (complex, Llama 4, DeepSeek-V2) and an
    apply_rotary_emb(xq, xk, freqs_cis) over x laid out (1, n, heads, d) (seq_first) or (1, heads, n, d)."""
    import torch

    def fn(x, positions):
        q = x.unsqueeze(0) if seq_first else x.transpose(0, 1).unsqueeze(0)
        with torch.no_grad():
            y, _ = apply(q, q, rope(q, positions.unsqueeze(0)))
        return y[0] if seq_first else y[0].transpose(0, 1)

    return fn


def _rebuilt(config_cls, config, rule):
    """The config class built again with the rule's rope parameters (transformers 5) or rope_scaling
    (4), or the reason it refuses them. A class that rewrites the rule does not offer it."""
    base = {"rope_theta": read_rope(config).rope_theta}
    changes = {k: getattr(config, k) for k in ("head_dim",) if k in vars(config) and getattr(config, k)}
    if getattr(config, "rope_parameters", None) is not None:
        params = {**base, **dict(rule)}
        if "partial_rotary_factor" in config.rope_parameters:
            params["partial_rotary_factor"] = config.rope_parameters["partial_rotary_factor"]
        spellings = [{"rope_parameters": params, **changes}]
    else:  # transformers 4: HF's "rope_type", or the older "type" (Phi-3, OLMo)
        spellings = [{"rope_scaling": dict(rule)},
                     {"rope_scaling": {("type" if k == "rope_type" else k): v for k, v in rule.items()}}]
    why = ""
    for kwargs in spellings:
        try:
            cfg = config_cls(**kwargs)
            break
        except Exception as e:  # noqa: BLE001 - a rule the class refuses (strict validation) is not offered
            why = f"{type(e).__name__}: {str(e).splitlines()[0][:120]}"
    else:
        return None, why
    stored = getattr(cfg, "rope_parameters", None) or getattr(cfg, "rope_scaling", None) or {}
    if any(stored.get(k, stored.get("type") if k == "rope_type" else None) != v for k, v in rule.items()
           if k != "original_max_position_embeddings"):
        return None, f"the config class rewrites rope_type {rule['rope_type']}"
    return cfg, ""


def rotary_class_v4(module):
    """transformers 4's pick: the module's only text rotary class."""
    found = [c for n, c in vars(module).items()
             if inspect.isclass(c) and n.endswith("RotaryEmbedding") and "Vision" not in n
             and "Linear" not in n and "Dynamic" not in n and "Unpadded" not in n]
    return found[0] if len(found) == 1 else None


# The rope_scaling rules are run once per rotary implementation: implementation() -> the first
# architecture whose rows ran them (most modules are transformers' "Copied from Llama" code).
RULES_CHECKED = {}


def implementation(cls, apply, config):
    """The rotary class's, apply function's and rotate_half's source, comments and docstrings dropped
    and the architecture's own names taken out: two modules with the same compute a rule alike."""
    import re

    prefix = cls.__name__.removesuffix("RotaryEmbedding")
    parts = []
    for obj in (cls, apply, getattr(inspect.getmodule(apply), "rotate_half", None)):
        if obj is None:
            continue
        src = inspect.getsource(obj).replace(prefix, "X").replace(type(config).__name__, "XConfig")
        src = "\n".join(line.split("#")[0].rstrip() for line in src.splitlines()
                        if line.strip() and not line.strip().startswith("#"))
        parts.append(re.sub(r'""".*?"""', "", src, flags=re.S))
    return hash(tuple(parts))


def config_style(arch, module, config_cls):
    """Modules built as XRotaryEmbedding(config=config), forward(x, position_ids[, layer_type]) -> (cos, sin)."""
    config = text_config(config_cls())
    default_variant = "default"
    released, released_text = RELEASED.get(arch, ({}, ""))
    if released:
        config = type(config)(**released)
    if getattr(config, "position_embedding_type", "rotary") not in ("rotary", None):
        # ESM: rotary only where the config says so (ESM-2's configs do; the class's default is absolute)
        config = type(config)(position_embedding_type="rotary")
        default_variant = "rotary"
    cls = discover.rotary_class_for(module, config)
    if cls is None or "mrope_section" in inspect.getsource(cls):
        return None
    apply, apply_name = apply_for(module, config)
    if apply is None:
        raise NotCallable(f"{cls.__name__}: the module has no apply_rotary_pos_emb (or _interleave, apply_rotary_emb) "
                          "to rotate with")
    try:
        params = list(inspect.signature(cls.forward).parameters)[1:]
        apply_params = list(inspect.signature(apply).parameters)
    except (TypeError, ValueError):
        return None
    if "config" not in inspect.signature(cls.__init__).parameters or params[:2] != ["x", "position_ids"]:
        raise NotCallable(f"{cls.__name__}: not built from the config or its forward is not (x, position_ids) "
                          f"(forward{tuple(params)})")
    key = discover.module_key(module)
    if apply_params[:3] == ["xq", "xk", "freqs_cis"]:  # complex rotation of adjacent pairs
        return complex_subjects(arch, key, cls, apply, config)
    if apply_params[:3] == ["x", "cos", "sin"]:  # Gemma 4: apply(x, cos, sin), one tensor at a time
        one = apply

        def apply(q, k, cos, sin):
            return one(q, cos, sin), None
    elif apply_params[:2] != ["q", "k"]:
        return None  # GPT-J's (tensor, sin, cos): rope_tables.interleaved_sinusoid_style
    split = not splits_inside(apply)
    names = f"{cls.__name__} + {apply_name}" + ("" if not split else " (split as the attention layer does)")
    deinterleaved = apply_name == "apply_rotary_pos_emb_interleave"
    if deinterleaved:
        names += (" (its output re-interleaved: it writes pair i's result at dims (i, i + d/2), a permutation q "
                  "and k share)")

    def make(cfg, layer_type=None):
        r = read_rope(cfg, layer_type)
        # proportional RoPE turns pairs over the whole head (the rest at frequency 0): nothing to split
        width = r.head_dim if r.rope_type == "proportional" else r.rotary_dim
        trailing = width if key in TRAILING else 0
        at = width if split and width < r.head_dim else 0
        if r.rope_type == "dynamic":  # a module per call: its cache of the longest call is history
            return lambda: rotary_fn(lambda *a, **kw: cls(config=cfg)(*a, **kw), apply, at, layer_type,
                                     deinterleaved, trailing)
        return lambda: rotary_fn(cls(config=cfg), apply, at, layer_type, deinterleaved, trailing)

    config_cls = type(config)
    reading = read_rope(config)
    if isinstance(reading, dict):  # one RoPE per attention layer type: one row per type
        if "layer_type" not in params:
            raise ValueError(f"the config states a RoPE per layer type ({', '.join(reading)}) but "
                             f"{cls.__name__}.forward takes no layer_type")
        subjects = []
        for layer_type in reading:
            conv, stated, quirk = convention_of(config, key, layer_type)
            subjects.append(Subject(arch, "rope", layer_type, "rope", make(config, layer_type), conv, stated,
                                    names + f", layer_type={layer_type!r}", quirk, **LAWS))
        return subjects
    conv, stated, quirk = convention_of(config, key)
    if default_variant == "rotary":
        stated = "position_embedding_type=rotary (ESM-2's configs); " + stated
    if released_text:
        stated += "; " + released_text
    subjects = [Subject(arch, "rope", default_variant, "rope", make(config), conv, stated, names, quirk, **LAWS)]
    if not uses_rope_init(cls) or reading.rope_type != "default":
        return subjects
    same = RULES_CHECKED.setdefault(implementation(cls, apply, config), arch)
    if same != arch:  # the rules run through code already checked with them: said, not run again
        subjects[0].module += f"; rope_scaling rules: as `{same}`'s (the same rotary and apply source)"
        return subjects
    if not getattr(config, "max_position_embeddings", None):
        return subjects  # no trained context to scale (RecurrentGemma's attention window)
    for variant, rule, max_position in scaling_variants(reading, config.max_position_embeddings):
        cfg, _why = _rebuilt(config_cls, config, rule)
        if cfg is None:
            continue
        try:
            c, s, q = convention_of(cfg, key)
        except ValueError:
            continue
        if max_position is not None:  # LongRoPE's short regime: below the L0 transformers reads (Phi-4-MM's
            # config states its own original_max_position_embeddings beside rope_parameters, which wins)
            max_position = read_rope(cfg).parameters["original_max_position_embeddings"] - 1
        how = FRESH_MODULE if variant == "dynamic" else ""
        subjects.append(Subject(arch, "rope", variant, "rope", make(cfg), c, s, names + how, q, max_position, **LAWS))
    return subjects


def complex_subjects(arch, key, cls, apply, config):
    """Llama 4's and DeepSeek-V2's RoPE: freqs_cis = polar(1, p w) from the rotary module, and
    apply_rotary_emb multiplying adjacent pairs viewed as complex numbers (the default row only:
    their rules go through the same ROPE_INIT_FUNCTIONS as every other module's)."""
    seq_first = "freqs_cis[:, :, None, :]" in inspect.getsource(apply)
    conv, stated, quirk = convention_of(config, key)
    return [Subject(arch, "rope", "default", "rope", lambda: complex_fn(cls(config=config), apply, seq_first), conv,
                    stated, f"{cls.__name__} (freqs_cis) + apply_rotary_emb, x as " +
                    ("(batch, seq, heads, d)" if seq_first else "(batch, heads, seq, d)"), quirk, **LAWS)]


def dim_style(arch, module, config_cls):
    """transformers 4's modules built from (dim, base[, max_position_embeddings]) by the attention
    layer (Chameleon, DBRX, RecurrentGemma in 4.49); transformers 5 builds them from the config."""
    config = config_cls()
    apply = getattr(module, "apply_rotary_pos_emb", None)
    names = {"chameleon": "ChameleonRotaryEmbedding", "dbrx": "DbrxRotaryEmbedding",
             "recurrent_gemma": "RecurrentGemmaRotaryEmbedding"}
    cls = getattr(module, names.get(arch, ""), None)
    if cls is None or apply is None or "config" in inspect.signature(cls.__init__).parameters:
        return None
    head_dim, _ = head_dim_of(config)
    if arch == "chameleon":
        rope = cls(head_dim, max_position_embeddings=config.max_position_embeddings, base=config.rope_theta)
        conv, stated, quirk = convention_of(config, discover.module_key(module))
    elif arch == "dbrx":
        head_dim = config.d_model // config.n_heads
        theta = config.attn_config.rope_theta
        rope = cls(head_dim, max_position_embeddings=config.max_seq_len, base=theta)
        conv, quirk = {"rope_theta": theta, "head_dim": head_dim}, ""
        stated = f"attn_config.rope_theta={theta:g}; d_model/n_heads={config.d_model}/{config.n_heads}"
    else:
        rope = cls(int(config.partial_rotary_factor * head_dim), base=config.rope_theta)
        conv, stated, quirk = convention_of(config, discover.module_key(module))
    return [Subject(arch, "rope", "default", "rope", lambda: rotary_fn(rope, apply, True), conv, stated,
                    f"{cls.__name__}(dim, base) + apply_rotary_pos_emb", quirk, **LAWS)]
