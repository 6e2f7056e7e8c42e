// Theorem: grouped-query attention (kv_heads dividing heads) equals multi-head attention with each
// K/V head repeated for its group: query head h reads K/V head h / (heads / kv_heads).
// Doc: docs/properties/attention.gqa_repeat_equivalence.md
#include <algorithm>

#include "harness/runner.hpp"
#include "properties/attention/attention_cases.hpp"
#include "properties/catalogue.hpp"

namespace pecheck::props {

namespace attention_gqa_repeat_equivalence_detail {
namespace {

/// Grouped cases only (kv_heads < heads: groups of 2 or 4), with every PE but the sinusoid.
rc::Gen<AttentionCase> cases(DType dt) {
  const std::vector<AttentionPE> pes{AttentionPE::none, AttentionPE::rope, AttentionPE::alibi, AttentionPE::shaw,
                                     AttentionPE::t5};
  return rc::gen::suchThat(with_grouped_queries(attention_case_gen(dt, pes, true, 1)),
                           [](const AttentionCase& c) { return c.spec.kv_count() < c.spec.heads; });
}

/// K or V (n, kv_heads, d) with each K/V head repeated for its group: (n, heads, d), row
/// (t, h) = row (t, h / group).
std::vector<float> repeat_heads(const std::vector<float>& x, const AttentionSpec& s, std::size_t n) {
  const std::size_t H = static_cast<std::size_t>(s.heads), KV = static_cast<std::size_t>(s.kv_count()),
                    d = static_cast<std::size_t>(s.head_dim);
  std::vector<float> out(n * H * d);
  for (std::size_t t = 0; t < n; ++t)
    for (std::size_t h = 0; h < H; ++h) {
      const std::size_t g = static_cast<std::size_t>(s.kv_head_of(static_cast<int>(h)));
      std::copy_n(x.begin() + static_cast<std::ptrdiff_t>((t * KV + g) * d), d,
                  out.begin() + static_cast<std::ptrdiff_t>((t * H + h) * d));
    }
  return out;
}

Outcome check(Encoder& enc, DType dt, const AttentionCase& c, const RunParams& params) {
  const AttentionData x = attention_data(c, dt);
  AttentionCase mha = c;
  mha.spec.kv_heads = 0;
  const AttentionData rx{x.q, repeat_heads(x.k, c.spec, c.n()), repeat_heads(x.v, c.spec, c.n()), x.table};
  // One exact output for both calls; the bound of each is that of the repeated (MHA) case, whose
  // pairs (i, j, h) and magnitudes are the grouped case's.
  const AttentionBound b = attention_bound(mha, dt, rx, params.contract);
  Outcome o{.bound_u = 2 * b.bound_u, .trivial = admits_any_output(2 * b.bound_u, dt)};
  const auto grouped = encoder_attention(enc, dt, c, x, c.positions, o.failure);
  const auto repeated = encoder_attention(enc, dt, mha, rx, c.positions, o.failure);
  if (!o.failure.empty()) return o;
  o.error_u = max_abs_diff_u(grouped, repeated, dt, b.max_v, &o.where);
  return o;
}

}  // namespace
}  // namespace attention_gqa_repeat_equivalence_detail

Property attention_gqa_repeat_equivalence() {
  using namespace attention_gqa_repeat_equivalence_detail;
  return make_property<AttentionCase>(
      {.id = "attention.gqa_repeat_equivalence",
       .statement = "Grouped-query attention equals multi-head attention with each K/V head repeated for its group "
                    "(query head h reads K/V head h / (heads / kv_heads)).",
       .family = Family::attention,
       .op = Op::attention,
       .pinnable = true},
      cases, check);
}

}  // namespace pecheck::props
