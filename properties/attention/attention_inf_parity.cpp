// Theorem: an infinity in one value entry (token j, head h, dim c) makes the outputs (i, h, c) of
// the queries that attend to j non-finite (their weight on j is positive) and leaves every other
// output bitwise as it was: masked keys contribute nothing, not 0 * inf.
// Doc: docs/properties/attention.inf_parity.md
#include <bit>
#include <limits>

#include "harness/runner.hpp"
#include "properties/attention/attention_cases.hpp"
#include "properties/catalogue.hpp"

namespace pecheck::props {

namespace attention_inf_parity_detail {
namespace {

rc::Gen<AttentionCase> cases(DType dt) { return attention_case_gen(dt, all_attention_pes(), true, 1); }

Outcome check(Encoder& enc, DType dt, const AttentionCase& c) {
  Outcome o;
  const AttentionData x = attention_data(c, dt);
  const std::size_t H = static_cast<std::size_t>(c.spec.heads), d = static_cast<std::size_t>(c.spec.head_dim);
  const std::size_t at = c.perm % c.size(), j = at / (H * d), h = at / d % H, k = at % d;
  const auto clean = encoder_attention(enc, dt, c, x, c.positions, o.failure);
  if (!o.failure.empty()) return o;
  const float inf = c.perm / 3 % 2 ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
  AttentionData bad = x;
  bad.v[at] = inf;
  std::vector<float> dirty = poisoned(c.size());
  enc.run(Attention{c.spec, dt, c.positions, bad.q, bad.k, bad.v, bad.table, dirty});
  const std::string what = fmt::format("{} in v[token {}, head {}, dim {}]", inf, j, h, k);
  for (std::size_t i = 0; i < clean.size(); ++i) {
    const bool reached = i / d % H == h && i % d == k && (!c.spec.causal || i / (H * d) >= j);
    if (reached && std::isfinite(dirty[i])) {
      o.failure = fmt::format("{} did not reach output {} (token {}): got {}", what, i, i / (H * d), dirty[i]);
      return o;
    }
    if (!reached && std::bit_cast<std::uint32_t>(dirty[i]) != std::bit_cast<std::uint32_t>(clean[i])) {
      o.failure = fmt::format("{} leaked to output {} (token {}, head {}, dim {}): {} where the finite call gave {}",
                              what, i, i / (H * d), i / d % H, i % d, dirty[i], clean[i]);
      return o;
    }
  }
  return o;
}

}  // namespace
}  // namespace attention_inf_parity_detail

Property attention_inf_parity() {
  using namespace attention_inf_parity_detail;
  return make_property<AttentionCase>(
      {.id = "attention.inf_parity",
       .statement =
           "An infinite value makes exactly the outputs that attend to it non-finite and changes nothing else.",
       .family = Family::attention,
       .op = Op::attention,
       .pinnable = true},
      cases, check);
}

}  // namespace pecheck::props
