// Theorem: a NaN in one input dim of RoPE shows up in exactly the dims that depend on it (both
// dims of its rotated pair, or the pass-through dim alone) and nowhere else.
// Doc: docs/properties/rope.nan_parity.md
#include "harness/runner.hpp"
#include "properties/catalogue.hpp"
#include "properties/rope/rope_cases.hpp"

namespace pecheck::props {

namespace rope_nan_parity_detail {
namespace {

rc::Gen<RopeCase> cases(DType) { return rope_case_gen(gen::positions(2)); }

Outcome check(Encoder& enc, DType dt, const RopeCase& c) {
  Outcome o;
  const auto x = gen::values(c.data, 1, c.size(), dt);
  const std::size_t hd = static_cast<std::size_t>(c.spec.head_dim);
  const std::size_t poisoned_at = c.data % x.size();  // token, head and dim chosen by the data seed
  const std::size_t head_start = poisoned_at - poisoned_at % hd, k = poisoned_at % hd;
  const std::size_t partner = pair_partner(c.spec, k);
  auto xn = x;
  xn[poisoned_at] = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> clean = x, dirty = xn;
  enc.run(RopeApply{c.spec, dt, c.heads, c.positions, clean});
  enc.run(RopeApply{c.spec, dt, c.heads, c.positions, dirty});
  for (std::size_t i = 0; i < x.size(); ++i) {
    const bool should_be_nan = i == head_start + k || i == head_start + partner;
    if (should_be_nan && !std::isnan(dirty[i])) {
      o.failure = fmt::format("NaN at input {} (dim {}) did not reach output {} (dim {}): got {}", poisoned_at, k, i,
                              i % hd, dirty[i]);
      return o;
    }
    if (!should_be_nan && !(dirty[i] == clean[i] || (std::isnan(dirty[i]) && std::isnan(clean[i])))) {
      o.failure =
          fmt::format("NaN at input {} (dim {}) leaked to output {} (dim {}): {} where the NaN-free call gave {}",
                      poisoned_at, k, i, i % hd, dirty[i], clean[i]);
      return o;
    }
  }
  return o;
}

}  // namespace
}  // namespace rope_nan_parity_detail

Property rope_nan_parity() {
  using namespace rope_nan_parity_detail;
  return make_property<RopeCase>(
      {.id = "rope.nan_parity",
       .statement = "A NaN in one input dim reaches exactly the dims of its rotated pair (or itself) and nothing else.",
       .family = Family::rope,
       .op = Op::rope_apply,
       .pinnable = true,
       .calls_at_case_positions = true},
      cases, check);
}

}  // namespace pecheck::props
