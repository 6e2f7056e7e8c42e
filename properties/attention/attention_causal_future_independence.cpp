// Theorem: with a causal mask, the outputs of tokens 0..c do not depend on tokens after c:
// replacing every later query, key and value leaves them unchanged.
// Doc: docs/properties/attention.causal_future_independence.md
#include "harness/runner.hpp"
#include "properties/attention/attention_cases.hpp"
#include "properties/catalogue.hpp"

namespace pecheck::props {

namespace attention_causal_future_independence_detail {
namespace {

rc::Gen<AttentionCase> cases(DType dt) {
  return rc::gen::map(attention_case_gen(dt, all_attention_pes(), true, 2), [](AttentionCase c) {
    c.spec.causal = true;
    return c;
  });
}

Outcome check(Encoder& enc, DType dt, const AttentionCase& c, const RunParams& params) {
  const std::size_t cut = c.perm % (c.n() - 1);  // tokens 0..cut are the past, the rest the future
  const std::size_t w = static_cast<std::size_t>(c.spec.width());
  const AttentionData x = attention_data(c, dt);
  AttentionData y = x;  // the same past, another future
  const auto other = [&](std::uint32_t salt) { return gen::values(c.data ^ 0x5a5a5a5au, salt, c.size(), dt); };
  const auto qf = other(1), kf = other(2), vf = other(3);
  for (std::size_t i = (cut + 1) * w; i < c.size(); ++i) y.q[i] = qf[i], y.k[i] = kf[i], y.v[i] = vf[i];
  const AttentionBound bx = attention_bound(c, dt, x, params.contract), by = attention_bound(c, dt, y, params.contract);
  // Each run's past rows are within B u max|V'| of the same exact rows (each run with its own
  // max|V'|); the difference is measured in units of the smaller scale.
  const double scale = std::min(bx.max_v, by.max_v);
  Outcome o{.bound_u = (bx.bound_u * bx.max_v + by.bound_u * by.max_v) / scale};
  // Outputs bounded by their own max|V'| differ by at most the sum of the two.
  o.trivial = o.bound_u * scale >= (bx.max_v + by.max_v) / unit_roundoff(dt);
  const auto ox = encoder_attention(enc, dt, c, x, c.positions, o.failure);
  const auto oy = encoder_attention(enc, dt, c, y, c.positions, o.failure);
  if (!o.failure.empty()) return o;
  const std::vector<float> past_x(ox.begin(), ox.begin() + static_cast<std::ptrdiff_t>((cut + 1) * w));
  const std::vector<float> past_y(oy.begin(), oy.begin() + static_cast<std::ptrdiff_t>((cut + 1) * w));
  o.error_u = max_abs_diff_u(past_x, past_y, dt, scale, &o.where);
  o.where += fmt::format(" (tokens 0..{} of {})", cut, c.n());
  return o;
}

}  // namespace
}  // namespace attention_causal_future_independence_detail

Property attention_causal_future_independence() {
  using namespace attention_causal_future_independence_detail;
  return make_property<AttentionCase>(
      {.id = "attention.causal_future_independence",
       .statement = "With a causal mask, the outputs of tokens 0..c do not change when any token after c changes.",
       .family = Family::attention,
       .op = Op::attention,
       .pinnable = true},
      cases, check);
}

}  // namespace pecheck::props
