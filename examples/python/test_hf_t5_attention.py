"""transformers' T5 relative attention bias inside attention, as T5 runs it: the buckets from
T5Attention._relative_position_bucket (its log in float32) at the positions pecheck draws, the
table's entries added to the scores as SDPA's float mask, scale 1 or the one stated. Pinned to
HF's T5 (32 buckets, max_distance 128, the encoder's bidirectional), so the cases meet the bucket
edges at distances 16, 32 and 64, where a float32 log may take either bucket and pecheck accepts
both. A bias read query minus key fails. SDPA's NaN and infinity findings (docs/findings-sdpa.md)
show here as they do without a PE."""
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
F = torch.nn.functional

import pecheck  # noqa: E402
from transformers.models.t5.modeling_t5 import T5Attention  # noqa: E402

HF_T5 = {"pe": "t5", "num_buckets": 32, "max_distance": 128, "bidirectional": True}
FORMS = {"grouped_query", "window", "decode", "scale"}


def t5_sdpa(reverse=False):
    def attention(q, k, v, positions, causal, scale, window, t5_table):
        n, queries = k.shape[0], q.shape[0]
        relative = positions[None, :] - positions[n - queries:, None]  # key minus query, as compute_bias
        buckets = T5Attention._relative_position_bucket(-relative if reverse else relative, bidirectional=True,
                                                        num_buckets=32, max_distance=128)
        bias = t5_table[buckets].permute(2, 0, 1)  # (heads, queries, keys), in the table's dtype
        i = torch.arange(n - queries, n)[:, None]  # pecheck's mask: query row r is token n - queries + r
        j = torch.arange(n)[None, :]
        allowed = (j <= i) if causal else torch.ones(queries, n, dtype=torch.bool)
        if window:
            allowed &= j > i - window
        bias = bias.masked_fill(~allowed, float("-inf"))
        Q, K, V = (t.transpose(0, 1).unsqueeze(0) for t in (q, k, v))
        gqa = {"enable_gqa": True} if K.shape[1] != Q.shape[1] else {}
        out = F.scaled_dot_product_attention(Q, K, V, attn_mask=bias.unsqueeze(0), scale=scale, **gqa)
        return out[0].transpose(0, 1)

    return attention


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_hf_t5_bias_inside_sdpa_meets_the_exact_contract(dtype):
    report = pecheck.check(t5_sdpa(), "attention", HF_T5, forms=FORMS, framework="torch", dtypes=dtype, cases=30)
    # SDPA's own NaN and infinity findings (docs/findings-sdpa.md) hold here too; every other law passes.
    for r in report.results:
        want = ("fail",) if r.property.endswith("_parity") else ("pass", "skip")
        assert r.verdict in want, r.explain()
    assert sum(r.verdict == "pass" for r in report.results) >= 10, report.summary()
    agreement = report.result("attention.agrees_with_reference", dtype)
    assert agreement.verdict == "pass" and agreement.nontrivial_cases >= 27, agreement.explain()
    assert report.contracts[dtype].met in ("exact", "rounded-p"), report.summary()


def test_hf_t5_bias_read_query_minus_key_fails():
    report = pecheck.check(t5_sdpa(reverse=True), "attention", HF_T5, forms=FORMS, framework="torch",
                           dtypes="f32", cases=30, properties="attention.agrees_with_reference")
    assert report.results[0].verdict == "fail", report.summary()
