"""Absolute positions as each architecture builds them: sinusoid tables (fairseq's and tensor2tensor's,
as classes or functions) and learned tables (BART's family with its offset, BERT's embeddings with
RoBERTa's), read one position at a time through the module's own forward, the way a decoder reads them
(one token, its position as the cache's length: cache_length in transformers 5, past_key_values_length
in 4)."""
import inspect
import math

from .others import config_classes
from .rope import no_negative
from .subject import Subject

# Sinusoid tables are built with this many rows (positions drawn below half of it); a table that
# transformers 5 builds in Python loops (create_weight(): Marian's, Pegasus's, 4M float64 powers at
# 4096 x 1024) with half as many, so that its row stays within seconds.
MAX_POSITION = 4095
MAX_POSITION_LOOPED = 2047

# The verdict's properties for a sinusoid table: agreement (under the strongest contract met) and
# its bounds; the laws relating rows to each other are derived from the exact contract only (not
# judged under a weaker one): shown where judged, not asserted.
SINUSOID_LAWS = dict(
    contracts=("exact", "dtype-trig", "fp32-angles"),
    asserted=("sinusoidal.agrees_with_reference", "sinusoidal.bounds"),
    reported=("sinusoidal.shift_linearity", "sinusoidal.offset_inner_product", "sinusoidal.injectivity"),
)

FAIRSEQ = ("fairseq's get_embedding: frequencies 10000^(-i/(d/2-1)), sin half then cos half, a zero row at "
           "pad_token_id, sequence positions from pad_token_id + 1")
T2T = "tensor2tensor's: frequencies 10000^(-2i/d), sin half then cos half, no padding row"
INTERLEAVED = "Vaswani's: frequencies 10000^(-2i/d), sin at even dims, cos at odd ones"
# Sinusoid classes by model_type: (class suffix, convention beyond d_model, quirk).
SINUSOID_CLASSES = {
    **{a: ({"layout": "concatenated", "frequencies": "fairseq"}, FAIRSEQ, True) for a in (
        "m2m_100", "nllb-moe", "xglm", "speech_to_text", "speech_to_text_2", "speecht5", "kosmos-2", "seamless_m4t",
        "seamless_m4t_v2", "fsmt")},
    **{a: ({"layout": "concatenated", "frequencies": "vaswani"}, T2T, False) for a in (
        "marian", "pegasus", "autoformer", "informer", "time_series_transformer", "roformer")},
    "pegasus_x": ({"layout": "concatenated", "frequencies": "fairseq"},
                  "frequencies 10000^(-i/(d/2-1)), sin half then cos half, no padding row", False),
}
# Learned tables whose rows start at 2 (fairseq's BART kept two rows for its padding scheme).
OFFSET_2 = "rows 0 and 1 unused: position p reads row p + 2 (fairseq's BART convention)"


def d_model_of(config):
    for key in ("d_model", "hidden_size", "embed_dim", "n_embd"):
        if isinstance(getattr(config, key, None), int):
            return getattr(config, key), key
    text = getattr(config, "text_config", None)
    if text is not None:
        return d_model_of(text)
    raise ValueError("no d_model/hidden_size/embed_dim in the config")


def past_keyword(forward):
    """How forward names the tokens already cached: transformers 5's cache_length, 4's
    past_key_values_length (None: it takes neither)."""
    params = inspect.signature(forward).parameters
    return next((k for k in ("cache_length", "past_key_values_length") if k in params), None)


def one_position(mod, d, first, token):
    """Row of sequence position s, through forward as a decoder calls it: one token, past = s."""
    import torch

    past = past_keyword(mod.forward) or "past_key_values_length"

    def row(s):
        if first == "input_ids_shape":
            out = mod(torch.Size([1, 1]), **{past: s})
        elif first == "input_ids":
            out = mod(torch.tensor([[token]]), **{past: s})
        elif first == "attention_mask":
            out = mod(torch.ones(1, s + 1, dtype=torch.long), **{past: s})
        elif first in ("inputs_embeds", "input_embeds"):
            out = mod(torch.zeros(1, 1, d), **{past: s})
        elif first == "position_ids":
            out = mod(position_ids=torch.tensor([[s]]), **{past: 0})
        else:
            raise TypeError(f"forward({first}, ...) is not a form the zoo calls")
        return out.reshape(-1, out.shape[-1])[-1]

    return row


def table_of(mod):
    """The module's table, for the rows its forward never reads (fairseq keeps PE(0) at row 0)."""
    for name in ("weights", "weight"):
        if isinstance(getattr(mod, name, None), __import__("torch").Tensor):
            return getattr(mod, name)
    raise TypeError(f"{type(mod).__name__} has no weights/weight table")


def fill_as_init_weights(mod):
    """transformers 5 builds a sinusoid table empty and fills it in the model's _init_weights (Marian's,
    Pegasus's, Autoformer's create_weight(); FSMT's get_embedding): the zoo fills it the same way."""
    import torch

    with torch.no_grad():
        if hasattr(mod, "create_weight"):
            mod.weight.copy_(mod.create_weight())
        elif isinstance(mod, torch.nn.Embedding) and hasattr(mod, "get_embedding"):
            mod.weight.copy_(mod.get_embedding(*mod.weight.shape, mod.padding_idx))


def sinusoid_subjects(arch, module, config_cls):
    if arch not in SINUSOID_CLASSES:
        return None
    import torch

    cls = [c for n, c in vars(module).items() if inspect.isclass(c) and n.endswith("SinusoidalPositionalEmbedding")
           and c.__module__ == module.__name__][0]
    config = config_cls()
    d, d_key = d_model_of(config)
    extra, quirk, padded = SINUSOID_CLASSES[arch]
    params = list(inspect.signature(cls.forward).parameters)[1:]
    first = params[0]
    pad = getattr(config, "pad_token_id", None) if padded else None
    pad = 1 if pad is None and padded else pad
    start = pad + 1 if padded else 0  # the table row of sequence position 0

    top = MAX_POSITION_LOOPED if hasattr(cls, "create_weight") else MAX_POSITION

    def build():
        kwargs = {"padding_idx": pad} if "padding_idx" in inspect.signature(cls.__init__).parameters else {}
        mod = cls(top + 1, d, **kwargs) if "num_positions" in inspect.signature(cls.__init__).parameters \
            else cls(d)
        mod.eval()
        fill_as_init_weights(mod)
        row = None if first == "input" else one_position(mod, d, first, start + 1)

        def fn(positions, d_model):
            no_negative(positions)
            out = []
            with torch.no_grad():
                if row is None:  # FSMT: forward(input) over a whole sequence, no past; read at the positions
                    seq = mod(torch.full((1, max(int(positions.max()) - start + 1, 1)), start + 1)).reshape(-1, d)
                for p in positions.tolist():
                    if p < start:
                        if padded and p == pad and first in ("input_ids", "input"):
                            out.append(mod(torch.tensor([[pad]])).reshape(-1, d)[-1])  # the padding token's row
                        else:  # a row forward never reads (fairseq's row 0): the module's own table
                            out.append(table_of(mod)[p])
                        continue
                    out.append(seq[p - start] if row is None else row(p - start))
            return torch.stack(out)

        return fn

    conv = {"d_model": d, **extra}
    stated = f"{d_key}={d}"
    if padded:
        conv["padding_idx"] = pad
        stated += f"; pad_token_id={pad}"
    how = ("table filled as _init_weights does (create_weight()); " if hasattr(cls, "create_weight") else
           "table filled as _init_weights does (get_embedding()); " if "get_embedding" in vars(cls)
           and issubclass(cls, __import__("torch").nn.Embedding) else "")
    how += (f"{cls.__name__}.forward({first}) over a sequence, read at p - {start}" if first == "input" else
           f"{cls.__name__}.forward({first}, {past_keyword(cls.forward)}=p - {start})") + (
        f"; rows below {start} from its table" if start else "")
    return [Subject(arch, "sinusoidal", "default", "sinusoidal", build, conv, stated, how, quirk,
                    max_position=top, **SINUSOID_LAWS)]


def sinusoid_function_subjects(arch, module, config_cls):
    """Tables built by a module-level function of (rows, dim), read at the positions."""
    import torch

    config = config_cls()
    if arch == "whisper" and hasattr(module, "sinusoids"):
        d, key = config.d_model, "d_model"

        def table(n):
            return module.sinusoids(n, d)

        conv, quirk, name = ({"layout": "concatenated", "frequencies": "fairseq"},
                             "Whisper's encoder: frequencies 10000^(-i/(d/2-1)), sin half then cos half",
                             "sinusoids(length, channels) (the encoder's positions)")
    elif arch == "ctrl" and hasattr(module, "positional_encoding"):
        d, key = config.n_embd, "n_embd"

        def table(n):
            return module.positional_encoding(n, d, torch.float32)

        conv, quirk, name = {"layout": "concatenated"}, T2T, "positional_encoding(position, d_model_size, dtype)"
    elif hasattr(module, "SinusoidsPositionEmbedding") and isinstance(getattr(config, "d_model", None), int) and \
            any("SinusoidsPositionEmbedding(" in inspect.getsource(c) for c in config_classes(module, config)):
        # Qwen2.5-Omni's, Qwen3-Omni's and Qwen3-ASR's audio encoders: Whisper's table as a module
        d, key = config.d_model, "d_model"

        def table(n):
            return module.SinusoidsPositionEmbedding(n, d).positional_embedding

        conv, quirk, name = ({"layout": "concatenated", "frequencies": "fairseq"},
                             "Whisper's: frequencies 10000^(-i/(d/2-1)), sin half then cos half",
                             "SinusoidsPositionEmbedding(length, channels).positional_embedding")
    elif arch == "videomae" and hasattr(module, "get_sinusoid_encoding_table"):
        d, key = config.hidden_size, "hidden_size"

        def table(n):
            return module.get_sinusoid_encoding_table(n, d)[0]

        conv, quirk, name = {"layout": "interleaved"}, INTERLEAVED, "get_sinusoid_encoding_table(n_position, d_hid)"
    else:
        return None

    def build():
        rows = table(MAX_POSITION + 1)  # once: VideoMAE's builds its table in Python loops

        def fn(positions, d_model):
            no_negative(positions)
            return torch.as_tensor(rows)[positions]

        return fn

    return [Subject(arch, "sinusoidal", "default", "sinusoidal", build, {"d_model": d, **conv}, f"{key}={d}", name,
                    quirk, max_position=MAX_POSITION, **SINUSOID_LAWS)]


def learned_class_subjects(arch, module, config_cls):
    """BART's family: XLearnedPositionalEmbedding(num_embeddings, embedding_dim), an nn.Embedding whose
    forward makes the positions (and adds its offset)."""
    found = [c for n, c in vars(module).items() if inspect.isclass(c) and n.endswith("LearnedPositionalEmbedding")
             and c.__module__ == module.__name__]
    if not found:
        return None
    import torch

    cls = found[0]
    first = list(inspect.signature(cls.forward).parameters)[1]
    offset = 2 if "self.offset = 2" in inspect.getsource(cls) else 0

    def build():
        def fn(x, table, positions):
            no_negative(positions)
            mod = cls(table.shape[0], table.shape[1])
            with torch.no_grad():
                mod.weight.fill_(math.nan)  # rows the convention says are never read
                mod.weight[offset:offset + table.shape[0]] = table
                row = one_position(mod, table.shape[1], first, 3)
                return x + torch.stack([row(int(p)) for p in positions])

        return fn

    config = config_cls()
    stated = f"max_position_embeddings={getattr(config, 'max_position_embeddings', '?')} (the table's rows)"
    return [Subject(arch, "learned", "default", "learned", build, {}, stated,
                    f"{cls.__name__}.forward({first}, {past_keyword(cls.forward)}=p)", OFFSET_2 if offset else "",
                    asserted=("*",))]
