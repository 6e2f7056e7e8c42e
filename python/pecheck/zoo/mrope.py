"""M-RoPE as the Qwen-VL family computes it. transformers 5: the text rotary module takes position_ids
of shape (3, batch, n) (temporal, height, width) and hands each rotary pair to its axis itself
(recomposition_frequencies), and the model's plain apply_rotary_pos_emb rotates. transformers 4: the
rotary module makes one (cos, sin) per axis and apply_multimodal_rotary_pos_emb picks by mrope_section.

The config classes do not state mrope_section by default (the rotary modules fall back to their own):
the zoo states the released configs' section in rope_parameters, and what the module does that no
config key says (the round-robin assignment of Qwen3-VL, GLM's pairs) is a quirk per modeling module."""
import inspect

from pecheck.hf_config import read_rope

from . import discover
from .discover import text_config
from .rope import head_dim_of, stated_text
from .subject import NotCallable, Subject

# mrope.relative is shown, not asserted: the zoo asserts agreement only.
LAWS = dict(contracts=("exact", "dtype-trig", "fp32-angles"), asserted=("mrope.agrees_with_reference",),
            reported=("mrope.relative",))

_QWEN3 = ("assignment interleaved: the module writes height into pairs 1, 4, ... < 3 s_h and width into 2, 5, "
          "... < 3 s_w of the temporal row ({name}.recomposition_frequencies, Qwen3-VL's round-robin; the "
          "released configs' mrope_interleaved=true is not read)")
_GLM = ("pairs (2i, 2i+1): {name}.recomposition_frequencies repeat_interleaves cos and sin and rotate_half_llm "
        "stacks x[..., 0::2], x[..., 1::2]")
# Per modeling module: what the zoo states in rope_parameters (the released configs' mrope_section),
# the config keys it states beside them where the class default cannot run that section (GLM-4.1V's
# and GLM-Image's released partial_rotary_factor 0.5, GLM-4.5V's head_dim 128: the class defaults give
# 64 or 21 rotary pairs for a 32-pair section), and the quirk (assignment, layout).
SECTIONS = {
    **{m: ({"mrope_section": [16, 24, 24]}, {}, {}, "") for m in ("qwen2_vl", "qwen2_5_vl", "qwen2_5_omni",
                                                                 "paddleocr_vl")},
    **{m: ({"mrope_section": [24, 20, 20]}, {}, {"assignment": "interleaved"}, _QWEN3)
       for m in ("qwen3_vl", "qwen3_vl_moe", "cosmos3_edge", "cohere_compass")},
    # Qwen3-Omni's thinker: the class default's 2048 / 28 heads = 73 is no even head; its released config
    # states head_dim 128.
    "qwen3_omni_moe": ({"mrope_section": [24, 20, 20]}, {"head_dim": 128}, {"assignment": "interleaved"}, _QWEN3),
    "hy_v4_vl": ({"mrope_section": [24, 20, 20]}, {}, {"assignment": "interleaved", "layout": "interleaved"},
                 _QWEN3 + "; pairs (2i, 2i+1): its apply repeat_interleaves the first half of cos and sin and its "
                          "rotate_half stacks x[..., 0::2], x[..., 1::2] (GLM's)"),
    **{m: ({"mrope_section": [11, 11, 10]}, {}, {"assignment": "interleaved"}, _QWEN3)
       for m in ("qwen3_5", "qwen3_5_moe")},
    # Qwen4-Exp's class default states no partial rotary factor: its 256-wide head has 128 pairs for a
    # 32-pair section; Qwen3.5's released configs (its base) rotate a quarter.
    "qwen4_exp": ({"mrope_section": [11, 11, 10], "partial_rotary_factor": 0.25}, {}, {"assignment": "interleaved"},
                  _QWEN3),
    "glm4v": ({"mrope_section": [8, 12, 12], "partial_rotary_factor": 0.5}, {}, {"layout": "interleaved"}, _GLM),
    "glm_ocr": ({"mrope_section": [8, 12, 12]}, {}, {"layout": "interleaved"}, _GLM),
    "glm4v_moe": ({"mrope_section": [8, 12, 12]}, {"head_dim": 128}, {}, ""),
    "glm_image": ({"mrope_section": [8, 12, 12], "partial_rotary_factor": 0.5}, {}, {}, ""),
}
# M-RoPE modules whose assignment pecheck's mrope (three axes, sectioned or Qwen3-VL's round-robin)
# cannot state, each with what it does.
UNSTATED = {
    "ernie4_5_vl_moe": "ERNIE 4.5-VL pre-rotates its frequencies: height and width alternate over the first s_h + s_w "
                       "pairs (inv_freq re-ordered, even then odd indices) and temporal takes the last s_t, its section "
                       "read as (h, w, t): an assignment pecheck's mrope (sectioned or round-robin, t first) cannot state",
    "hunyuan_vl": "HunYuan-VL's M-RoPE has as many axes as its mrope_section has entries (none by default) and "
                  "sections counted in dims: a convention pecheck's three-axis mrope cannot state",
    "neomme": "NeoMME's rotary interleaves two axes (row0, col0, row1, col1, ...) over the whole head: pecheck's mrope "
              "has three",
}

# transformers 4.49's Qwen2-VL and Qwen2.5-VL (the config classes default to rope_scaling=None).
RELEASED_V4 = {"type": "mrope", "mrope_section": [16, 24, 24]}


def subjects(arch, module, config_cls):
    if hasattr(module, "apply_multimodal_rotary_pos_emb"):
        return _v4_subjects(arch, module, config_cls)
    config = text_config(config_cls())
    cls = discover.rotary_class_for(module, config)
    if cls is None or "mrope_section" not in inspect.getsource(cls):
        return None
    key = discover.module_key(module)
    if key in UNSTATED:
        raise NotCallable(f"{cls.__name__}: {UNSTATED[key]}")
    if key not in SECTIONS:
        raise NotCallable(f"{cls.__name__} is an M-RoPE module whose axis assignment the zoo has not written down")
    released, beside, quirk_conv, quirk = SECTIONS[key]
    raw = config.rope_parameters
    nested = all(v is None or isinstance(v, dict) for v in raw.values())
    stated = next((p for p in raw.values() if p), {}) if nested else raw
    if "mrope_section" in stated:  # what the config states wins (HY-V4-VL's class default has one)
        released = {k: v for k, v in released.items() if k not in stated}
        released["mrope_section"] = list(stated["mrope_section"])
    params = ({t: (None if p is None else {**released, **p}) for t, p in raw.items()} if nested
              else {**released, **raw})
    config = type(config)(rope_parameters=params, **beside)
    readings = read_rope(config)
    if not isinstance(readings, dict):
        readings = {None: readings}
    return [_subject(arch, cls, module.apply_rotary_pos_emb, config, reading, layer_type, released, beside,
                     quirk_conv, quirk, set(stated)) for layer_type, reading in readings.items()]


def _subject(arch, cls, apply, config, reading, layer_type, released, beside, quirk_conv, quirk, stated_keys):
    """One M-RoPE row: the whole config's, or one attention layer type's (Cohere Compass)."""
    import torch

    section = released["mrope_section"]
    rot = reading.rotary_dim
    extra = {} if layer_type is None else {"layer_type": layer_type}

    def build():
        rope = cls(config=config)

        def fn(x, temporal, height, width):
            # A partial rotary head: pecheck's mrope states the rotated dims, the model's apply splits
            # them off a full head whose passed dims must come back untouched.
            q = x.transpose(0, 1).unsqueeze(0)  # (1, heads, n, rot)
            full = torch.cat((q, torch.zeros(*q.shape[:-1], reading.head_dim - rot, dtype=q.dtype)), dim=-1)
            with torch.no_grad():
                cos, sin = rope(full, torch.stack([temporal, height, width])[:, None, :], **extra)
                y, _ = apply(full, full, cos, sin)
            if rot < reading.head_dim and bool((y[..., rot:] != 0).any()):
                raise ValueError("the passed dims of a partial rotary head changed")
            return y[0, ..., :rot].transpose(0, 1)

        return fn

    conv = {"rope_theta": reading.rope_theta, "head_dim": rot, "mrope_section": list(section), **quirk_conv}
    added = [k for k in [*released, *beside] if k != "mrope_section" or "mrope_section" not in stated_keys]
    stated = stated_text(config, reading) + (f" ({', '.join(added)}: the released configs')" if added else "")
    name = f"{cls.__name__} (position_ids (3, 1, n)) + apply_rotary_pos_emb"
    if rot < reading.head_dim:
        name += f", on the {rot} rotated dims of a {reading.head_dim}-wide head (the rest checked unchanged)"
    if layer_type is not None:
        name += f", layer_type={layer_type!r}"
    return Subject(arch, "mrope", layer_type or "default", "mrope", build, conv, stated, name,
                   quirk.format(name=cls.__name__), **LAWS)


def _v4_subjects(arch, module, config_cls):
    """transformers 4.49: Qwen2-VL's and Qwen2.5-VL's rotary module with apply_multimodal_rotary_pos_emb."""
    from .rope import rotary_class_v4

    apply = module.apply_multimodal_rotary_pos_emb
    cls = rotary_class_v4(module)
    if cls is None:
        return None
    import torch

    config = text_config(config_cls(rope_scaling=dict(RELEASED_V4)))
    section = list(config.rope_scaling["mrope_section"])
    head_dim, hd_text = head_dim_of(config)
    theta = float(config.rope_theta)

    def build():
        rope = cls(config=config)

        def fn(x, temporal, height, width):
            q = x.transpose(0, 1).unsqueeze(0)  # (1, heads, n, d)
            with torch.no_grad():
                cos, sin = rope(q, torch.stack([temporal, height, width])[:, None, :])
                y, _ = apply(q, q, cos, sin, section)
            return y[0].transpose(0, 1)

        return fn

    conv = {"rope_theta": theta, "head_dim": head_dim, "mrope_section": section}
    stated = f"rope_theta={theta:g}; {hd_text}; rope_scaling=type=mrope,mrope_section={section} (the released configs')"
    return [Subject(arch, "mrope", "default", "mrope", build, conv, stated,
                    f"{cls.__name__} + apply_multimodal_rotary_pos_emb", **LAWS)]
