// Theorem: an infinity in one input dim of RoPE makes that dim's output non-finite (cos of an
// integer angle is never 0) and changes no output outside its rotated pair; a pass-through dim
// keeps the very same infinity.
// Doc: docs/properties/rope.inf_parity.md
#include <bit>
#include <limits>

#include "harness/runner.hpp"
#include "properties/catalogue.hpp"
#include "properties/rope/rope_cases.hpp"

namespace pecheck::props {

namespace rope_inf_parity_detail {
namespace {

rc::Gen<RopeCase> cases(DType) { return rope_case_gen(gen::positions(2)); }

Outcome check(Encoder& enc, DType dt, const RopeCase& c) {
  Outcome o;
  const auto x = gen::values(c.data, 1, c.size(), dt);
  const std::size_t hd = static_cast<std::size_t>(c.spec.head_dim);
  const std::size_t at = c.data % x.size(), head_start = at - at % hd, k = at % hd;
  const bool rotated = k < static_cast<std::size_t>(c.spec.rotary_dim);
  const std::size_t partner = pair_partner(c.spec, k);
  const float inf = (c.data / 7) % 2 ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
  auto xi = x;
  xi[at] = inf;
  std::vector<float> clean = x, dirty = xi;
  enc.run(RopeApply{c.spec, dt, c.heads, c.positions, clean});
  enc.run(RopeApply{c.spec, dt, c.heads, c.positions, dirty});
  const std::string what = fmt::format("{} at input {} (dim {}, {})", inf, at, k, rotated ? "rotated" : "pass-through");
  if (rotated && std::isfinite(dirty[at])) {
    o.failure = fmt::format("{} vanished: output {:.9g}", what, dirty[at]);
    return o;
  }
  if (!rotated && std::bit_cast<std::uint32_t>(dirty[at]) != std::bit_cast<std::uint32_t>(inf)) {
    o.failure = fmt::format("{} did not pass through unchanged: got {}", what, dirty[at]);
    return o;
  }
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (i == at || i == head_start + partner) continue;
    if (std::bit_cast<std::uint32_t>(dirty[i]) != std::bit_cast<std::uint32_t>(clean[i])) {
      o.failure = fmt::format("{} leaked to output {} (dim {}): {} where the finite call gave {}", what, i, i % hd,
                              dirty[i], clean[i]);
      return o;
    }
  }
  return o;
}

}  // namespace
}  // namespace rope_inf_parity_detail

Property rope_inf_parity() {
  using namespace rope_inf_parity_detail;
  return make_property<RopeCase>(
      {.id = "rope.inf_parity",
       .statement = "An infinite input dim stays non-finite and changes nothing outside its rotated pair.",
       .family = Family::rope,
       .op = Op::rope_apply,
       .pinnable = true,
       .calls_at_case_positions = true},
      cases, check);
}

}  // namespace pecheck::props
