"""Attention biases as each architecture builds them: ALiBi (BLOOM's build_alibi_tensor, MPT's
build_mpt_alibi_tensor, Falcon's alibi option) and T5's bucketed relative bias (compute_bias of every
attention class that has one), read at the positions pecheck gives."""
import inspect

from .rope import no_negative
from .subject import Subject

# Positions stay below this: the modules build an (n x max_position) matrix per call.
MAX_POSITION = 2 ** 14 - 1

ALIBI_QUIRK = ("the model adds m·j (the key's position only) and masks causally elsewhere; a per-row constant "
               "is invisible to softmax, so each row is read relative to its diagonal, m·(j − i), and -inf "
               "where the key follows the query (the model's causal mask)")


def _alibi_fn(key_bias):
    """fn(positions, heads) -> (heads, n, n) from key_bias(L, heads) -> (heads, L), the model's
    bias for keys 0..L-1 of a sequence of L tokens."""
    import torch

    def fn(positions, heads):
        no_negative(positions)
        with torch.no_grad():
            b = key_bias(int(positions.max()) + 1, int(heads))[:, positions]  # (heads, n): m·p_j (+ const)
            bias = b[:, None, :] - b[:, :, None]  # row i relative to its diagonal: m·(p_j - p_i)
            later = positions[None, :] > positions[:, None]
            return bias.masked_fill(later[None], float("-inf"))

    return fn


def alibi_subjects(arch, module, config_cls):
    import torch

    if arch in ("bloom", "falcon"):  # Falcon's is BLOOM's, but for its bf16 (findings.py)
        config = config_cls(alibi=True) if arch == "falcon" else config_cls()
        heads = config.num_attention_heads if arch == "falcon" else config.n_head

        def key_bias(length, h):
            mask = torch.ones(1, length)
            return module.build_alibi_tensor(mask, h, torch.float32).view(h, length)

        name, stated, variant = ("build_alibi_tensor", f"alibi=True; num_attention_heads={heads}", "alibi") \
            if arch == "falcon" else ("build_alibi_tensor", f"n_head={heads}", "default")
    elif arch == "mpt":
        config = config_cls()
        heads = config.n_heads
        bias_max = config.attn_config.alibi_bias_max

        def key_bias(length, h):
            return module.build_mpt_alibi_tensor(h, length, alibi_bias_max=bias_max).view(h, length)

        name, stated, variant = ("build_mpt_alibi_tensor", f"n_heads={heads}; attn_config.alibi_bias_max={bias_max}",
                                 "default")
    else:
        return None
    return [Subject(arch, "alibi", variant, "alibi", lambda: _alibi_fn(key_bias), {"heads": heads, "causal": True},
                    stated, name, ALIBI_QUIRK, max_position=MAX_POSITION, asserted=("*",))]


def _t5_attention_class(module):
    found = [c for n, c in vars(module).items() if inspect.isclass(c) and c.__module__ == module.__name__
             and hasattr(c, "compute_bias") and hasattr(c, "_relative_position_bucket")
             and "Local" not in n and "Global" not in n]
    return found[0] if found else None


def _t5_config(config_cls):
    config = config_cls()
    if not hasattr(config, "relative_attention_num_buckets") and hasattr(config, "text_config"):
        config = config.text_config
    return config


def t5_subjects(arch, module, config_cls):
    cls = _t5_attention_class(module)
    if cls is None:
        return None
    import torch

    subjects = []
    # A stack the architecture has: T5's configs describe the encoder (the decoder is a copy with
    # is_decoder=True); Pix2Struct's text config is a decoder only.
    stacks = (("decoder", True),) if _t5_config(config_cls).is_decoder else (("encoder", False), ("decoder", True))
    for variant, decoder in stacks:
        config = _t5_config(config_cls)
        config.is_decoder = decoder
        heads = config.num_heads
        attention = cls(config, has_relative_attention_bias=True)
        params = inspect.signature(attention.compute_bias).parameters

        def build(attention=attention, params=params):
            def fn(table, positions):
                no_negative(positions)
                with torch.no_grad():
                    attention.relative_attention_bias.weight.copy_(table)
                    length = int(positions.max()) + 1
                    if "cache_position" in params:  # 4.49: query positions as the cache's, keys 0..length-1
                        bias = attention.compute_bias(len(positions), length, cache_position=positions)
                        return bias[0][:, :, positions]
                    if "past_seen_tokens" in params:  # 5.x: one query at a time, at past_seen_tokens = p
                        # (a whole length x length bias at 2^14 positions is 8 GiB: what made a row take 200 s)
                        rows = [attention.compute_bias(1, length, past_seen_tokens=int(p))[0, :, 0, positions]
                                for p in positions]
                        return torch.stack(rows, dim=1)
                    bias = attention.compute_bias(length, length)  # (1, heads, L, L)
                    return bias[0][:, positions][:, :, positions]

            return fn

        conv = {"heads": heads, "num_buckets": config.relative_attention_num_buckets,
                "max_distance": config.relative_attention_max_distance, "bidirectional": not decoder}
        stated = (f"num_heads={heads}; relative_attention_num_buckets={conv['num_buckets']}; "
                  f"relative_attention_max_distance={conv['max_distance']}; is_decoder={decoder}")
        subjects.append(Subject(arch, "t5", variant, "t5", build, conv, stated,
                                f"{cls.__name__}.compute_bias", max_position=MAX_POSITION, asserted=("*",)))
    return subjects


