"""torch.nn.functional.scaled_dot_product_attention through every attention form pecheck sends
(grouped-query heads, sliding windows, decode steps, stated scales, RoPE inside attention), on the
CPU. What it finds is written up, with replay lines, in docs/findings-sdpa.md; the laws SDPA does
not meet there are asserted as failures here, so a torch release that changes them is noticed.
Last, transformers 5's Llama attention (its rotary module, then SDPA) and the contract it meets."""
import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

import pecheck  # noqa: E402

CASES = 30
if tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2]) < (2, 5):
    pytest.skip("SDPA's enable_gqa (grouped-query heads) arrived in torch 2.5", allow_module_level=True)
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

FORMS = {"grouped_query", "window", "decode", "scale"}


def bottom_right_mask(n_queries, n_keys, causal, window):
    """pecheck's mask (flash-attn >= 2.1's): query row r is token n_keys - n_queries + r."""
    if not causal:
        return None
    i = torch.arange(n_keys - n_queries, n_keys)[:, None]
    j = torch.arange(n_keys)[None, :]
    allowed = j <= i
    if window:
        allowed &= j > i - window
    return allowed


def sdpa(q, k, v, positions, causal, scale, window):
    """pecheck's (tokens, heads, head_dim) to SDPA's (batch, heads, tokens, head_dim) and back."""
    Q, K, V = (t.transpose(0, 1).unsqueeze(0) for t in (q, k, v))
    mask = bottom_right_mask(q.shape[0], k.shape[0], causal, window)
    gqa = {"enable_gqa": True} if K.shape[1] != Q.shape[1] else {}
    return F.scaled_dot_product_attention(Q, K, V, attn_mask=mask, scale=scale, **gqa)[0].transpose(0, 1)


def rotate_half_split(x, positions, base):
    """RoPE (rotate_half pairs) in float64 at the given positions, rounded once to x's dtype."""
    d = x.shape[-1]
    inv_freq = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    angle = positions.to(torch.float64)[:, None, None] * inv_freq
    a, b = x[..., : d // 2].double(), x[..., d // 2:].double()
    return torch.cat([a * angle.cos() - b * angle.sin(), a * angle.sin() + b * angle.cos()], -1).to(x.dtype)


def rope_then_sdpa(q, k, v, positions, causal, scale, window):
    """RoPE applied inside attention, as a model's attention layer does: q at the query tokens'
    positions (the last ones), k at every token's, then SDPA."""
    n, queries = k.shape[0], q.shape[0]
    return sdpa(rotate_half_split(q, positions[n - queries:], 10000.0), rotate_half_split(k, positions, 10000.0), v,
                positions, causal, scale, window)


def alibi_slopes(heads):
    """Press et al.'s slopes (BLOOM's build_alibi_tensor): 2^(-8k/p) for the largest power of two
    p <= heads, then the odd steps of 2^(-4k/p) for the rest."""
    p = 1 << (heads.bit_length() - 1)
    slopes = [2.0 ** (-8.0 * k / p) for k in range(1, p + 1)]
    slopes += [2.0 ** (-4.0 * k / p) for k in range(1, 2 * (heads - p), 2)]
    return torch.tensor(slopes, dtype=torch.float64)


def alibi_sdpa(q, k, v, positions, causal, scale, window):
    """ALiBi as a float attn_mask: -m_h (p_i - p_j) causal, -m_h |p_i - p_j| otherwise, added to
    the scaled scores; -inf where the mask (causal, window, bottom-right) excludes the key."""
    n, queries, heads = k.shape[0], q.shape[0], q.shape[1]
    distance = (positions[n - queries:, None] - positions[None, :]).to(torch.float64)
    bias = -alibi_slopes(heads)[:, None, None] * (distance if causal else distance.abs())
    allowed = bottom_right_mask(queries, n, causal, window)
    if allowed is not None:
        bias = bias.masked_fill(~allowed, float("-inf"))
    Q, K, V = (t.transpose(0, 1).unsqueeze(0) for t in (q, k, v))
    gqa = {"enable_gqa": True} if K.shape[1] != Q.shape[1] else {}
    out = F.scaled_dot_product_attention(Q, K, V, attn_mask=bias.to(q.dtype).unsqueeze(0), scale=scale, **gqa)
    return out[0].transpose(0, 1)


def sdpa_is_causal(q, k, v, positions, causal, scale):
    """SDPA's own is_causal flag, as most callers write it."""
    Q, K, V = (t.transpose(0, 1).unsqueeze(0) for t in (q, k, v))
    return F.scaled_dot_product_attention(Q, K, V, is_causal=bool(causal), scale=scale)[0].transpose(0, 1)


# What SDPA on the CPU does that pecheck's laws do not allow (docs/findings-sdpa.md): its default
# (flash) kernel turns a query row holding a NaN into zeros, and every kernel lets a NaN or an
# infinity in a value row the mask excludes reach the rows that do not see it (0 * inf).
FINDINGS = {"attention.nan_parity", "attention.inf_parity"}


@pytest.mark.parametrize("dtype", ["f32", "bf16", "f16"])
def test_sdpa_in_every_form(dtype):
    report = pecheck.check(sdpa, "attention", {"pe": "none"}, forms=FORMS, framework="torch", dtypes=dtype,
                           cases=CASES)
    for r in report.results:
        if r.verdict == "skip":  # the laws about an encoding's effect, with no PE
            assert r.message.startswith("not applicable") and "the encoder states none" in r.message, r.message
        elif r.property in FINDINGS:
            continue  # asserted below, in f32
        else:
            assert r.verdict == "pass", r.explain()
    judged = {r.property for r in report.results if r.verdict != "skip"}
    assert {"attention.gqa_repeat_equivalence", "attention.window_limits", "attention.decode_equivalence"} <= judged


def test_sdpa_with_rope_inside_meets_the_laws_of_an_encoding():
    # With a PE the laws about its effect apply too: order sensitivity and translation invariance.
    report = pecheck.check(rope_then_sdpa, "attention", {"pe": "rope", "rope_theta": 10000.0}, forms=FORMS,
                           framework="torch", dtypes="f32", cases=CASES)
    verdicts = {r.property: r for r in report.results}
    for law in ("attention.order_sensitivity", "attention.translation_invariance", "attention.agrees_with_reference",
                "attention.decode_equivalence", "attention.gqa_repeat_equivalence", "attention.window_limits"):
        assert verdicts[law].verdict == "pass", verdicts[law].explain()
    for r in report.results:
        if r.verdict == "skip":  # K/V permutation invariance holds without a PE; ALiBi's law with ALiBi
            assert r.message.startswith("not applicable") and "the encoder states rope" in r.message, r.message
        elif r.property not in FINDINGS:
            assert r.verdict == "pass", r.explain()


def test_sdpa_with_an_alibi_mask_meets_alibis_laws():
    report = pecheck.check(alibi_sdpa, "attention", {"pe": "alibi"}, forms=FORMS, framework="torch", dtypes="f32",
                           cases=CASES)
    verdicts = {r.property: r for r in report.results}
    for law in ("alibi.causal_shift_equivalence", "attention.translation_invariance",
                "attention.agrees_with_reference", "attention.decode_equivalence"):
        assert verdicts[law].verdict == "pass", verdicts[law].explain()


def test_sdpa_findings_are_what_the_page_says():
    report = pecheck.check(sdpa, "attention", {"pe": "none"}, forms=FORMS, framework="torch", dtypes="f32",
                           cases=CASES, properties="attention.*_parity")
    verdicts = {r.property: r for r in report.results}
    for law in FINDINGS:
        assert verdicts[law].verdict == "fail", verdicts[law].explain()
    # The two causes, one call each (the page's replay lines): a NaN query is zeros from the flash
    # kernel and NaN from the math one; an infinity in a masked value row reaches token 0 in both.
    nan_q = torch.full((1, 1, 1, 1), float("nan"))
    one = torch.ones(1, 1, 1, 1)
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        assert F.scaled_dot_product_attention(nan_q, one, one).item() == 0.0
    with sdpa_kernel(SDPBackend.MATH):
        assert torch.isnan(F.scaled_dot_product_attention(nan_q, one, one)).all()
    k = torch.ones(1, 1, 2, 1)
    v = torch.tensor([1.0, float("inf")]).reshape(1, 1, 2, 1)
    for backend in (SDPBackend.FLASH_ATTENTION, SDPBackend.MATH):
        with sdpa_kernel(backend):
            out = F.scaled_dot_product_attention(k, k, v, attn_mask=torch.tensor([[True, False], [True, True]]))
        assert torch.isnan(out[0, 0, 0, 0]), (backend, out)  # token 0 does not see token 1


def test_is_causal_is_top_left_with_fewer_queries_than_keys():
    # A convention, not a bug: PyTorch documents is_causal as the top-left mask; a decode step needs
    # the bottom-right one (an attn_mask, or torch.nn.attention.bias.causal_lower_right).
    report = pecheck.check(sdpa_is_causal, "attention", {"pe": "none"}, forms={"decode", "scale"},
                           framework="torch", dtypes="f32", cases=CASES,
                           properties="attention.decode_equivalence")
    assert report.results[0].verdict == "fail", report.results[0].explain()
    prefill = pecheck.check(sdpa_is_causal, "attention", {"pe": "none"}, forms={"scale"}, framework="torch",
                            dtypes="f32", cases=CASES, properties="attention.agrees_with_reference")
    assert prefill.results[0].verdict == "pass", prefill.results[0].explain()


def test_transformers_llama_attention_meets_fp32_angles():
    # transformers 5's Llama attention as a model calls it: LlamaRotaryEmbedding's cos/sin (angles
    # formed in fp32), apply_rotary_pos_emb, then SDPA. Judged as exact, its fp32 angles at a few
    # thousand positions move the f32 output past the bound; attention's ladder names the contract
    # it meets instead (docs/error-model.md, attention.output.rope_contract).
    transformers = pytest.importorskip("transformers")
    if int(transformers.__version__.split(".")[0]) < 5:
        pytest.skip("transformers 5's rope_parameters")
    import functools
    import warnings

    from transformers.models.llama import modeling_llama as ml

    @functools.lru_cache(maxsize=None)
    def rotary(head_dim):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cfg = transformers.LlamaConfig(hidden_size=4 * head_dim, num_attention_heads=4, head_dim=head_dim,
                                           rope_parameters={"rope_type": "default", "rope_theta": 10000.0})
        return ml.LlamaRotaryEmbedding(config=cfg)

    def llama_attention(q, k, v, positions, causal, scale):
        n, queries = k.shape[0], q.shape[0]
        Q, K, V = (t.transpose(0, 1).unsqueeze(0) for t in (q, k, v))
        cos, sin = rotary(q.shape[-1])(V, positions.unsqueeze(0))
        Q, _ = ml.apply_rotary_pos_emb(Q, Q, cos[:, n - queries:], sin[:, n - queries:])
        _, K = ml.apply_rotary_pos_emb(K, K, cos, sin)
        return F.scaled_dot_product_attention(Q, K, V, is_causal=causal, scale=scale)[0].transpose(0, 1)

    report = pecheck.check(llama_attention, "attention", {"pe": "rope", "rope_theta": 10000.0}, forms={"scale"},
                           framework="torch", dtypes=("f32", "bf16"), cases=100)  # the default: 30 can be vacuous
    assert report.contract("f32") == "fp32-angles", report.summary()
    assert report.contracts["f32"].misses[0].contract == "exact"
    assert report.contract("bf16") is not None, report.summary()
    for r in report.results:
        assert r.verdict in ("pass", "skip") or r.property in FINDINGS, r.explain()
