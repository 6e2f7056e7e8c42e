// Theorem: attention is a function: the same inputs give bitwise the same output, call after call.
// Doc: docs/properties/attention.determinism.md
#include <bit>

#include "harness/runner.hpp"
#include "properties/attention/attention_cases.hpp"
#include "properties/catalogue.hpp"

namespace pecheck::props {

namespace attention_determinism_detail {
namespace {

rc::Gen<AttentionCase> cases(DType dt) { return attention_case_gen(dt, all_attention_pes(), true, 1); }

Outcome check(Encoder& enc, DType dt, const AttentionCase& c) {
  Outcome o;
  const AttentionData x = attention_data(c, dt);
  const auto first = encoder_attention(enc, dt, c, x, c.positions, o.failure);
  const auto second = encoder_attention(enc, dt, c, x, c.positions, o.failure);
  if (!o.failure.empty()) return o;
  for (std::size_t i = 0; i < first.size(); ++i)
    if (std::bit_cast<std::uint32_t>(first[i]) != std::bit_cast<std::uint32_t>(second[i])) {
      o.failure = fmt::format("output {} differs between two identical calls: {} then {}", i, first[i], second[i]);
      return o;
    }
  return o;
}

}  // namespace
}  // namespace attention_determinism_detail

Property attention_determinism() {
  using namespace attention_determinism_detail;
  return make_property<AttentionCase>({.id = "attention.determinism",
                                       .statement = "The same inputs give bitwise the same output, call after call.",
                                       .family = Family::attention,
                                       .op = Op::attention,
                                       .pinnable = true},
                                      cases, check);
}

}  // namespace pecheck::props
