"""M-RoPE as Qwen2-VL and Qwen2.5-VL compute it: the rotary module builds (cos, sin) for position_ids of
shape (3, batch, n) (temporal, height, width), and apply_multimodal_rotary_pos_emb hands each block of
pairs to its axis by rope_scaling's mrope_section."""
import inspect

from .discover import text_config
from .rope import head_dim_of, rope_theta_of
from .subject import Subject

# The released Qwen2-VL and Qwen2.5-VL configs state this (the config classes' default is None, which
# their attention layer cannot run with).
RELEASED = {"type": "mrope", "mrope_section": [16, 24, 24]}

LAWS = dict(contracts=("exact", "dtype-trig", "fp32-angles"), asserted=("mrope.agrees_with_reference",),
            reported=("mrope.relative",), why_reported="relational law: no bound under the fp32-angles contract")


def subjects(arch, module, config_cls):
    apply = getattr(module, "apply_multimodal_rotary_pos_emb", None)
    found = [c for n, c in vars(module).items() if inspect.isclass(c) and n.endswith("RotaryEmbedding")
             and "Vision" not in n and c.__module__ == module.__name__]
    if apply is None or len(found) != 1:
        return None
    import torch

    cls = found[0]
    config = text_config(config_cls(rope_scaling=dict(RELEASED)))
    section = list(config.rope_scaling["mrope_section"])
    head_dim, hd_text = head_dim_of(config)
    theta, theta_text = rope_theta_of(config)

    def build():
        rope = cls(config=config)

        def fn(x, temporal, height, width):
            q = x.transpose(0, 1).unsqueeze(0)  # (1, heads, n, d)
            with torch.no_grad():
                cos, sin = rope(q, torch.stack([temporal, height, width])[:, None, :])
                y, _ = apply(q, q, cos, sin, section)
            return y[0].transpose(0, 1)

        return fn

    conv = {"rope_theta": theta, "head_dim": head_dim, "rope_scaling": {"type": "mrope", "mrope_section": section}}
    stated = f"{theta_text}; {hd_text}; rope_scaling=type=mrope,mrope_section={section} (the released configs')"
    return [Subject(arch, "mrope", "default", "mrope", build, conv, stated,
                    f"{cls.__name__} + apply_multimodal_rotary_pos_emb", **LAWS)]
