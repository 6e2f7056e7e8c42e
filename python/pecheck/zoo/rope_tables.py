"""RoPE from a table of cos and sin for positions 0..L-1 that the model gathers at position_ids, or
builds for a whole sequence: Phi-MoE, IDEFICS and OpenLLaMA (forward(x, seq_len)), GPT-J and CodeGen
(a fixed sin/cos table, rotate_every_two), ESM and CLVP (the sequence's own positions). Positions are
checked below a table of 2^16 rows, the cost of one call; a negative position is declined."""
import inspect

from .discover import text_config
from .rope import LAWS, QUIRKS, convention_of, head_dim_of, no_negative
from .subject import Subject

MAX_POSITION = 2 ** 16 - 1


def table_style(arch, module, config_cls):
    """Modules that build a table of seq_len rows (forward(x, seq_len)) that apply indexes by
    position_ids: checked below a table of 2^16 rows, the cost of one call."""
    config = config_cls()
    apply = getattr(module, "apply_rotary_pos_emb", None)
    if arch == "phimoe":
        rope = module.PhimoeRotaryEmbedding(config=config)
        name = "PhimoeRotaryEmbedding(config) + apply_rotary_pos_emb(position_ids)"
    elif arch == "idefics":
        head_dim, _ = head_dim_of(config)
        rope = module.IdeficsEmbedding(head_dim)
        name = "IdeficsEmbedding(head_dim) + apply_rotary_pos_emb(position_ids)"
    elif arch == "open-llama":  # as OpenLlamaAttention._init_rope builds it without rope_scaling
        head_dim, _ = head_dim_of(config)
        rope = module.OpenLlamaRotaryEmbedding(head_dim, max_position_embeddings=config.max_position_embeddings,
                                               base=config.rope_theta)
        name = "OpenLlamaRotaryEmbedding(head_dim, base=rope_theta) + apply_rotary_pos_emb(position_ids)"
    else:
        return None
    if "seq_len" not in inspect.signature(rope.forward).parameters:
        return None  # transformers 5 builds these from the config: rope.config_style calls them
    import torch

    def cos_sin(q, position_ids):
        return rope(q, seq_len=int(position_ids.max()) + 1)

    def build():
        def fn(x, positions):
            no_negative(positions)
            q = x.transpose(0, 1).unsqueeze(0)
            with torch.no_grad():
                cos, sin = cos_sin(q, positions)
                y, _ = apply(q, q, cos, sin, positions.unsqueeze(0))
            return y[0].transpose(0, 1)

        return fn

    conv, stated, quirk = convention_of(config, arch)  # 4.49: its module's name
    return [Subject(arch, "rope", "default", "rope", build, conv, stated, name, quirk, max_position=MAX_POSITION,
                    **LAWS)]


def interleaved_sinusoid_style(arch, module, config_cls):
    """GPT-J and CodeGen: a fixed table from create_sinusoidal_positions(max_positions, rotary_dim),
    gathered at position_ids, rotate_every_two on the first rotary_dim dims (the attention layer's split)."""
    if arch not in ("gptj", "codegen"):
        return None
    import torch

    config = config_cls()
    head_dim = config.n_embd // config.n_head
    rotary_dim = config.rotary_dim or head_dim
    module_cls = getattr(module, "GPTJRotaryEmbedding" if arch == "gptj" else "CodeGenRotaryEmbedding", None)
    if module_cls is not None:  # transformers 5: a module over the same table, forward -> (sin, cos)
        rope = module_cls(config)

        def sin_cos(positions):
            return rope(torch.zeros(1), positions.unsqueeze(0))
        name = f"{module_cls.__name__}(config) + apply_rotary_pos_emb (rotate_every_two)"
    else:
        table = module.create_sinusoidal_positions(config.n_positions, rotary_dim)

        def sin_cos(positions):
            sincos = table[positions].unsqueeze(0)
            return torch.split(sincos, sincos.shape[-1] // 2, dim=-1)
        name = "create_sinusoidal_positions + apply_rotary_pos_emb (rotate_every_two)"

    def build():
        def fn(x, positions):
            no_negative(positions)
            k = x.unsqueeze(0)  # GPT-J applies it in (batch, seq, heads, d)
            with torch.no_grad():
                sin, cos = sin_cos(positions)
                rot = module.apply_rotary_pos_emb(k[..., :rotary_dim], sin.to(k.dtype), cos.to(k.dtype))
                y = torch.cat((rot, k[..., rotary_dim:]), dim=-1)
            return y[0]

        return fn

    conv = {"rope_theta": 10000.0, "head_dim": head_dim, "rotary_dim": rotary_dim, "layout": "interleaved"}
    stated = f"rotary_dim={config.rotary_dim}; n_embd/n_head={config.n_embd}/{config.n_head}; base not in config (10000)"
    return [Subject(arch, "rope", "default", "rope", build, conv, stated, name, QUIRKS[arch][1],
                    max_position=config.n_positions - 1, **LAWS)]


def sequence_style(arch, module, config_cls):
    """ESM (position_embedding_type="rotary", as ESM-2's configs state it) and CLVP: the rotary module
    makes cos and sin for the positions 0..L-1 of the sequence it is given; read at the positions."""
    import torch

    if arch == "esm" and hasattr(module, "RotaryEmbedding"):  # transformers 4 (5: rope.config_style)
        config = config_cls(position_embedding_type="rotary")
        head_dim = config.hidden_size // config.num_attention_heads
        rotary_dim = head_dim

        def cos_sin(length):
            rope = module.RotaryEmbedding(dim=head_dim)
            cos, sin = rope._update_cos_sin_tables(torch.zeros(1, 1, length, head_dim), seq_dimension=-2)
            return cos[0, 0], sin[0, 0]

        def rotate(q, cos, sin):  # ESM's apply slices cos[:, :, :n]: give it the gathered rows
            return module.apply_rotary_pos_emb(q, cos[None, None], sin[None, None])

        stated = (f"position_embedding_type=rotary (ESM-2's configs); hidden_size/num_attention_heads="
                  f"{config.hidden_size}/{config.num_attention_heads}; base not in config (10000)")
        name, variant = "RotaryEmbedding(dim=head_dim) cos/sin tables + apply_rotary_pos_emb", "rotary"
    elif arch in ("clvp", "clvp_encoder") and hasattr(module, "ClvpRotaryPositionalEmbedding"):
        config = text_config(config_cls())
        head_dim = config.hidden_size // config.num_attention_heads
        rotary_dim = max(config.projection_dim // (config.num_attention_heads * 2), 32)

        def cos_sin(length):
            emb = module.ClvpRotaryPositionalEmbedding(config)(torch.zeros(1, length, 1))
            return emb.cos().squeeze(0), emb.sin().squeeze(0)

        def rotate(q, cos, sin):  # CLVP's apply gathers by position_ids and turns q, k and v alike
            n = q.shape[-2]
            y, _, _ = module.apply_rotary_pos_emb(q, q, q, cos, sin, torch.arange(n)[None])
            return y

        stated = (f"projection_dim={config.projection_dim}, num_attention_heads={config.num_attention_heads} "
                  f"(rotary dim max(projection_dim / (2 heads), 32) = {rotary_dim}); hidden_size={config.hidden_size}")
        name, variant = "ClvpRotaryPositionalEmbedding + apply_rotary_pos_emb (split as the attention layer does)", "default"
    else:
        return None

    def build():
        def fn(x, positions):
            no_negative(positions)
            q = x.transpose(0, 1).unsqueeze(0)  # (1, heads, n, d)
            with torch.no_grad():
                cos, sin = cos_sin(int(positions.max()) + 1)
                y = rotate(q[..., :rotary_dim], cos[positions], sin[positions])
                y = torch.cat((y, q[..., rotary_dim:]), dim=-1)
            return y[0].transpose(0, 1)

        return fn

    conv = {"rope_theta": 10000.0, "head_dim": head_dim, "rotary_dim": rotary_dim}
    return [Subject(arch, "rope", variant, "rope", build, conv, stated, name, max_position=MAX_POSITION, **LAWS)]
