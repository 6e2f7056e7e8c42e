"""The conformers' RoPE (wav2vec2-conformer and wav2vec2-bert with position_embeddings_type="rotary"; the
class default is "relative"). Their rotary module returns cos and sin for the steps 0..n-1 of the
sequence it is given, and the self-attention turns the heads by them inline, in its own
_apply_rotary_embedding. The zoo runs the module on a sequence of max(p) + 1 steps, takes its rows at
the case's positions (each row is the module's own value for that step) and hands them to the
attention's _apply_rotary_embedding: both are the model's code, nothing of the rotation is the zoo's."""
import inspect

from .rope import LAWS
from .subject import Subject

# The module builds every step's row on each call: positions are drawn below 4096 (a table of 8192
# steps at most), where a conformer's audio frames live.
MAX_POSITION = 8191



def _defined(module, suffix, has=None):
    found = [c for n, c in vars(module).items() if inspect.isclass(c) and c.__module__ == module.__name__
             and n.endswith(suffix) and (has is None or has in vars(c))]
    return found[0] if len(found) == 1 else None


def subjects(arch, module, config_cls):
    rotary = _defined(module, "RotaryPositionalEmbedding")
    attention = _defined(module, "SelfAttention", has="_apply_rotary_embedding")
    if rotary is None or attention is None or "position_embeddings_type" not in inspect.signature(config_cls).parameters:
        return None
    config = config_cls(position_embeddings_type="rotary")
    heads = config.num_attention_heads
    head_dim = config.hidden_size // heads
    base = float(config.rotary_embedding_base)

    def build():
        import torch

        import pecheck

        rope, attend = rotary(config), attention(config)

        def fn(x, positions):
            n, h, d = x.shape
            if int(positions.min()) < 0:
                raise pecheck.Unsupported("a negative step")
            with torch.no_grad():
                table = rope(torch.zeros(1, int(positions.max()) + 1, 1, dtype=x.dtype))  # (2, steps, 1, 1, d)
                # pecheck's heads as the batch, each in the model's first head (the others zero).
                hidden = torch.zeros(h, n, heads, d, dtype=x.dtype)
                hidden[:, :, 0] = x.transpose(0, 1)
                y = attend._apply_rotary_embedding(hidden.reshape(h, n, heads * d), table[:, positions])
            return y.reshape(h, n, heads, d)[:, :, 0].transpose(0, 1)

        return fn

    conv = {"rope_theta": base, "head_dim": head_dim}
    stated = (f"rotary_embedding_base={base:g}; hidden_size/num_attention_heads={config.hidden_size}/{heads}; "
              "position_embeddings_type=rotary (the class default is 'relative')")
    name = (f"{rotary.__name__} (a sequence of max(p) + 1 steps, rows taken at the positions) + "
            f"{attention.__name__}._apply_rotary_embedding")
    return [Subject(arch, "rope", "rotary", "rope", build, conv, stated, name, max_position=MAX_POSITION, **LAWS)]
