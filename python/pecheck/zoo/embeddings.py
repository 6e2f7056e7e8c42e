"""BERT's family: an XEmbeddings(config) module that adds word, token-type and learned position
embeddings, and makes the positions itself (0.. for BERT, pad_token_id + 1.. for RoBERTa's family).
Its word and token-type tables are zeroed and its LayerNorm bypassed, so that its output is the
position row alone; the row is read as a decoder reads it (one token, a cache of p: cache_length in
transformers 5, past_key_values_length in 4)."""
import inspect
import math

from .rope import no_negative
from .discover import text_config
from .subject import NotCallable, Subject
from .tables import past_keyword

# Offsets a config does not state, per architecture, with their source.
BUFFER_PLUS_2 = "its position_ids buffer is arange + 2 (RoBERTa's offset, without its padding rule): position p reads row p + 2"
OFFSETS = {
    "ernie_m": (2, "ErnieM adds 2 to its position ids: position p reads row p + 2"),
    "mra": (2, BUFFER_PLUS_2),
    "yoso": (2, BUFFER_PLUS_2),
    "nystromformer": (2, BUFFER_PLUS_2),
}


# The position table's name: BERT's family's, CLIP's text towers' (CLIP, SigLIP, OWL-ViT, X-CLIP, ...).
TABLES = ("position_embeddings", "position_embedding")

ROBERTA = "positions start at pad_token_id + 1 (fairseq's RoBERTa): position p reads row p + pad_token_id + 1"


def embeddings_class(module):
    found = [c for n, c in vars(module).items() if inspect.isclass(c) and n.endswith("Embeddings")
             and c.__module__ == module.__name__ and "Position" not in n and "Patch" not in n
             and "Vision" not in n]
    for c in found:
        params = inspect.signature(c.forward).parameters
        if "input_ids" in params:
            try:
                src = inspect.getsource(c.__init__)
            except (OSError, TypeError):
                continue
            if "config" in inspect.signature(c.__init__).parameters and any(
                    f"self.{t} = nn.Embedding" in src for t in TABLES):
                return c
    return None


def subjects(arch, module, config_cls):
    cls = embeddings_class(module)
    if cls is None:
        return None
    import torch

    config = text_config(config_cls())
    config_cls = type(config)
    if getattr(config, "position_embedding_type", "absolute") != "absolute":
        return None
    roberta = "create_position_ids_from_input_ids" in inspect.getsource(cls.forward)
    pad = config.pad_token_id if roberta else None
    quirk = ROBERTA if roberta else ""
    if roberta and pad is None:
        return None  # ESM: positions from a padding id its default config does not have
    offset = pad + 1 if roberta else 0
    if arch in OFFSETS:
        offset, quirk = OFFSETS[arch]
    cache = {}

    def module_for(rows, d):
        key = (rows, d)
        if key not in cache:
            changes = dict(hidden_size=d, max_position_embeddings=rows + offset, vocab_size=max(8, (pad or 0) + 4))
            if hasattr(config, "num_attention_heads"):  # transformers 5 validates hidden_size % heads
                changes["num_attention_heads"] = 1
            for width in ("embedding_size", "input_embedding_size"):  # ALBERT, ELECTRA, RemBERT
                if hasattr(config, width):
                    changes[width] = d
            cfg = config_cls(**changes)
            mod = cls(cfg)
            mod.eval()
            with torch.no_grad():  # every other table (word, token type, TAPAS's seven, LayoutLM's boxes)
                for name, sub in mod.named_modules():
                    if isinstance(sub, torch.nn.Embedding) and name not in TABLES:
                        sub.weight.zero_()
            for norm in ("LayerNorm", "layer_norm", "norm"):
                if hasattr(mod, norm):
                    setattr(mod, norm, torch.nn.Identity())
            cache.clear()
            cache[key] = mod
        return cache[key]

    params = inspect.signature(cls.forward).parameters
    past_kw = past_keyword(cls.forward)  # transformers 5's cache_length, 4's past_key_values_length
    takes_past = past_kw is not None
    takes_bbox = "bbox" in params
    types = len(getattr(config, "type_vocab_sizes", []) or [])
    takes_types = types > 0

    def call(mod, length, past):
        """The module's rows for tokens past..past+length-1; a module that refuses a position past its
        table (BERT slices its position_ids buffer and fails on the shapes) is a refusal."""
        ids = torch.full((1, length), (pad or 0) + 2)
        kw = {past_kw: past} if takes_past else {}
        if takes_bbox:  # LayoutLM: a box per token, its tables zeroed above
            kw["bbox"] = torch.zeros(1, length, 4, dtype=torch.long)
        if takes_types:  # TAPAS: seven token types per token
            kw["token_type_ids"] = torch.zeros(1, length, types, dtype=torch.long)
        elif "token_type_ids" in params:  # as the models pass them (LUKE's and LXMERT's embeddings
            kw["token_type_ids"] = torch.zeros(1, length, dtype=torch.long)  # fail without: no position_ids buffer)
        try:
            e = mod(input_ids=ids, **kw)
        except (RuntimeError, IndexError, ValueError) as err:  # CLIP's: "Sequence length must be less than ..."
            raise IndexError(f"the module refused: {str(err).splitlines()[0]}") from None
        if isinstance(e, tuple):  # LiLT returns (embeddings, position_ids)
            e = e[0]
        return e.reshape(length, -1)

    def build():
        def fn(x, table, positions):
            no_negative(positions)
            rows, d = table.shape
            mod = module_for(rows, d)
            with torch.no_grad():
                weight = next(getattr(mod, t) for t in TABLES if hasattr(mod, t)).weight
                weight.fill_(math.nan)
                weight[offset:offset + rows] = table
                if takes_past:  # as a decoder reads it: one token at a cache of p
                    out = torch.stack([call(mod, 1, p)[0] for p in positions.tolist()])
                else:  # one sequence of max(p) + 1 tokens, its rows read at the positions
                    out = call(mod, int(positions.max()) + 1, 0)[positions]
                return x + out

        return fn

    # A module whose forward needs more than input_ids (boxes, images), or whose output is not the
    # position row once the other tables are zeroed, is not one the zoo calls: the sweep says why.
    try:
        probe = build()(torch.zeros(2, 8), torch.ones(8, 8), torch.tensor([0, 3]))
    except Exception as e:  # noqa: BLE001
        raise NotCallable(f"{cls.__name__}.forward(input_ids) fails: {type(e).__name__}: "
                          f"{str(e).splitlines()[0][:80]}") from None
    if not torch.allclose(probe, torch.ones(2, 8)):
        raise NotCallable(f"{cls.__name__}'s output is not its position row with the other tables zeroed "
                          "(it transforms the sum)")

    stated = f"max_position_embeddings={config.max_position_embeddings}; position_embedding_type=absolute"
    if roberta:
        stated += f"; pad_token_id={pad}"
    return [Subject(arch, "learned", "default", "learned", build, {}, stated,
                    f"{cls.__name__}.forward(input_ids" + (f", {past_kw}=p)" if takes_past else
                                                            ") over max(p)+1 tokens, read at p")
                    + "; word/type rows zeroed, LayerNorm bypassed", quirk, asserted=("*",))]
