// Theorem: attention with a relative encoding (ALiBi, Shaw, T5, RoPE) depends only on position
// differences: shifting every position by t leaves the output unchanged.
// Doc: docs/properties/attention.translation_invariance.md
#include <algorithm>

#include "harness/runner.hpp"
#include "properties/attention/attention_cases.hpp"
#include "properties/catalogue.hpp"

namespace pecheck::props {

namespace attention_translation_invariance_detail {
namespace {

/// The shift t is drawn from the perm seed, kept so that every shifted position is below 2^24, or
/// within the run's max_position (a table's length, or a contract's ceiling).
rc::Gen<AttentionCase> cases(DType dt) {
  return attention_case_gen(dt, {AttentionPE::alibi, AttentionPE::shaw, AttentionPE::rope, AttentionPE::t5}, true, 1);
}

Outcome check(Encoder& enc, DType dt, const AttentionCase& c, const RunParams& params) {
  const AttentionData x = attention_data(c, dt);
  const std::int64_t top = params.max_position ? std::min(params.max_position, tol::kMaxPosition) : tol::kMaxPosition;
  const std::int64_t room = top - c.positions.back();
  // Never 0 (a call compared with itself); the generator leaves room for at least 1.
  const std::int64_t t = room > 0 ? 1 + static_cast<std::int64_t>(c.perm % static_cast<std::uint64_t>(room)) : 0;
  AttentionCase shifted = c;
  for (auto& p : shifted.positions) p += t;
  const AttentionBound b0 = attention_bound(c, dt, x, params.contract),
                       bt = attention_bound(shifted, dt, x, params.contract);
  // Both outputs are within their bound of the same exact output; the metrics' scales max|V'|
  // agree because V is not position-transformed by these encodings.
  Outcome o{.bound_u = b0.bound_u + bt.bound_u, .trivial = t == 0 || admits_any_output(b0.bound_u + bt.bound_u, dt)};
  const auto out0 = encoder_attention(enc, dt, c, x, c.positions, o.failure);
  const auto outt = encoder_attention(enc, dt, c, x, shifted.positions, o.failure);
  if (!o.failure.empty()) return o;
  o.error_u = max_abs_diff_u(outt, out0, dt, b0.max_v, &o.where);
  o.where += fmt::format(" (shift {})", t);
  return o;
}

}  // namespace
}  // namespace attention_translation_invariance_detail

Property attention_translation_invariance() {
  using namespace attention_translation_invariance_detail;
  return make_property<AttentionCase>(
      {.id = "attention.translation_invariance",
       .statement = "With ALiBi, Shaw, T5 or RoPE, shifting every position by the same t leaves the output unchanged.",
       .family = Family::attention,
       .op = Op::attention,
       .pinnable = true},
      cases, check);
}

}  // namespace pecheck::props
