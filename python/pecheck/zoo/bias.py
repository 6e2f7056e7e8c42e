"""Attention biases as each architecture builds them: ALiBi (BLOOM's build_alibi_tensor, MPT's
build_mpt_alibi_tensor, Falcon's alibi option), T5's bucketed relative bias (compute_bias of every
attention class that has one) and Swin's and BEiT's 2-D relative position bias tables, read at the
positions pecheck gives."""
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




def _window_places(rows, cols, window_cols, first):
    """Each patch's raster index in a window whose first row and column are the patches' least (the
    bias depends on offsets alone, so any placement of the patches in the window reads the same)."""
    r, c = rows[first:], cols[first:]
    return (r - r.min()) * window_cols + (c - c.min())


def _gathered(whole, window_cols, class_token):
    """fn(table, rows, cols, heads) -> (heads, n, n) from whole(table) -> (heads, T, T), the model's bias
    over its whole window in raster order (T = Wh Ww, after its class token when it has one)."""
    import torch

    def fn(table, rows, cols, heads):
        with torch.no_grad():
            bias = whole(table)
        at = _window_places(rows, cols, window_cols, 1 if class_token else 0)
        if class_token:
            at = torch.cat([torch.zeros(1, dtype=torch.long), 1 + at])
        return bias[:, at][:, :, at]

    return fn


def _set_table(module, table):
    module.relative_position_bias_table.copy_(table)


def relative_bias_2d_subjects(arch, module, config_cls):
    """Swin's and BEiT's 2-D relative position bias tables: a *RelativePositionBias module (Swin's of
    (num_heads, window), BEiT's and Data2Vec-Vision's of the config, with a class token), or a Swin-style
    self-attention holding the table and its relative_position_index buffer (Donut, MaskFormer, CLAP's
    audio tower), whose forward's one-line gather is restated around its own buffer."""
    own = {n: c for n, c in vars(module).items() if inspect.isclass(c) and c.__module__ == module.__name__}
    bias_cls = next((c for n, c in own.items() if n.endswith("RelativePositionBias")), None)
    attn_cls = next((c for n, c in own.items() if n.endswith("SelfAttention")
                     and "create_relative_position_index" in vars(c)), None)
    if bias_cls is None and attn_cls is None:
        return None
    config = config_cls()
    heads_of = getattr(config, "num_heads", None) or getattr(config, "num_attention_heads")
    heads = heads_of[0] if isinstance(heads_of, (list, tuple)) else heads_of
    heads_key = "num_heads" if getattr(config, "num_heads", None) else "num_attention_heads"
    if bias_cls is not None and "config" not in inspect.signature(bias_cls.__init__).parameters:
        window = (config.window_size, config.window_size)  # Swin's: (num_heads, window_size)

        def build():
            bias = bias_cls(heads, window)

            def whole(table):
                _set_table(bias, table)
                return bias()[0]

            return _gathered(whole, window[1], False)

        name, class_token = f"{bias_cls.__name__}()", False
        stated = f"window_size={config.window_size}; {heads_key}[0]={heads}"
    elif bias_cls is not None:  # BEiT's and Data2Vec-Vision's, of the config, with the class token
        # The config's square image, and a non-square one (MiDaS v3.1's arbitrary window sizes, which
        # BEiT's generate_relative_position_index was modified to support): one row each.
        subjects = []
        for variant, image in (("default", config.image_size), ("non-square", [config.image_size,
                                                                                config.image_size * 5 // 7])):
            sized = config_cls(image_size=image)
            h, w = (image, image) if isinstance(image, int) else image
            window = (h // sized.patch_size, w // sized.patch_size)
            kw = {"window_size": window} if "window_size" in inspect.signature(bias_cls.__init__).parameters else {}

            def build(sized=sized, window=window, kw=kw):
                bias = bias_cls(sized, **kw)

                def whole(table):
                    _set_table(bias, table)
                    return bias(window)[0]

                return _gathered(whole, window[1], True)

            stated = (f"image_size/patch_size={image}/{sized.patch_size}; {heads_key}={heads}; the module built "
                      f"directly (use_relative_position_bias={sized.use_relative_position_bias} by default)")
            conv = {"heads": heads, "window_size": list(window), "class_token": True}
            subjects.append(Subject(arch, "relative_bias_2d", variant, "relative_bias_2d", build, conv, stated,
                                    f"{bias_cls.__name__}(window_size)", asserted=("*",)))
        return subjects
    else:  # a Swin-style self-attention: the table and relative_position_index are its own
        window = (config.window_size, config.window_size)

        def build():
            attention = attn_cls(config, heads * 8, heads, config.window_size)
            area = window[0] * window[1]

            def whole(table):
                _set_table(attention, table)
                gathered = attention.relative_position_bias_table[attention.relative_position_index.view(-1)]
                return gathered.view(area, area, -1).permute(2, 0, 1)

            return _gathered(whole, window[1], False)

        name, class_token = f"{attn_cls.__name__}.relative_position_index (its forward's gather restated)", False
        stated = f"window_size={config.window_size}; {heads_key}[0]={heads}"
    conv = {"heads": heads, "window_size": list(window), "class_token": class_token}
    return [Subject(arch, "relative_bias_2d", "default", "relative_bias_2d", build, conv, stated, name,
                    asserted=("*",))]
