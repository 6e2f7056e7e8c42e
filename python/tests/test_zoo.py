"""pecheck.zoo on a fixed subset of transformers: one architecture per family, per rope_scaling rule, per
layout, per offset convention and per attention layer type, each row's verdict and reading asserted,
every failure explained (docs/model-zoo.md is the whole sweep)."""
import pytest

transformers = pytest.importorskip("transformers")

from pecheck.zoo import findings, sweep  # noqa: E402
from pecheck.zoo.subject import Skip  # noqa: E402

CASES = 20
V5 = int(transformers.__version__.split(".")[0]) >= 5

# (architecture, variant) -> verdict: one per family, per rule, per layout and per offset convention.
EXPECTED = {
    ("llama", "default"): "PASS",
    ("llama", "linear"): "PASS",
    ("llama", "yarn"): "PASS",
    ("llama", "llama3"): "PASS",
    ("llama", "longrope-short"): "PASS",
    ("cohere", "default"): "PASS",  # interleaved pairs, stated as Cohere's quirk
    ("phi", "default"): "PASS",  # partial rotary, split by the attention layer
    ("gptj", "default"): "PASS",  # a fixed sin/cos table, rotate_every_two
    ("bloom", "default"): "PASS",
    ("falcon", "alibi"): "FAIL",  # its slopes rounded to bfloat16 (findings.FALCON_BF16)
    ("t5", "encoder"): "PASS",
    ("t5", "decoder"): "PASS",
    ("m2m_100", "default"): "PASS",  # fairseq's sinusoid with its padding row, built in fp32
    ("marian", "default"): "PASS",  # tensor2tensor's sinusoid, built in float64
    ("bart", "default"): "PASS",  # learned, rows offset by 2
    ("roberta", "default"): "PASS",  # learned, positions from pad_token_id + 1
}
if V5:
    EXPECTED.update({
        ("llama", "yarn-stretched"): "PASS",  # 5.x reads the stated original_max_position_embeddings
        ("llama", "dynamic"): "PASS",  # pinned per call's length, a module per call: the per-call laws
        ("deepseek_v3", "default"): "PASS",  # rope_interleave: GPT-J pairs read, written half-split
        ("gpt_oss", "default"): "PASS",  # YaRN truncate=False: stated in rope_parameters
        ("gemma3_text", "sliding_attention"): "PASS",  # one RoPE per attention layer type
        ("gemma3_text", "full_attention"): "PASS",
        ("gemma4_text", "full_attention"): "PASS",  # proportional RoPE, its layer type's own head_dim
        ("qwen2_vl_text", "default"): "PASS",  # M-RoPE, sections [16, 24, 24], sectioned by the rotary module
        ("qwen3_vl_text", "default"): "PASS",  # M-RoPE, Qwen3-VL's round-robin assignment
        ("glm4v_text", "default"): "PASS",  # M-RoPE on the rotated half of the head, GLM's pairs
        ("qwen2_vl_vision", "default"): "PASS",  # 2-D RoPE, one rotate_half over the whole head
        ("step3p5_vision", "default"): "PASS",  # the same, columns first
        ("sam2_video", "default"): "PASS",  # 2-D RoPE, interleaved pairs
        ("wav2vec2-conformer", "rotary"): "PASS",  # cos/sin rows of a sequence, the attention's own apply
        ("bert", "default"): "FAIL",  # a position past the table gives an empty row (findings.EMPTY_ROW)
        ("swin", "default"): "PASS",  # the 2-D relative position bias table, SwinRelativePositionBias
        ("beit", "default"): "PASS",  # BEiT's, with the class token's three rows
        ("beit", "non-square"): "FAIL",  # its table reshaped with the sides exchanged (findings.BEIT_SIDES)
        ("nanochat", "default"): "FAIL",  # turns by -p w (findings.NANOCHAT)
    })
else:
    EXPECTED.update({
        ("llama", "yarn-stretched"): "FAIL",  # transformers 4.49 takes YaRN's L0 from max_position_embeddings
        ("nemotron", "linear"): "FAIL",  # its rotary module ignores rope_scaling
        ("qwen2_vl", "default"): "PASS",
        ("bert", "default"): "PASS",
    })


@pytest.fixture(scope="module")
def rows():
    archs = sorted({a for a, _ in EXPECTED})
    variants = sorted({v for _, v in EXPECTED})
    found, skips = sweep.run(archs, variants, cases=CASES, ladder=False)
    assert not skips, skips
    return {(r.arch, r.variant): r for r in found}


@pytest.mark.parametrize("key", sorted(EXPECTED), ids=lambda k: f"{k[0]}-{k[1]}")
def test_each_row_has_its_verdict_and_every_failure_its_cause(rows, key):
    row = rows[key]
    assert row.verdict == EXPECTED[key], "\n".join(row.failures)
    if row.verdict != "PASS":
        assert findings.cause(row) != findings.UNEXPLAINED, row.failures
        assert row.failures and "replay: pecheck.check(" in row.failures[0]


def test_the_reading_is_the_config_plus_the_stated_quirks(rows):
    assert rows[("llama", "default")].reading == "rope_theta=10000.0 head_dim=128"
    assert "layout=interleaved" in rows[("cohere", "default")].reading
    assert rows[("cohere", "default")].quirk.startswith("pairs (2i, 2i+1)")
    assert "partial_rotary_factor=0.5" in rows[("phi", "default")].reading
    assert "row p + 2" in rows[("bart", "default")].quirk
    assert "pad_token_id + 1" in rows[("roberta", "default")].quirk
    assert rows[("bloom", "default")].reading == "heads=8 causal=True"
    assert "bidirectional=False" in rows[("t5", "decoder")].reading


@pytest.mark.skipif(not V5, reason="transformers 5's rope_parameters")
def test_transformers_5_readings(rows):
    # a RoPE per layer type: each row its own base
    assert rows[("gemma3_text", "sliding_attention")].reading == "rope_theta=10000.0 head_dim=256"
    assert rows[("gemma3_text", "full_attention")].reading == "rope_theta=1000000.0 head_dim=256"
    # the fields only transformers 5's words state, with what transformers fills in
    assert "truncate=False" in rows[("gpt_oss", "default")].reading
    assert "attention_factor=1.34657" in rows[("gpt_oss", "default")].reading
    assert "rope_type=proportional" in rows[("gemma4_text", "full_attention")].reading
    assert "head_dim=512" in rows[("gemma4_text", "full_attention")].reading
    assert "layout=interleaved" in rows[("deepseek_v3", "default")].reading  # the config's rope_interleave
    assert "assignment=interleaved" in rows[("qwen3_vl_text", "default")].reading
    assert "head_dim=64" in rows[("glm4v_text", "default")].reading  # the rotated half of a 128-wide head


def test_contracts_are_measured_per_dtype(rows):
    # HF forms RoPE angles in fp32 (inv_freq @ positions): not exact, within the fp32-angles contract.
    assert rows[("llama", "default")].contract == {"f32": "fp32-angles", "bf16": "fp32-angles"}
    # fairseq's table is built in fp32 too; Marian's in float64 is exact.
    assert rows[("m2m_100", "default")].contract["f32"] == "fp32-angles"
    assert rows[("marian", "default")].contract == {"f32": "exact", "bf16": "exact"}
    if V5:
        assert rows[("qwen2_vl_text", "default")].contract["f32"] == "fp32-angles"
    else:
        assert rows[("llama", "yarn-stretched")].contract == {"f32": "", "bf16": ""}


def test_every_row_says_how_long_it_took(rows):
    assert all(0 < r.seconds < 20 for r in rows.values()), {k: r.seconds for k, r in rows.items()}


def test_a_run_whose_agreement_never_ran_is_not_a_pass():
    # Every case declined: nothing judged, whatever the other laws say (the m2m_100 row once passed so).
    import pecheck
    from pecheck.zoo import judge
    from pecheck.zoo.subject import Subject

    def declines(positions, d_model):
        raise pecheck.Unsupported("declines everything")

    subject = Subject("toy", "sinusoidal", "default", "sinusoidal", lambda: declines, {"d_model": 8}, "d_model=8",
                      "declines", asserted=("*",))
    row = judge.judge(subject, cases=5, ladder=False)
    assert row.verdict == "INCOMPLETE" and "skipped" in row.failures[0]


def test_a_row_whose_process_dies_is_an_error_and_the_sweep_goes_on():
    import os
    import signal

    from pecheck.zoo.subject import Subject

    def dies():  # SIGKILL, not abort(): pytest's faulthandler would print the dying child's stack
        os.kill(os.getpid(), signal.SIGKILL)

    crash = Subject("toy", "rope", "default", "rope", dies, None, "", "aborts")
    fine = sweep.find("llama")[0]
    dead, alive = sweep.judge_all([crash, fine], cases=5, seed=1, ladder=False, jobs=2, log=open(os.devnull, "w"))
    assert dead.verdict == "ERROR" and "signal 9" in dead.failures[0]
    assert alive.verdict == "PASS"


LEFT_OUT = [
    ("mamba", "none"),
    ("vit", "unknown: learned patch-grid positions (ViT)"),
    ("llava", "composite"),
    ("swinv2", "unknown: continuous 2-D relative position bias (Swin V2)"),
]
if V5:
    LEFT_OUT += [
        ("qwen2_vl", "composite"),  # its text model is qwen2_vl_text
        ("kimi_k25_vision", "rope2d"),  # its axes alternate per frequency: no rope2d pairing states it
        ("blt", "composite"),  # its local and global parts are model_types of their own
        ("gemma4_assistant", "composite"),  # its config class's default fails strict validation: said, not lost
    ]


@pytest.mark.parametrize("arch, family", LEFT_OUT)
def test_an_architecture_left_out_says_why(arch, family):
    skip = sweep.find(arch)
    assert isinstance(skip, Skip) and skip.family == family and skip.reason
    if arch == "gemma4_assistant":
        assert "cannot be built with its defaults" in skip.reason


@pytest.mark.skipif(not V5, reason="transformers 4.49's vision towers have no axial rotary module")
def test_a_vision_tower_under_the_wrong_pairing_fails():
    # The zoo's form is what makes Qwen2-VL's tower pass: stated per_half (RoPE-Axial's pairs), the same
    # module fails agreement, so the PASS above is not one every 2-D RoPE would get.
    import dataclasses

    from pecheck.zoo import judge

    (subject,) = sweep.find("qwen2_vl_vision")
    assert subject.convention["pairing"] == "whole_head" and subject.convention["layout"] == "half_split"
    wrong = dataclasses.replace(subject, convention={**subject.convention, "pairing": "per_half"})
    row = judge.judge(wrong, cases=CASES, ladder=False)
    assert row.verdict == "FAIL" and "rope2d.agrees_with_reference" in row.failures[0], row.failures


@pytest.mark.skipif(not V5, reason="transformers 4.49's vision towers have no axial rotary module")
def test_pixtral_passes_under_split_frequencies_only():
    # Pixtral deals a width-d RoPE's frequencies out between the axes (rows the even-indexed, columns the
    # odd): under that statement its tower passes; stated as the other towers' shared frequencies, it fails.
    import dataclasses

    from pecheck.zoo import judge

    (subject,) = sweep.find("pixtral")
    assert subject.convention["frequencies"] == "split" and subject.convention["pairing"] == "whole_head"
    row = judge.judge(subject, cases=CASES, ladder=False)
    assert row.verdict == "PASS", row.failures
    shared = dataclasses.replace(subject, convention={**subject.convention, "frequencies": "shared"})
    row = judge.judge(shared, cases=CASES, ladder=False)
    assert row.verdict == "FAIL" and "rope2d.agrees_with_reference" in row.failures[0], row.failures


def test_a_failure_without_a_written_cause_is_unexplained():
    from pecheck.zoo.judge import Row

    row = Row("llama", "rope", "default", "", "", "", "", verdict="FAIL",
              failures=["rope.inverse f32: made up; replay: ..."])
    assert findings.cause(row) == findings.UNEXPLAINED
