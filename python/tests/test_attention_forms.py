"""Attention in the forms serving kernels are written in (issue 33, item 1): grouped-query heads, a
sliding window, a decode step against the keys so far, a stated scale, RoPE inside attention at the
given positions. A function declares the forms it takes (forms=); every case is drawn within them,
and a property whose cases need another is "not applicable", saying which, never sent."""
import numpy as np
import pytest

import pecheck

CASES = 25


def rope_half_split(x, positions, base):
    """RoPE in float64, rotate_half pairs (i, i + d/2)."""
    d = x.shape[-1]
    inv_freq = base ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    angles = positions.astype(np.float64)[:, None, None] * inv_freq
    cos, sin = np.cos(angles), np.sin(angles)
    a, b = x[..., : d // 2], x[..., d // 2:]
    return np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)


def make_attention(*, group=lambda h, H, KV: h // (H // KV), top_left=False, ignore_scale=False, window_off=0,
                   rope_base=None):
    """Attention in float64, one query row at a time over the keys it sees (so a masked key's NaN
    or inf never reaches it); each keyword plants one bug class of serving kernels."""

    def attention(q, k, v, positions, causal, scale, window):
        q, k, v = (np.asarray(t, dtype=np.float64) for t in (q, k, v))
        nq, H, d = q.shape
        n, KV, _ = k.shape
        if rope_base is not None:
            q, k = rope_half_split(q, positions[n - nq:], rope_base), rope_half_split(k, positions, rope_base)
        s = 1 / np.sqrt(d) if ignore_scale else scale
        out = np.empty((nq, H, d))
        for r in range(nq):
            i = r if top_left else n - nq + r  # the query's token: bottom-right is pecheck's (and flash-attn's)
            last = i if causal else n - 1
            first = max(0, i - window + 1 + window_off) if window else 0
            for h in range(H):
                kv = group(h, H, KV)
                logits = s * (k[first:last + 1, kv] @ q[r, h])
                w = np.exp(logits - logits.max())
                out[r, h] = (w / w.sum()) @ v[first:last + 1, kv]
        return out.astype(np.float32)

    return attention


def check(fn, convention=None, **kwargs):
    kwargs.setdefault("forms", "all")
    return pecheck.check(fn, "attention", convention or {"pe": "none"}, dtypes="f32", cases=CASES, **kwargs)


def test_every_form_reaches_a_correct_attention():
    report = check(make_attention())
    assert report.ok, report.summary()
    ran = {r.property for r in report.results if r.verdict == "pass"}
    for law in ("attention.agrees_with_reference", "attention.gqa_repeat_equivalence", "attention.window_limits",
                "attention.decode_equivalence", "attention.nan_parity", "attention.inf_parity"):
        assert law in ran, report.summary()
    # Without a PE, only the laws about an encoding's effect do not apply, and they say so.
    for r in report.results:
        if r.verdict == "skip":
            assert r.message.startswith("not applicable") and "the encoder states none" in r.message, r.message
    # Every form was drawn; pinned to no PE, the PEs are not forms it is asked for.
    assert report.never_exercised == () and "every form drawn" in report.summary(), report.summary()


def test_a_form_not_declared_is_never_sent():
    shapes = []

    def recording(q, k, v, positions, causal):
        shapes.append((q.shape, k.shape))
        return make_attention()(q, k, v, positions, causal, 1 / np.sqrt(q.shape[-1]), 0)

    report = check(recording, forms=(), isolate=False)
    assert shapes and all(qs == ks for qs, ks in shapes), "a grouped-query or decode call reached the function"
    gqa = report.result("attention.gqa_repeat_equivalence", "f32")
    assert gqa.verdict == "skip" and gqa.message.startswith("not applicable") and "grouped_query" in gqa.message
    decode = report.result("attention.decode_equivalence", "f32")
    assert decode.verdict == "skip" and "'decode'" in decode.message, decode.message
    assert report.result("attention.agrees_with_reference", "f32").verdict == "pass"
    # The report says what the run never exercised (properties/coverage.hpp), not only what passed.
    for form in ("grouped-query", "window", "queries < keys", "stated scale"):
        assert form in report.never_exercised, report.never_exercised
    assert "never exercised: " in report.summary(), report.summary()


@pytest.mark.parametrize("bug, law", [
    (dict(ignore_scale=True), "attention.agrees_with_reference"),
    (dict(top_left=True), "attention.decode_equivalence"),
    (dict(group=lambda h, H, KV: h % KV), "attention.gqa_repeat_equivalence"),
    (dict(window_off=-1), "attention.window_limits"),
], ids=["scale-ignored", "decode-top-left", "gqa-interleaved-heads", "window-one-key-too-many"])
def test_each_serving_bug_class_fails(bug, law):
    report = check(make_attention(**bug), properties=law)
    (r,) = report.results
    assert r.verdict == "fail", r.explain()
    assert "forms=" in r.replay


def test_rope_inside_attention_at_the_given_positions():
    assert check(make_attention(rope_base=10000.0), {"pe": "rope", "rope_theta": 10000.0}).ok
    wrong = check(make_attention(rope_base=10000.0), {"pe": "rope", "rope_theta": 500000.0},
                  properties="attention.agrees_with_reference")
    assert wrong.results[0].verdict == "fail"


def test_declaring_a_keyword_form_fn_cannot_take_is_the_callers_error():
    def plain(q, k, v, positions, causal):
        return q

    with pytest.raises(ValueError, match="forms: 'scale' is declared, .* takes no 'scale' parameter"):
        pecheck.check(plain, "attention", {"pe": "none"}, forms={"scale"})
    with pytest.raises(ValueError, match="forms: unknown form 'gqa'"):
        pecheck.check(plain, "attention", {"pe": "none"}, forms={"gqa"})
    with pytest.raises(ValueError, match="forms: only attention takes forms"):
        pecheck.check(lambda x, positions: x, "rope", {"rope_theta": 1e4}, forms="all")


def test_an_attention_convention_names_its_pe():
    with pytest.raises(ValueError, match="convention: attention needs 'pe'"):
        pecheck.check(make_attention(), "attention", {"rope_theta": 1e4}, forms="all")
    with pytest.raises(ValueError, match="convention: unknown key 'base' for attention"):
        pecheck.check(make_attention(), "attention", {"pe": "alibi", "base": 2.0}, forms="all")
    with pytest.raises(ValueError, match="T5 needs 'num_buckets', 'max_distance' and 'bidirectional'"):
        pecheck.check(make_attention(), "attention", {"pe": "t5", "num_buckets": 32}, forms="all")


HF_T5 = {"pe": "t5", "num_buckets": 32, "max_distance": 128, "bidirectional": True}


def t5_buckets(rel, edge_side):
    """HF's _relative_position_bucket (32 buckets, 128, bidirectional) of key-minus-query distances.
    Where the log coordinate is an integer (distances 16, 32, 64), edge_side -1 takes the bucket
    below, as an fp32 log that rounds down does; 0 the exact one."""
    n = np.abs(rel)
    coord = np.log(np.maximum(n, 1) / 8) / np.log(128 / 8) * 8
    on_edge = (np.abs(coord - np.round(coord)) < 1e-9) & (np.round(coord) >= 1)  # distance 8 starts the range
    coord = np.where(on_edge, np.round(coord) + 0.5 * edge_side, coord)
    large = np.minimum(8 + np.floor(coord).astype(np.int64), 15)
    return (rel > 0) * 16 + np.where(n < 8, n, large)


def make_t5_attention(edge_side=0, reverse=False, edges_seen=None):
    """T5's bias inside attention in float64: table[bucket(p_j - p_i), h] added to the scaled scores."""

    def attention(q, k, v, positions, causal, scale, window, t5_table):
        q, k, v, table = (np.asarray(t, dtype=np.float64) for t in (q, k, v, t5_table))
        nq, H, d = q.shape
        n, KV, _ = k.shape
        rel = positions[None, :] - positions[n - nq:, None]
        buckets = t5_buckets(-rel if reverse else rel, edge_side)
        out = np.empty((nq, H, d))
        for r in range(nq):
            i = n - nq + r
            last, first = (i if causal else n - 1), (max(0, i - window + 1) if window else 0)
            if edges_seen is not None and np.isin(np.abs(rel[r, first:last + 1]), (16, 32, 64)).any():
                edges_seen.append(i)
            for h in range(H):
                logits = scale * (k[first:last + 1, h // (H // KV)] @ q[r, h]) + table[buckets[r, first:last + 1], h]
                w = np.exp(logits - logits.max())
                out[r, h] = (w / w.sum()) @ v[first:last + 1, h // (H // KV)]
        return out.astype(np.float32)

    return attention


@pytest.mark.parametrize("edge_side", [0, -1], ids=["exact-bucket", "bucket-below-at-edges"])
def test_t5_inside_attention_takes_either_bucket_at_an_edge(edge_side):
    # HF's pinned bucketing puts 16, 32 and 64 on bucket edges; an fp32 log may take either side there.
    edges_seen = []
    report = check(make_t5_attention(edge_side, edges_seen=edges_seen), HF_T5, isolate=False)
    assert report.ok, report.summary()
    assert edges_seen, "no query saw a key at distance 16, 32 or 64"
    assert report.result("attention.agrees_with_reference", "f32").verdict == "pass"


def test_t5_inside_attention_read_query_minus_key_fails():
    report = check(make_t5_attention(reverse=True), HF_T5, properties="attention.agrees_with_reference")
    assert report.results[0].verdict == "fail", report.summary()
