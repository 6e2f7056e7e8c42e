"""The cause of every non-PASS row, written after reading the code that produced it. A row whose
failure matches no cause here is UNEXPLAINED, and the zoo test fails on it."""
import collections
import fnmatch

# (architecture glob, variant glob, failing property glob, cause[, failure text glob]): the first that matches.
YARN_L0 = "transformers 4.49's YaRN ignores rope_scaling's original_max_position_embeddings"
NEMOTRON = "Nemotron's rotary module ignores rope_scaling"
ZAMBA2 = "Zamba2's rotary module cannot build any rope_scaling rule"
KEY_ONLY = "A key-only ALiBi bias rounded in fp32"
FALCON_BF16 = "Falcon forms its ALiBi bias in bfloat16"
MLLAMA = "Mllama's rotary module cannot be built from its config class's default"
GPTSAN = "GPTSAN clamps a position past its table to the last row"
ONE_ROW = "A one-row learned table broadcasts over a longer sequence"
COMPASS = "Cohere Compass's rotary module cannot be built from its config class's default"
NANOCHAT = "nanochat rotates by -p w: a convention pecheck cannot state yet"
EMPTY_ROW = "A position past BERT's table gives an empty embedding"
BEIT_SIDES = "BEiT reshapes its relative position bias table with the window's sides exchanged"
CAUSES = [
    ("nanochat", "*", "rope.*", NANOCHAT),
    ("*", "yarn-stretched", "rope.agrees_with_reference", YARN_L0),
    ("nemotron", "*", "rope.*", NEMOTRON),
    ("zamba2", "*", "TypeError:*", ZAMBA2),
    ("zamba2", "*", "KeyError:*", ZAMBA2),
    ("mpt", "*", "alibi.*", KEY_ONLY),
    ("falcon", "alibi", "alibi.*", FALCON_BF16),
    ("bloom", "*", "alibi.*", KEY_ONLY),
    ("mllama", "default", "TypeError:*", MLLAMA),
    ("gptsan-japanese", "default", "learned.agrees_with_reference", GPTSAN),
    ("*", "default", "learned.agrees_with_reference", ONE_ROW, "*learned(max_len=1,*outside=1*accepted*"),
    ("*", "default", "learned.agrees_with_reference", EMPTY_ROW, "*the output has shape (1, 0), expected (1, 1)*"),
    ("cohere_compass_text", "default", "KeyError:*", COMPASS),
    # agreement, and offset injectivity where resampled values coincide: not translation invariance
    ("*", "non-square", "relative_bias_2d.[ao]*", BEIT_SIDES),
]

EXPLANATIONS = {
    BEIT_SIDES: (
        "A real divergence (transformers 5.24, and 4.49 has the same line; found by this family's first run). "
        "`BeitRelativePositionBias.forward` "
        "(and Data2Vec-Vision's copy) reshapes the offsets' rows of its table as `reshape(1, old_width, "
        "old_height, -1)` before `interpolate(..., size=(new_height, new_width), mode=\"bilinear\")`, while "
        "`generate_relative_position_index` lays them out row-major over (2 Wh - 1) x (2 Ww - 1). For a square "
        "window both readings agree and the interpolate is the identity. For a non-square one (an image_size "
        "[224, 160] with patch 16: a 14 x 10 window) the bias returned is a bilinear resampling of a misplaced "
        "table, not its entries: the shrunk counterexample (three tokens) already reads another value than the "
        "table's entry for offset (0, 0). It is still a "
        "function of the offset alone, so translation invariance holds. Agreement with the index sees it, and "
        "offset injectivity too wherever two offsets' resampled values come out equal (in bf16 and f16 at "
        "pecheck's default seed). "
        "`mutant-relative-bias-2d-beit-resampled` plants the same reshape."),
    YARN_L0: (
        "A real divergence (transformers 4.49; 5.x reads the stated L0). YaRN's paper and the configs written from it (DeepSeek's) state the trained context "
        "as `rope_scaling.original_max_position_embeddings` (L0) and the stretched one as "
        "`max_position_embeddings`. transformers 4.49's `_compute_yarn_parameters` takes L0 from "
        "`config.max_position_embeddings` (its TODO says so): with `factor` 4 it computes the correction range "
        "for a context 4x too long, so the frequencies between the two cut-offs are interpolated wrongly, from "
        "position 1 on. The `yarn` rows, whose config states L0 = max_position_embeddings (Qwen2.5's model card "
        "writes it so), pass: the two readings coincide there."),
    NEMOTRON: (
        "A real divergence. `NemotronConfig` accepts and validates `rope_scaling`, but "
        "`NemotronRotaryEmbedding.__init__` sets `self.rope_type = \"default\"` (marked `# Ignore copy`): every "
        "rule computes the default frequencies. A Nemotron checkpoint fine-tuned with scaling runs unscaled."),
    ZAMBA2: (
        "A real divergence: the module crashes. `Zamba2RotaryEmbedding` calls `rope_init_fn(device=..., "
        "base=..., dim=...)` without the config, the call form of the default rule only; every other rule "
        "(`linear`, `yarn`, `llama3`, `longrope`) raises TypeError or KeyError when the model is built."),
    KEY_ONLY: (
        "A numerical property of the form, not a wrong convention. MPT stores m·(j − (L−1)) per key (BLOOM "
        "m·j) and relies on softmax ignoring each row's constant. With a slope that is not a power of two (MPT's "
        "16 heads have 2^(-k/2)) the product is rounded in fp32, with an absolute error up to u·m·L that does "
        "not shrink with the distance j − i: against ALiBi's m·(j − i) at short distances that is a few u, and "
        "softmax sees the same absolute error. BLOOM's 8 slopes are powers of two: its products are exact."),
    FALCON_BF16: (
        "A stated divergence from ALiBi, kept on purpose. Falcon's `build_alibi_tensor` multiplies "
        "`slopes[..., None].bfloat16() * arange_tensor` (its NOTE: the original training code quantised to "
        "bfloat16 there): every slope is rounded to 8 bits (with 71 heads, the extra heads' 0.9576 becomes "
        "0.9570) and m·j is rounded in bf16, so even in an f32 model the bias differs from m·(j − i) by up to "
        "2^-9 relative, far beyond an f32 bound. A Falcon model with alibi=True reproduces its training, not "
        "ALiBi's slopes."),
    MLLAMA: (
        "A divergence between a config class and its module. `MllamaTextConfig()` defaults to "
        "`rope_scaling=None`, but `MllamaRotaryEmbedding.__init__` reads `config.rope_scaling[\"rope_type\"]`: "
        "the default config cannot build the model (TypeError). Every released Mllama config states llama3 "
        "scaling, and the rows with a rope_scaling rule pass."),
    GPTSAN: (
        "A real divergence (in a model transformers 4.49 marks deprecated). `GPTSanJapaneseModel.forward` "
        "gathers position rows at `torch.clip(position, num_pasts_contexts, max_position_embeddings - 1)`: a "
        "sequence longer than the table reads the table's last row again for every later token, silently, "
        "where an index past the table should fail."),
    COMPASS: (
        "A divergence between a config class and its module (transformers 5). `CohereCompassTextConfig()` defaults "
        "to `rope_parameters={}` with every layer `full_attention`, but `CohereCompassRotaryEmbedding.__init__` reads "
        "`config.rope_parameters[layer_type]` for each layer type: the default config cannot build the model "
        "(KeyError: 'full_attention'). A config that states its rope_parameters per layer type builds it."),
    NANOCHAT: (
        "A convention, not a bug, that pecheck has no word for yet. nanochat's `rotate_half` returns "
        "`cat(x2, -x1)` where HF's returns `cat(-x2, x1)`: each pair turns by -p w (clockwise), as Karpathy's "
        "nanochat does. Relative positions survive (q and k turn alike), so the model is self-consistent, but no "
        "HF config key states the sign and pecheck's conventions (layout, base, rules) all turn by +p w: the "
        "agreement fails from position 1 on, by the size of a pair (2.8e7 u)."),
    EMPTY_ROW: (
        "A real divergence (transformers 5). BERT's embeddings (and ELECTRA's, ERNIE's, BertGeneration's) slice their "
        "position_ids buffer at `[cache_length : cache_length + n]`, one entry per table row: a token at a position "
        "past the table gets an empty slice, and its embedding, the sum of the token's (1, 1, d) and the positions' "
        "(1, 0, d), broadcasts to an empty sequence: the token disappears, silently, where an index past the table "
        "should fail (an nn.Embedding lookup raises IndexError)."),
    ONE_ROW: (
        "A real but degenerate divergence. These embeddings take no past_key_values_length: positions are "
        "`position_ids[:, :L]` of a buffer with one entry per table row. With a table of one row the slice of a "
        "2-token sequence has one entry, and its embedding broadcasts over both tokens: position 1, outside the "
        "table, is accepted silently and reads row 0. Any longer table fails on the shapes (the refusal pecheck "
        "asks for); real tables are long, so this shows only what the module does not check."),
}

UNEXPLAINED = "UNEXPLAINED"


def cause(row):
    props = [f.split(" ", 1)[0] for f in row.failures] or [""]
    for arch, variant, prop, cid, *text in CAUSES:
        if fnmatch.fnmatchcase(row.arch, arch) and fnmatch.fnmatchcase(row.variant, variant) and all(
                fnmatch.fnmatchcase(p, prop) for p in props) and all(
                fnmatch.fnmatchcase(f, text[0]) for f in row.failures if text):
            return cid
    return UNEXPLAINED


def explanation(cid):
    return EXPLANATIONS.get(cid, "No cause written yet: read the counterexample and the module's code.")


def grouped(rows):
    out = collections.OrderedDict()
    for r in rows:
        out.setdefault(cause(r), []).append(r)
    return out
