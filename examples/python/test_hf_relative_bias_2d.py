"""transformers' 2-D relative position bias tables, as Swin and BEiT build them: the module's own
bias over its whole window (SwinRelativePositionBias() and BeitRelativePositionBias(window_size)),
read at the patches pecheck draws (each patch's place in the window, the class token first for
BEiT). Swin meets every law, square window or not. BEiT meets them on a square window; on a
non-square one its forward reshapes the offsets' table with the window's sides exchanged before a
same-size bilinear interpolate, and the bias it returns is not its table's
(mutant-relative-bias-2d-beit-resampled plants the same)."""
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import pecheck  # noqa: E402
from transformers import BeitConfig  # noqa: E402
from transformers.models.beit.modeling_beit import BeitRelativePositionBias  # noqa: E402

swin = pytest.importorskip("transformers.models.swin.modeling_swin")
if not hasattr(swin, "SwinRelativePositionBias"):  # 4.x keeps the table inside SwinSelfAttention
    pytest.skip("this transformers has no SwinRelativePositionBias module", allow_module_level=True)

HEADS = 3
PATCH = 16


def window_places(rows, cols, window_cols, first):
    """Each patch's raster index in a window whose first row and column are the patches' least."""
    r, c = rows[first:], cols[first:]
    return (r - r.min()) * window_cols + (c - c.min())


def swin_bias(window):
    module = swin.SwinRelativePositionBias(HEADS, window)

    def fn(table, rows, cols, heads):
        with torch.no_grad():
            module.relative_position_bias_table.copy_(table)
            bias = module()[0]  # (heads, Wh*Ww, Wh*Ww)
        at = window_places(rows, cols, window[1], 0)
        return bias[:, at][:, :, at]

    return fn


def beit_bias(window):
    config = BeitConfig(image_size=[window[0] * PATCH, window[1] * PATCH], patch_size=PATCH,
                        num_attention_heads=HEADS, hidden_size=HEADS * 8)
    module = BeitRelativePositionBias(config)

    def fn(table, rows, cols, heads):
        with torch.no_grad():
            module.relative_position_bias_table.copy_(table)
            bias = module(window)[0]  # (heads, Wh*Ww + 1, Wh*Ww + 1), the class token first
        at = torch.cat([torch.zeros(1, dtype=torch.long), 1 + window_places(rows, cols, window[1], 1)])
        return bias[:, at][:, :, at]

    return fn


def pinned(window, class_token):
    return {"heads": HEADS, "window_size": list(window), "class_token": class_token}


@pytest.mark.parametrize("window", [(7, 7), (4, 6)])
def test_swin_relative_position_bias_meets_every_law(window):
    report = pecheck.check(swin_bias(window), "relative_bias_2d", pinned(window, False), framework="torch",
                           cases=40)
    assert report.ok, report.summary()
    agreement = report.result("relative_bias_2d.agrees_with_reference", "f32")
    assert agreement.nontrivial_cases == 40, agreement.explain()


def test_beit_relative_position_bias_meets_every_law_on_a_square_window():
    report = pecheck.check(beit_bias((4, 4)), "relative_bias_2d", pinned((4, 4), True), framework="torch", cases=40)
    assert report.ok, report.summary()


@pytest.mark.parametrize("window", [(2, 3), (3, 2)])
def test_beit_relative_position_bias_on_a_non_square_window_is_not_its_table(window):
    report = pecheck.check(beit_bias(window), "relative_bias_2d", pinned(window, True), framework="torch",
                           dtypes="f32", cases=40)
    agreement = report.result("relative_bias_2d.agrees_with_reference", "f32")
    assert agreement.verdict == "fail" and "offset" in agreement.message, agreement.explain()
    # Still a function of the offset alone: only agreement with the table sees it.
    assert report.result("relative_bias_2d.translation_invariance", "f32").verdict == "pass", report.summary()
