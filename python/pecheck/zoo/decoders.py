"""GPT-2's family: the learned table (wpe) is indexed inline by the model's forward. The model is built
from its config with no layers (nothing between the embeddings and the output), its final norm
bypassed, pecheck's table as its position table, and called with inputs_embeds and position_ids for
one token at a time, as generate() calls it (cache_position where the model takes it, else position_ids):
its output is x + table[p] exactly when the model reads
row p for position p."""
import inspect
import math

from .discover import text_config
from .rope import no_negative
from .subject import Subject

TABLES = ("wpe", "positions_embed", "position_embeddings")  # GPT-2's, GPT-1's, XLM's
LAYERS = ("n_layer", "n_layers", "num_layers", "num_hidden_layers")
WIDTH = ("n_embd", "emb_dim", "hidden_size")
ROWS = ("n_positions", "max_position_embeddings")
HEADS = ("n_head", "n_heads", "num_attention_heads", "num_heads")
NORMS = ("ln_f", "final_layernorm", "norm", "layer_norm_emb")


def _model_class(module):
    found = [c for n, c in vars(module).items() if inspect.isclass(c) and n.endswith("Model")
             and c.__module__ == module.__name__ and "inputs_embeds" in inspect.signature(c.forward).parameters
             and any(f"self.{t} = nn.Embedding" in inspect.getsource(c.__init__) for t in TABLES)]
    return found[0] if len(found) == 1 else None


def _first(config, keys):
    return next((k for k in keys if hasattr(config, k)), None)


def subjects(arch, module, config_cls):
    cls = _model_class(module)
    if cls is None:
        return None
    import torch

    config = text_config(config_cls())
    config_cls = type(config)
    keys = {k: _first(config, ks) for k, ks in (("layers", LAYERS), ("width", WIDTH), ("rows", ROWS),
                                                   ("heads", HEADS))}
    if None in keys.values():
        return None
    cache = {}

    def model_for(rows, d):
        if (rows, d) not in cache:
            changes = {keys["layers"]: 0, keys["width"]: d, keys["rows"]: rows, keys["heads"]: 1, "vocab_size": 8}
            if hasattr(config, "attention_types"):  # GPT-Neo: one attention type per layer, none here
                changes["attention_types"] = []
            model = cls(config_cls(**changes)).eval()
            with torch.no_grad():  # every table but the positions' reads zeros (GPTSAN's path adds them)
                for name, sub in model.named_modules():
                    if isinstance(sub, torch.nn.Embedding) and name not in TABLES:
                        sub.weight.zero_()
            for norm in NORMS:
                if hasattr(model, norm):
                    setattr(model, norm, torch.nn.Identity())
            cache.clear()
            cache[(rows, d)] = model
        return cache[(rows, d)]

    params = inspect.signature(cls.forward).parameters
    extra = {"use_cache": False} if "use_cache" in params else {}
    # The position as generate() hands it over: cache_position where the model takes one (it derives
    # position_ids from it), else position_ids.
    where = next((w for w in ("cache_position", "position_ids") if w in params), None)

    def build():
        def fn(x, table, positions):
            no_negative(positions)
            rows, d = table.shape
            model = model_for(rows, d)
            wpe = next(getattr(model, t) for t in TABLES if hasattr(model, t))
            with torch.no_grad():
                wpe.weight.fill_(math.nan)
                wpe.weight[:rows] = table
                out = []
                for t, p in enumerate(positions.tolist()):
                    try:
                        if where is None:  # no position argument (GPTSAN, which takes no inputs_embeds either):
                            # p + 1 tokens through its zeroed token table, x_t added to the last row
                            y = model(input_ids=torch.zeros(1, p + 1, dtype=torch.long), **extra)
                            out.append(x[t] + y[0].reshape(-1, d)[-1])
                            continue
                        else:
                            at = torch.tensor([p]) if where == "cache_position" else torch.tensor([[p]])
                            y = model(inputs_embeds=x[t].reshape(1, 1, d), **{where: at}, **extra)
                    except RuntimeError as err:  # a module that refuses a row past its table
                        raise IndexError(f"the model refused: {str(err).splitlines()[0]}") from None
                    out.append(y[0].reshape(-1, d)[-1])
                return torch.stack(out)

        return fn

    stated = f"{keys['rows']}={getattr(config, keys['rows'])} (the table's rows)"
    return [Subject(arch, "learned", "default", "learned", build, {}, stated,
                    f"{cls.__name__} with no layers, "
                    + (f"forward(inputs_embeds, {where}=p)" if where else "forward(input_ids of p + 1 tokens), its last "
                                                                          "row (token table zeroed) + x")
                    + "; final norm bypassed",
                    asserted=("*",))]
