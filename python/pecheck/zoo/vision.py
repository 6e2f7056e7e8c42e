"""2-D RoPE of the vision towers, checked through pecheck's rope2d. transformers 5 builds them alike: an
axial rotary module (rope_type "axial", compute_axial_rope_parameters: d/4 frequencies
rope_theta^(-4k/d)) whose forward(x, position_ids) takes (n, 2) [row, column] patch coordinates and
returns cos and sin laid out by its recomposition_frequencies, and an apply function of the modeling
module. What the config does not say (the layout of cos and sin, which axis comes first) is the code's
form: written down once per form, with the modeling module that shows it, and a tower is checked under
a form only when its recomposition_frequencies and apply function are that module's, statement for
statement (their syntax trees, comments and docstrings aside)."""
import ast
import functools
import importlib
import inspect
import textwrap
from dataclasses import dataclass

from . import discover
from .subject import NotCallable, Subject

# rope2d.relative is shown, not asserted: the zoo asserts agreement only.
LAWS = dict(contracts=("exact", "dtype-trig", "fp32-angles"), asserted=("rope2d.agrees_with_reference",),
            reported=("rope2d.relative",))


@dataclass(frozen=True)
class Form:
    exemplar: str  # the model_type whose modeling module shows the form
    rotary: str  # its axial rotary class
    apply: str  # its apply function
    convention: dict  # pecheck's rope2d layout and pairing
    columns_first: bool  # cos and sin carry the column's angles before the row's
    # How the tower calls it: "tokens": apply(q, k, cos, sin) on q (n, heads, d); "heads": the same on q
    # (1, heads, n, d) with cos (1, n, d); "batch": the module on position_ids (1, n, 2) and
    # apply(x, cos, sin, position_ids) on x (1, n, heads, d) (Gemma 4's apply_multidimensional_rope).
    call: str
    quirk: str


FORMS = (
    Form("qwen2_vl_vision", "Qwen2VLVisionRotaryEmbedding", "apply_rotary_pos_emb_vision",
         {"layout": "half_split", "pairing": "whole_head"}, False, "tokens",
         "pairing whole_head: recomposition_frequencies lays cos out [rows, columns, rows, columns] and "
         "apply_rotary_pos_emb_vision turns it with one rotate_half over the whole head"),
    Form("step3p5_vision", "Step3p7VisionRotaryEmbedding", "apply_rotary_pos_emb_vision",
         {"layout": "half_split", "pairing": "whole_head"}, True, "tokens",
         "pairing whole_head, columns first: recomposition_frequencies flips (h, w) to [columns, rows, columns, "
         "rows] and apply_rotary_pos_emb_vision turns it with one rotate_half over the whole head (pecheck's rows "
         "are given the module as its columns)"),
    *(Form(arch, rotary, apply, {"layout": "interleaved"}, False, "heads",
           "layout interleaved: recomposition_frequencies repeat_interleaves [rows, columns] and rotate_pairwise "
           "turns pairs (2i, 2i+1)")
      for arch, rotary, apply in (("sam2_video", "Sam2VideoVisionRotaryEmbedding", "apply_rotary_pos_emb_2d"),
                                  ("sam3_vit_model", "Sam3ViTRotaryEmbedding", "apply_rotary_pos_emb_2d"),
                                  ("edgetam_video", "EdgeTamVideoVisionRotaryEmbedding",
                                   "apply_rotary_pos_emb_2d_self_attn"))),
    Form("inkling2_vision", "Inkling2VisionRotaryEmbedding", "apply_rotary_pos_emb_vision",
         {"layout": "interleaved"}, True, "tokens",
         "layout interleaved, columns first: recomposition_frequencies repeat_interleaves [columns, rows] and "
         "rotate_pairwise turns pairs (2i, 2i+1) (pecheck's rows are given the module as its columns)"),
    Form("pixtral", "PixtralVisionRotaryEmbedding", "apply_rotary_pos_emb",
         {"layout": "half_split", "pairing": "whole_head", "frequencies": "split"}, False, "heads",
         "frequencies split, pairing whole_head: compute_axial_rope_parameters deals a width-d RoPE's frequencies "
         "out, the even-indexed to the rows and the odd-indexed to the columns, recomposition_frequencies lays cos "
         "out [rows, columns, rows, columns] and apply_rotary_pos_emb turns it with one rotate_half over the head"),
    Form("gemma4_vision", "Gemma4VisionRotaryEmbedding", "apply_multidimensional_rope",
         {"layout": "half_split", "pairing": "per_half"}, False, "batch",
         "pairing per_half: recomposition_frequencies lays cos out [rows, rows, columns, columns] and "
         "apply_multidimensional_rope splits the head in two, each half its own rotate_half"),
)


# Axial towers whose form pecheck's rope2d cannot state, each with what it does.
UNSTATED = {
    "kimi_k25": "Kimi-K2.5's recomposition_frequencies alternates the axes per frequency over the whole head (column "
                "then row for each k): a pairing pecheck's rope2d (per_half, whole_head) cannot state",
    "minimax_m3_vl": "MiniMax-M3-VL's vision rotary turns by three axes (t, h, w) over the first dims of the head: "
                     "not a 2-D RoPE",
}


def _tree(fn):
    """fn's statements as a syntax tree, its docstring and comments left out."""
    body = ast.parse(textwrap.dedent(inspect.getsource(fn))).body[0].body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return ast.dump(ast.Module(body=body, type_ignores=[]))


def _modeling(arch):
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    return importlib.import_module(CONFIG_MAPPING[arch].__module__.replace(".configuration_", ".modeling_"))


@functools.lru_cache(maxsize=None)
def _exemplar_trees(exemplar, rotary, apply):
    """The trees of a form's recomposition_frequencies and apply function (read once per sweep), or None
    where the exemplar's module is not in this transformers."""
    try:
        shown = _modeling(exemplar)
        return _tree(getattr(shown, rotary).recomposition_frequencies), _tree(getattr(shown, apply))
    except (KeyError, ImportError, AttributeError, OSError, TypeError):
        return None


def _form_of(cls, module):
    """The Form whose code the tower's rotary class and apply function are, or None."""
    recomposition = _tree(cls.recomposition_frequencies)
    for form in FORMS:
        trees = _exemplar_trees(form.exemplar, form.rotary, form.apply)
        if trees and hasattr(module, form.apply) and trees == (recomposition, _tree(getattr(module, form.apply))):
            return form
    return None


def subjects(arch, module, config_cls):
    config = discover.text_config(config_cls())
    names = discover.vision_rotary(module, config)
    axial = [getattr(module, n) for n in names if hasattr(getattr(module, n, None), "compute_axial_rope_parameters")]
    if not axial:
        return None
    cls = axial[0]
    if discover.module_key(module) in UNSTATED:
        raise NotCallable(f"{cls.__name__}: {UNSTATED[discover.module_key(module)]}")
    form = _form_of(cls, module)
    if form is None:
        raise NotCallable(f"{cls.__name__}: an axial 2-D RoPE whose cos/sin layout (recomposition_frequencies) and "
                          "apply function are no form the zoo has written down (vision.FORMS)")
    rope = cls(config)
    params = dict(config.rope_parameters)
    if params.get("rope_type") != "axial":
        raise NotCallable(f"{cls.__name__}: rope_type {params.get('rope_type')!r}, not 'axial'")
    # The module's frequencies: d/4 shared by both axes, or (split, Pixtral's) d/2 dealt out between them.
    per_frequency = 2 if form.convention.get("frequencies") == "split" else 4
    pairs = int(rope.inv_freq.numel())
    conv = {"head_dim": per_frequency * pairs, "base": float(params["rope_theta"]), **form.convention}
    apply = getattr(module, form.apply)
    stated = (f"rope_parameters={{rope_theta={params['rope_theta']:g},rope_type=axial}}; "
              f"head_dim={per_frequency * pairs} (the module's {pairs} frequencies "
              + ("per axis, d/4)" if per_frequency == 4 else "dealt out between the axes, d/2)"))

    def build():
        import torch

        def fn(x, rows, cols):
            first, second = (cols, rows) if form.columns_first else (rows, cols)
            positions = torch.stack([torch.as_tensor(first), torch.as_tensor(second)], dim=-1)  # (n, 2)
            with torch.no_grad():
                if form.call == "batch":
                    cos, sin = rope(x, positions[None])
                    return apply(x[None], cos, sin, positions[None])[0]
                cos, sin = rope(x, positions)
                if form.call == "heads":
                    q = x.transpose(0, 1).unsqueeze(0)  # (1, heads, n, d)
                    y, _ = apply(q, q, cos.reshape(1, *cos.shape[-2:]), sin.reshape(1, *sin.shape[-2:]))
                    return y[0].transpose(0, 1)
                y, _ = apply(x, x, cos, sin)
            return y

        return fn

    name = f"{cls.__name__} (position_ids (n, 2)) + {form.apply}"
    quirk = form.quirk if form.exemplar == arch else f"{form.quirk} (the form of {form.exemplar}'s code)"
    return [Subject(arch, "rope2d", "default", "rope2d", build, conv, stated, name, quirk, **LAWS)]

