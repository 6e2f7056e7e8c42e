// Theorem: RoPE is a function of its inputs alone: the same call gives bitwise the same result
// whatever calls came before (a longer sequence, a larger dynamic-NTK or LongRoPE length, other positions).
// Doc: docs/properties/rope.stateless.md
#include <bit>

#include "harness/runner.hpp"
#include "harness/tolerance.hpp"
#include "properties/catalogue.hpp"
#include "properties/rope/rope_cases.hpp"

namespace pecheck::props {

namespace rope_stateless_detail {
namespace {

using K = RopeScalingKind;

/// Dynamic NTK or LongRoPE half the time (where a stateful cache is the known bug: a table built
/// for one length reused at another, transformers PR #33129), any spec otherwise.
rc::Gen<RopeCase> cases(DType) {
  const auto positions = gen::positions(3);
  return rc::gen::oneOf(rope_case_gen(positions),
                        rope_case_gen(positions, rope_spec_scaled_as({K::dynamic_ntk, K::longrope})));
}

Outcome check(Encoder& enc, DType dt, const RopeCase& c) {
  Outcome o;
  const auto x = gen::values(c.data, 1, c.size(), dt);
  const auto first = encoder_rope(enc, dt, c, x, c.positions, o.failure);
  // History: the same spec at a much longer dynamic-NTK or LongRoPE length, at other positions, on other data.
  RopeCase longer = c;
  longer.spec.scaling.seq_len = 8 * std::max(c.spec.scaling.seq_len, c.spec.scaling.original_max_position);
  std::vector<std::int64_t> elsewhere(c.positions);
  for (auto& p : elsewhere) p = gen::position_ceiling() - p;
  encoder_rope(enc, dt, longer, gen::values(c.data, 2, c.size(), dt), elsewhere, o.failure);
  const auto again = encoder_rope(enc, dt, c, x, c.positions, o.failure);
  if (!o.failure.empty()) return o;
  for (std::size_t i = 0; i < x.size(); ++i)
    if (std::bit_cast<std::uint32_t>(first[i]) != std::bit_cast<std::uint32_t>(again[i])) {
      o.failure = fmt::format(
          "output {} changed after a call with {} at other positions: {:.9g} on the first call, {:.9g} after", i,
          longer.spec.describe(), first[i], again[i]);
      return o;
    }
  return o;
}

}  // namespace
}  // namespace rope_stateless_detail

Property rope_stateless() {
  using namespace rope_stateless_detail;
  return make_property<RopeCase>(
      {.id = "rope.stateless",
       .statement = "The same RoPE call gives bitwise the same result whatever calls came before it.",
       .family = Family::rope,
       .op = Op::rope_apply,
       .convention_free = true},
      cases, check);
}

}  // namespace pecheck::props
