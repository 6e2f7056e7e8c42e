"""Why an architecture has no Subject: read from its modeling source, one line each. The patterns name
what the code builds; the first that matches says which family it is (one pecheck knows, one it does
not know yet, or none at all)."""
import inspect
import re

from .subject import Skip

# (pattern in the modeling source, family, reason), first match wins. Known families first: an
# architecture whose positions pecheck could check but the zoo does not call says so.
PATTERNS = (
    (r"apply_multimodal_rotary_pos_emb", "mrope",
     "M-RoPE (temporal, height, width sections): pecheck's mrope operation takes no pinned convention yet"),
    (r"PixtralRotaryEmbedding", "rope2d",
     "2-D RoPE over patch (row, col) whose row axis turns by the even-indexed frequencies base^(-4k/d) and its "
     "column axis by the odd ones base^(-(4k+2)/d); pecheck's rope2d gives both axes base^(-4k/d): a convention "
     "it cannot state yet"),
    (r"def get_embedding\(num_embeddings|class SinusoidalPositionalEmbedding", "sinusoidal",
     "a sinusoid module whose convention the zoo does not state (MusicGen's is cos half then sin half, a layout "
     "pecheck cannot state yet) or whose forward takes no position (FSMT's incremental_state form)"),
    # A rotary module instantiated (an apply_rotary_pos_emb alone is copied code no attention calls:
    # Jamba's, Parakeet's).
    (r"\w*Rotary\w*\(", "rope", "a rotary module the zoo cannot build or call here"),
    (r"positions_embed = nn\.Embedding|pos_emb = nn\.Parameter", "learned",
     "a learned table indexed inside a larger forward this sweep does not call"),
    (r"main_relative_position_buckets", "unknown: n-gram relative position buckets (ProphetNet)",
     "T5-like buckets per predicting stream, with a learned absolute table"),
    (r"segment_rel|relative_postion_if_large", "unknown: segment-aware relative buckets (CPM-Ant)",
     "T5-like buckets that also depend on the segments of query and key"),
    (r"RotaryRelativePositionalBias|SimpleRelativePositionalBias", "unknown: relative bias (Mega)",
     "a learned or rotary-parameterised bias per relative distance"),
    (r"relative_positions_encoding", "unknown: functional relative sinusoid (NEZHA)",
     "sinusoids of clipped relative distance added to keys and values"),
    (r"_get_relative_embeddings", "unknown: windowed relative embeddings (VITS)",
     "learned embeddings per relative distance within a window, added to keys and values"),
    (r"build_2d_sincos_position_embedding", "unknown: 2-D sin-cos grid positions (RT-DETR)",
     "sinusoids of the (row, column) of each feature-map cell"),
    (r"positional_encoding_type", "unknown: patch positional encoding (PatchTST)",
     "sin-cos or random learned rows per time-series patch"),
    (r"\brpb\b", "unknown: neighbourhood relative position bias (NAT)",
     "a learned bias per (dy, dx) offset within each query's own neighbourhood, not a shared window"),
    (r"c2p|p2c|disentangled", "unknown: disentangled relative attention (DeBERTa)",
     "content-to-position and position-to-content terms with log buckets"),
    (r"wpe = nn\.Embedding|self\.wpe\b", "learned",
     "GPT-2's wpe: an nn.Embedding the model's forward indexes with positions it makes inline (no module to call)"),
    (r"continuous_position_bias_mlp", "unknown: continuous 2-D relative position bias (Swin V2)",
     "the table an MLP makes of log-spaced (dy, dx) coordinates, then 16 sigmoid(.): not a learned table"),
    (r"relative_position_bias_table", "relative_bias_2d",
     "a 2-D relative position bias table in a form the zoo does not call (bias.relative_bias_2d_subjects)"),
    (r"get_rel_pos|add_decomposed_rel_pos", "unknown: decomposed 2-D relative positions (ViTDet, SAM)",
     "learned relative embeddings per axis, interpolated to the feature map"),
    (r"AxialPositionEmbeddings", "unknown: axial positions (Reformer)", "a factorised 2-D table over positions"),
    (r"rel_shift|RelPositionalEmbedding|RelPositionalEncoding|relative_positional_encoding|r_w_bias",
     "unknown: relative sinusoid with rel_shift (Transformer-XL, XLNet, Conformer)",
     "sinusoids of relative distance projected per layer, aligned by a shift"),
    (r"SinePositionEmbedding|PositionEmbeddingSine", "unknown: 2-D sine positions over an image mask (DETR)",
     "cumulative sums of a pixel mask, normalised, through sinusoids per axis"),
    (r"pos_conv_embed|PositionalConvEmbedding", "unknown: convolutional positions (wav2vec2)",
     "a grouped convolution over the sequence instead of a table"),
    (r"interpolate_pos_encoding|position_embeddings = nn\.Parameter|pos_embed = nn\.Parameter|"
     r"position_embedding = nn\.Embedding\(self\.num_positions",
     "unknown: learned patch-grid positions (ViT)",
     "one learned row per image patch, added inside the patch embedding (no position argument), interpolated "
     "to other image sizes"),
    (r"[.\s]position_embeddings = |position_embedding = nn\.Embedding|embed_positions = nn\.Embedding",
     "learned", "a learned nn.Embedding indexed inside a larger forward this sweep does not call"),
    (r"AutoModel|AutoModelForCausalLM", "composite",
     "the positional encoding is its sub-model's (another model_type of this sweep)"),
)


def config_classes(module, config):
    """The module's classes built from this config's class: its model classes (config_class) and the
    layers whose __init__ takes it (config: XConfig). A module holds several model_types (Qwen2.5-Omni's
    thinker, talker, audio and vision towers); each is classified by what its own classes build."""
    found = []
    for c in vars(module).values():
        if not (inspect.isclass(c) and c.__module__ == module.__name__):
            continue
        if getattr(c, "config_class", None) is type(config):
            found.append(c)
            continue
        try:
            param = inspect.signature(c.__init__).parameters.get("config")
        except (TypeError, ValueError):
            continue
        if param is not None and param.annotation is type(config):
            found.append(c)
    return _closure(module, found)


def _closure(module, classes):
    """The classes and every class of the module their __init__s instantiate, transitively (the
    embeddings, encoder, layers and attention a model class builds)."""
    seen, todo = [], list(classes)
    while todo:
        c = todo.pop()
        if c in seen:
            continue
        seen.append(c)
        try:
            src = inspect.getsource(c.__init__) if "__init__" in vars(c) else ""
        except (OSError, TypeError):
            continue
        for name in set(re.findall(r"\b([A-Z]\w*)\(", src)):
            sub = getattr(module, name, None)
            if inspect.isclass(sub) and sub.__module__ == module.__name__ and sub not in seen:
                todo.append(sub)
    return seen


# Modules whose positions the zoo reads but whose form no pattern names, written after reading them.
WRITTEN = {
    "efficientloftr": ("rope2d", "2-D RoPE over the coarse feature map (EfficientLoFTRRotaryEmbedding.forward(x) makes "
                                 "row and column angles from the map's shape): no positions to give it, so the zoo "
                                 "does not call it"),
}


def classify(arch, module, config_cls, config=None):
    key = module.__name__.rsplit(".", 1)[-1].removeprefix("modeling_")
    if key in WRITTEN:
        return Skip(arch, *WRITTEN[key])
    try:
        classes = config_classes(module, config) if config is not None else []
        if config is not None and not classes:
            return Skip(arch, "composite", f"no class of its modeling module takes its config ({type(config).__name__}): "
                                           "the model that runs it is another model_type's (or timm's)")
        src = "\n".join(inspect.getsource(c) for c in classes) if classes else inspect.getsource(module)
    except (OSError, TypeError):
        return Skip(arch, "none", "modeling source not readable")
    return classify_source(arch, src)


def classify_source(arch, src):
    for pattern, family, reason in PATTERNS:
        if re.search(pattern, src):
            return Skip(arch, family, reason)
    return Skip(arch, "none", "no positional encoding in the modeling code it builds (convolutional, recurrent or "
                              "state-space: order is in the computation; or a part fed the positions of the model "
                              "that holds it)")
