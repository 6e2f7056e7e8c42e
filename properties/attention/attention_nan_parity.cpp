// Theorem: a NaN in one value entry (token j, head h, dim c) reaches exactly the outputs (i, h, c)
// of the queries that attend to j; a NaN in a query of token i reaches exactly row i of its head.
// Every other output is the NaN-free one.
// Doc: docs/properties/attention.nan_parity.md
#include "harness/runner.hpp"
#include "properties/attention/attention_cases.hpp"
#include "properties/catalogue.hpp"

namespace pecheck::props {

namespace attention_nan_parity_detail {
namespace {

rc::Gen<AttentionCase> cases(DType dt) { return attention_case_gen(dt, all_attention_pes(), true, 1); }

/// Compares a poisoned run with the clean one; `expect_nan(i)` says which outputs must be NaN.
template <class ExpectNan>
std::string compare(const std::vector<float>& clean, const std::vector<float>& dirty, ExpectNan expect_nan,
                    std::string_view what) {
  for (std::size_t i = 0; i < clean.size(); ++i) {
    if (expect_nan(i) && !std::isnan(dirty[i]))
      return fmt::format("{} did not reach output {}: got {}", what, i, dirty[i]);
    if (!expect_nan(i) && dirty[i] != clean[i])
      return fmt::format("{} leaked to output {}: {} where the NaN-free call gave {}", what, i, dirty[i], clean[i]);
  }
  return {};
}

Outcome check(Encoder& enc, DType dt, const AttentionCase& c) {
  Outcome o;
  const AttentionData x = attention_data(c, dt);
  const std::size_t H = static_cast<std::size_t>(c.spec.heads), d = static_cast<std::size_t>(c.spec.head_dim);
  const std::size_t at = c.perm % c.size(), j = at / (H * d), h = at / d % H, k = at % d;
  const auto clean = encoder_attention(enc, dt, c, x, c.positions, o.failure);
  if (!o.failure.empty()) return o;
  // (1) A NaN in v[j, h, k] reaches o[i, h, k] for every query i that attends to key j.
  AttentionData bad_v = x;
  bad_v.v[at] = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> dirty = poisoned(c.size());
  enc.run(Attention{c.spec, dt, c.positions, bad_v.q, bad_v.k, bad_v.v, bad_v.table, dirty});
  o.failure = compare(
      clean, dirty, [&](std::size_t i) { return i / d % H == h && i % d == k && (!c.spec.causal || i / (H * d) >= j); },
      fmt::format("(1) NaN in v[token {}, head {}, dim {}]", j, h, k));
  if (!o.failure.empty()) return o;
  // (2) A NaN in q[j, h, k] reaches the whole row j of head h, and nothing else.
  AttentionData bad_q = x;
  bad_q.q[at] = std::numeric_limits<float>::quiet_NaN();
  dirty = poisoned(c.size());
  enc.run(Attention{c.spec, dt, c.positions, bad_q.q, bad_q.k, bad_q.v, bad_q.table, dirty});
  o.failure = compare(
      clean, dirty, [&](std::size_t i) { return i / (H * d) == j && i / d % H == h; },
      fmt::format("(2) NaN in q[token {}, head {}, dim {}]", j, h, k));
  return o;
}

}  // namespace
}  // namespace attention_nan_parity_detail

Property attention_nan_parity() {
  using namespace attention_nan_parity_detail;
  return make_property<AttentionCase>(
      {.id = "attention.nan_parity",
       .statement = "A NaN in a value reaches exactly the outputs that attend to it; in a query, exactly its row.",
       .family = Family::attention,
       .op = Op::attention,
       .pinnable = true},
      cases, check);
}

}  // namespace pecheck::props
