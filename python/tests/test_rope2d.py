"""2-D RoPE pinned to a convention: the two forms transformers 5's vision towers are written in (Qwen2-VL's
one rotate_half over the whole head, SAM 2's interleaved pairs), each passing under its own statement and
failing under the other's, and a statement that leaves the pairing out is one clear error."""
import numpy as np
import pytest

import pecheck


def axis_angles(pos, head_dim, base):  # (n, d/4): pos * base^(-4k/d)
    k = np.arange(head_dim // 4, dtype=np.float64)
    return pos.astype(np.float64)[:, None] * base ** (-4.0 * k / head_dim)


def qwen_vision(base):
    """Qwen2-VL's vision rotary, in float64: cos = [h, w, h, w], one rotate_half over the head."""
    def fn(x, rows, cols):
        d = x.shape[-1]
        hw = np.concatenate([axis_angles(rows, d, base), axis_angles(cols, d, base)], axis=-1)
        angle = np.concatenate([hw, hw], axis=-1)[:, None, :]
        x64 = x.astype(np.float64)
        turned = np.concatenate([-x64[..., d // 2:], x64[..., : d // 2]], axis=-1)
        return (x64 * np.cos(angle) + turned * np.sin(angle)).astype(np.float32)
    return fn


def sam_vision(base):
    """SAM 2's: cos = repeat_interleave([h, w], 2), rotate_pairwise."""
    def fn(x, rows, cols):
        d = x.shape[-1]
        angle = np.repeat(np.concatenate([axis_angles(rows, d, base), axis_angles(cols, d, base)], axis=-1), 2,
                          axis=-1)[:, None, :]
        x64 = x.astype(np.float64)
        turned = np.stack([-x64[..., 1::2], x64[..., 0::2]], axis=-1).reshape(x64.shape)
        return (x64 * np.cos(angle) + turned * np.sin(angle)).astype(np.float32)
    return fn


WHOLE = {"head_dim": 32, "base": 10000.0, "layout": "half_split", "pairing": "whole_head"}


def verdicts(report):
    return {(r.property, r.verdict) for r in report.results}


def test_qwen_vision_meets_whole_head_exactly():
    report = pecheck.check(qwen_vision(10000.0), "rope2d", WHOLE, dtypes="f32", cases=40)
    assert report.ok and report.contracts["f32"].met == "exact", report.summary()
    assert verdicts(report) == {("rope2d.agrees_with_reference", "pass"), ("rope2d.relative", "pass")}


def test_qwen_vision_stated_per_half_fails():
    report = pecheck.check(qwen_vision(10000.0), "rope2d", {**WHOLE, "pairing": "per_half"}, dtypes="f32",
                           cases=40)
    assert not report.ok
    assert ("rope2d.agrees_with_reference", "fail") in verdicts(report), report.summary()


def test_sam_vision_meets_interleaved_and_fails_half_split():
    inter = {"head_dim": 32, "base": 10000.0, "layout": "interleaved"}
    assert pecheck.check(sam_vision(10000.0), "rope2d", inter, dtypes="f32", cases=40).ok
    assert not pecheck.check(sam_vision(10000.0), "rope2d", WHOLE, dtypes="f32", cases=40).ok


@pytest.mark.parametrize("convention, names", [
    ({"head_dim": 32, "base": 100.0, "layout": "half_split"}, "'pairing'"),
    ({"head_dim": 32, "layout": "interleaved"}, "'base'"),
    ({"head_dim": 32, "base": 100.0}, "'layout'"),
    ({**WHOLE, "rope_theta": 100.0}, "unknown key 'rope_theta'"),
    ({**WHOLE, "pairing": "quarters"}, "'pairing' must be one of per_half, whole_head, got 'quarters'"),
    ({**WHOLE, "head_dim": 30}, "multiple of 4"),
])
def test_a_statement_that_cannot_be_read_is_one_error(convention, names):
    with pytest.raises(ValueError) as e:
        pecheck.check(qwen_vision(100.0), "rope2d", convention, dtypes="f32", cases=5)
    assert names in str(e.value) and str(e.value).startswith("convention: ") and "convention: convention" not in str(
        e.value)
