"""The RoPE convention a Hugging Face transformers config states, in the words pecheck.check takes.

    from pecheck.hf_config import convention_from_config
    conv = convention_from_config(AutoConfig.from_pretrained("meta-llama/Llama-3.1-8B"))
    pecheck.check(apply_rope, "rope", conv, framework="torch")

Either config shape is read: transformers 4's (``rope_theta``, ``partial_rotary_factor`` and a
``rope_scaling`` dict as attributes) and transformers 5's (``rope_parameters``, one flat dict or one
per attention layer type, ``{"full_attention": {...}, "sliding_attention": {...}}``). A field the
config leaves out is filled the way transformers 5.24 fills it at model build time
(``modeling_rope_utils.standardize_rope_params`` and each ``_compute_*_parameters``), so the
convention is the one the config's model is meant to compute, not the one a reader guesses.

The config is duck-typed: nothing here imports transformers.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["RopeReading", "convention_from_config", "read_rope", "rope_layer_types"]

# The rules whose trained context (L0) transformers' standardize_rope_params fills in.
_TRAINED_CONTEXT_RULES = ("llama3", "yarn", "longrope")
# The rules that read config.head_dim without the `or` fallback: a head_dim attribute that is None
# makes transformers' module fail to build (_compute_yarn/longrope/dynamic_ntk_parameters).
_STRICT_HEAD_DIM_RULES = ("yarn", "longrope", "dynamic")
_KNOWN_RULES = ("default", "linear", "dynamic", "yarn", "longrope", "llama3", "proportional")


@dataclass(frozen=True)
class RopeReading:
    """One RoPE as a config states it, every field transformers fills in filled in.

    ``parameters`` is transformers 5's rope_parameters dict for this layer type after its
    standardisation and each rule's defaults (``factor``, ``original_max_position_embeddings``, the
    YaRN betas, ``truncate`` and attention factor, LongRoPE's factor) resolved."""

    rope_type: str
    rope_theta: float
    head_dim: int
    partial_rotary_factor: float
    parameters: dict[str, Any]
    interleaved: bool = False  # the config states GPT-J pairs (DeepSeek-V3's rope_interleave)
    layer_type: str | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)  # where a value came from, when not from the config

    @property
    def rotary_dim(self) -> int:
        """transformers' int(head_dim * partial_rotary_factor) (pecheck's rotary_dim)."""
        return int(self.head_dim * self.partial_rotary_factor)

    @property
    def mrope_section(self) -> list[int] | None:
        section = self.parameters.get("mrope_section")
        return list(section) if section is not None else None


def _get(config: Any, key: str, default: Any = None) -> Any:
    """getattr that also survives a transformers 5 heterogeneous config (Gemma 4), whose per-layer
    attributes raise AmbiguousGlobalPerLayerAttributeError, a RuntimeError, on the global config."""
    try:
        return getattr(config, key, default)
    except (AttributeError, RuntimeError):
        return default


def _is_nested(params: Mapping[str, Any]) -> bool:
    # A flat rope_parameters holds numbers, strings, booleans and lists; one keyed by layer type
    # holds a dict (or None: a layer type with no RoPE) per type.
    return bool(params) and all(v is None or isinstance(v, Mapping) for v in params.values())


def _default_theta(config: Any) -> float:
    theta = _get(config, "default_theta", 10000.0)
    if isinstance(theta, Mapping):  # Gemma 3's {"global": ..., "local": ...}: no single default
        raise ValueError("rope_theta is not stated and the config's default_theta is per layer type")
    return float(theta)


def _v4_parameters(config: Any) -> dict[str, Any]:
    """transformers 4's attributes as transformers 5's rope_parameters (what convert_rope_params_to_dict
    does with them), keyed by layer type where a v4 config states a second base for local layers."""
    theta = next((_get(config, k) for k in ("rope_theta", "rotary_emb_base", "rope_base") if _get(config, k) is not None),
                 None)
    partial = next((_get(config, k) for k in ("partial_rotary_factor", "rotary_pct") if _get(config, k) is not None),
                   None)
    main: dict[str, Any] = dict(_get(config, "rope_scaling", None) or {})
    if theta is not None:
        main.setdefault("rope_theta", float(theta))
    if partial is not None:
        main.setdefault("partial_rotary_factor", float(partial))
    local = _get(config, "rope_local_base_freq")  # Gemma 3 (4.50+): the sliding layers' base, unscaled
    if local is None and _get(config, "local_rope_theta") is not None:  # ModernBERT (4.48+)
        local = _get(config, "local_rope_theta")
        main.setdefault("rope_theta", float(_get(config, "global_rope_theta", theta or 10000.0)))
    if local is None:
        return main
    sliding: dict[str, Any] = {"rope_type": "default", "rope_theta": float(local)}
    if partial is not None:
        sliding["partial_rotary_factor"] = float(partial)
    return {"full_attention": main, "sliding_attention": sliding}


def _raw_parameters(config: Any) -> dict[str, Any]:
    if _get(config, "rope_parameters") is not None:  # transformers 5
        return copy.deepcopy(dict(_get(config, "rope_parameters")))
    return _v4_parameters(config)


def rope_layer_types(config: Any) -> tuple[str, ...]:
    """The layer types a config states a RoPE for, in its order; () when one RoPE serves every layer.
    As transformers 5's nested_rope_parameter_keys: only the types the config's layers have (its
    layer_types, or the _rope_type_labels of DeepSeek-V4 and LFM3), where it names them. A layer type
    whose entry is None (a layer without RoPE) is left out."""
    params = _raw_parameters(config)
    if not _is_nested(params):
        return ()
    labels = _get(config, "_rope_type_labels") or _get(config, "layer_types")
    return tuple(k for k, v in params.items() if v is not None and (not labels or k in labels))


def _head_dim(config: Any, rule: str, key: str = "head_dim") -> int:
    heads = _get(config, "num_attention_heads") or _get(config, "n_head")
    hidden = _get(config, "hidden_size") or _get(config, "n_embd")
    fallback = hidden // heads if hidden and heads else None
    if rule in _STRICT_HEAD_DIM_RULES and _get(config, key, fallback) is None:
        if key in vars(config):
            raise ValueError(f"config.{key} is None: transformers' {rule} rule reads it without a fallback "
                             "and cannot build the module")
    value = _get(config, key) or fallback
    if not value:
        raise ValueError("the config states no head_dim and no hidden_size / num_attention_heads")
    return int(value)


def _mscale(scale: float, mscale: float = 1.0) -> float:
    return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0


def _resolve(params: dict[str, Any], config: Any, layer_config: Any, nested: bool, layer_type: str | None,
             flat_params: Mapping[str, Any]) -> RopeReading:
    notes: list[str] = []
    p = dict(params)
    # standardize_rope_params: the rule (HF's older "type"), the base, the partial rotary factor.
    p.setdefault("rope_type", p.get("type", "default"))
    p.pop("type", None)
    if p["rope_type"] == "mrope":  # transformers 4's Qwen2-VL spelling, which its config class rewrote
        p["rope_type"] = "default"
    rule = p["rope_type"]
    default_type = _get(config, "default_rope_type", "default")
    if default_type != "default" and rule == "default":
        rule = p["rope_type"] = default_type
    if p.get("rope_theta") is None:
        attr = _get(config, "rope_theta")
        p["rope_theta"] = float(attr) if attr is not None else _default_theta(config)
        if attr is None:
            notes.append(f"rope_theta not stated: the config class's default {p['rope_theta']:g}")
    if _get(config, "partial_rotary_factor") is not None:
        p.setdefault("partial_rotary_factor", _get(config, "partial_rotary_factor"))
    if rule not in _KNOWN_RULES:
        raise ValueError(f"rope_type '{rule}' is not a 1-D RoPE rule pecheck states "
                         f"({', '.join(_KNOWN_RULES)}; 'axial' is 2-D RoPE)")
    max_pos = _get(config, "max_position_embeddings")
    if rule in _TRAINED_CONTEXT_RULES:
        top = _get(config, "original_max_position_embeddings")
        if not nested and hasattr(config, "original_max_position_embeddings"):
            # Phi-3's configs state L0 beside rope_parameters; transformers gives that one priority,
            # even over rope_parameters' own, and even when it is None (the module then cannot build).
            if top is None:
                raise ValueError("config.original_max_position_embeddings is None: transformers gives it priority "
                                 f"for rope_type {rule} and cannot build the module")
            p["original_max_position_embeddings"] = top
        elif p.get("original_max_position_embeddings") is None:
            p["original_max_position_embeddings"] = max_pos
            notes.append("original_max_position_embeddings not stated: max_position_embeddings, as transformers "
                         "fills it in")
    head_dim_key = "head_dim"
    head_dim = _head_dim(layer_config, rule, head_dim_key)
    partial = float(p.get("partial_rotary_factor", 1.0))
    if rule in ("linear", "dynamic", "llama3") and p.get("factor") is None:
        raise ValueError(f"rope_type {rule} needs 'factor' and the config states none")
    if rule == "dynamic":
        # _compute_dynamic_ntk_parameters stretches past config.max_position_embeddings, whatever
        # rope_parameters says.
        p["original_max_position_embeddings"] = max_pos
    if rule in ("yarn", "longrope") and p.get("factor") is None:
        p["factor"] = max_pos / p["original_max_position_embeddings"]
        notes.append("factor not stated: max_position_embeddings / original_max_position_embeddings")
    if rule == "yarn":
        factor = float(p["factor"])
        if p.get("attention_factor") is None:
            mscale, mscale_all = p.get("mscale"), p.get("mscale_all_dim")
            p["attention_factor"] = (_mscale(factor, mscale) / _mscale(factor, mscale_all)
                                     if mscale and mscale_all else _mscale(factor))
        p["beta_fast"] = p.get("beta_fast") or 32.0  # `or`: transformers reads 0 as unset too
        p["beta_slow"] = p.get("beta_slow") or 1.0
        # _compute_yarn_parameters reads `truncate` from config.rope_parameters itself, the flat dict:
        # a per-layer-type config's own `truncate` is never read, and the correction range truncates.
        stated = flat_params.get("truncate", True) if not nested else True
        if nested and p.get("truncate") is False:
            notes.append("truncate=False in this layer type's parameters is not read by transformers: "
                         "truncate=True")
        p["truncate"] = bool(stated)
    if rule == "longrope":
        for key in ("short_factor", "long_factor"):
            if not isinstance(p.get(key), (list, tuple)):
                raise ValueError(f"rope_type longrope needs '{key}', a list")
        if p.get("attention_factor") is None:
            f = float(p["factor"])
            p["attention_factor"] = 1.0 if f <= 1 else math.sqrt(
                1 + math.log(f) / math.log(p["original_max_position_embeddings"]))
            p["_attention_factor_default"] = True
    if rule == "proportional":
        p.setdefault("factor", 1.0)
    interleaved = bool(_get(config, "rope_interleave", False))
    return RopeReading(rule, float(p["rope_theta"]), head_dim, partial, p, interleaved, layer_type, tuple(notes))


def read_rope(config: Any, layer_type: str | None = None) -> RopeReading | dict[str, RopeReading]:
    """The config's RoPE, resolved: one RopeReading, or for a config with a RoPE per layer type one
    per type (a dict layer_type -> RopeReading) unless `layer_type` names one."""
    params = _raw_parameters(config)
    nested = _is_nested(params)
    if not nested:
        return _resolve(params, config, config, False, layer_type, params)
    types = rope_layer_types(config)
    if layer_type is not None:
        if layer_type not in params:
            raise ValueError(f"layer_type: '{layer_type}' is not one of the config's RoPE layer types "
                             f"({', '.join(types)})")
        if params[layer_type] is None:
            raise ValueError(f"layer_type: '{layer_type}' layers have no RoPE (rope_parameters['{layer_type}'] "
                             "is None)")
        return _resolve(params[layer_type], config, _layer_config(config, layer_type), True, layer_type, params)
    return {t: _resolve(params[t], config, _layer_config(config, t), True, t, params) for t in types}


def _layer_config(config: Any, layer_type: str) -> Any:
    """The config a layer type's module is built from: transformers 5's per_layer_config view where a
    config has one (Gemma 4's full-attention layers have their own head_dim), else the config."""
    try:
        view = config.per_layer_config
        return view[layer_type]
    except (AttributeError, ValueError, KeyError, TypeError, IndexError):
        return config


def _v4_words(r: RopeReading) -> dict[str, Any] | None:
    """The convention in transformers 4's words, or None where only rope_parameters' words state it."""
    p = r.parameters
    conv: dict[str, Any] = {"rope_theta": r.rope_theta, "head_dim": r.head_dim}
    if r.partial_rotary_factor != 1.0:
        conv["partial_rotary_factor"] = r.partial_rotary_factor
    if r.interleaved:
        conv["layout"] = "interleaved"
    rule = r.rope_type
    if rule == "default":
        return conv
    if rule == "proportional":
        return None
    scaling: dict[str, Any] = {"rope_type": rule, "factor": float(p["factor"])}
    if rule in ("dynamic", "llama3", "yarn", "longrope"):
        scaling["original_max_position_embeddings"] = int(p["original_max_position_embeddings"])
    if rule == "llama3":
        scaling.update(low_freq_factor=float(p["low_freq_factor"]), high_freq_factor=float(p["high_freq_factor"]))
    if rule == "yarn":
        # pecheck's reader models a truncated correction range and the 0.1 ln s + 1 attention factor.
        if not p["truncate"] or not math.isclose(p["attention_factor"], _mscale(float(p["factor"])),
                                                 rel_tol=1e-12):
            return None
        scaling.update(beta_fast=float(p["beta_fast"]), beta_slow=float(p["beta_slow"]))
    if rule == "longrope":
        scaling.update(short_factor=list(p["short_factor"]), long_factor=list(p["long_factor"]))
        if not p.get("_attention_factor_default"):
            if p["attention_factor"] <= 0:  # pecheck reads 0 as "the default"; transformers multiplies by it
                raise ValueError(f"LongRoPE attention_factor {p['attention_factor']} is not one pecheck states")
            scaling["attention_factor"] = float(p["attention_factor"])
    conv["rope_scaling"] = scaling
    return conv


# The rope_parameters keys a RoPE rule reads (transformers' RopeParameters); mscale and mscale_all_dim
# are resolved into attention_factor; model-specific keys (Ministral 3's llama_4_scaling_beta, a query
# scale the attention layer applies) are not the rotary module's.
_RULE_KEYS = ("rope_type", "rope_theta", "partial_rotary_factor", "factor", "original_max_position_embeddings",
              "attention_factor", "beta_fast", "beta_slow", "truncate", "short_factor", "long_factor",
              "low_freq_factor", "high_freq_factor")


def _v5_words(r: RopeReading) -> dict[str, Any]:
    """The convention as transformers 5's rope_parameters, every default resolved."""
    params = {k: v for k, v in r.parameters.items() if k in _RULE_KEYS}
    params["partial_rotary_factor"] = r.partial_rotary_factor
    conv: dict[str, Any] = {"head_dim": r.head_dim, "rope_parameters": params}
    if r.interleaved:
        conv["layout"] = "interleaved"
    return conv


def _mrope_words(r: RopeReading) -> dict[str, Any]:
    """M-RoPE's convention (pecheck.check op="mrope"), in Qwen2-VL's words."""
    if r.rope_type != "default" or r.partial_rotary_factor != 1.0:
        raise ValueError(f"M-RoPE with rope_type {r.rope_type} and partial_rotary_factor "
                         f"{r.partial_rotary_factor:g}: pecheck's mrope convention states full-width, unscaled M-RoPE")
    conv: dict[str, Any] = {"rope_theta": r.rope_theta, "head_dim": r.head_dim, "mrope_section": r.mrope_section}
    if r.parameters.get("mrope_interleaved"):  # Qwen3-VL's configs state the round-robin assignment
        conv["assignment"] = "interleaved"
    if r.interleaved:
        conv["layout"] = "interleaved"
    return conv


def _convention(r: RopeReading) -> dict[str, Any]:
    if r.mrope_section is not None:
        return _mrope_words(r)
    return _v4_words(r) or _v5_words(r)


def convention_from_config(config: Any, layer_type: str | None = None
                           ) -> dict[str, Any] | dict[str, dict[str, Any]]:
    """The convention pecheck.check takes for the RoPE `config` states (op="rope"; op="mrope" where it
    states an mrope_section).

    transformers 4's words (rope_theta, head_dim, partial_rotary_factor, rope_scaling) where they state
    the config exactly; transformers 5's rope_parameters otherwise (a YaRN correction range left
    untruncated, a YaRN attention factor other than 0.1 ln s + 1, proportional RoPE). For a config
    with a RoPE per attention layer type: a dict layer_type -> convention, or the one of
    `layer_type`. Raises ValueError for a RoPE no pecheck convention states (2-D axial RoPE, a rule
    missing its fields)."""
    reading = read_rope(config, layer_type)
    if isinstance(reading, dict):
        return {t: _convention(r) for t, r in reading.items()}
    return _convention(reading)
