// Theorem: R_{-m} undoes R_m: rotating to position m and then to -m gives x back, for every
// layout, base and rotary_dim.
// Doc: docs/properties/rope.inverse.md
#include "harness/runner.hpp"
#include "harness/tolerance.hpp"
#include "properties/catalogue.hpp"
#include "properties/rope/rope_cases.hpp"

namespace pecheck::props {

namespace rope_inverse_detail {
namespace {

/// One position m per token; the inverse rotates each token by -m.
rc::Gen<RopeCase> cases(DType) { return rope_case_gen(gen::positions(2)); }

Outcome check(Encoder& enc, DType dt, const RopeCase& c, const RunParams& params) {
  // Under a weaker contract each rotation is within dtype-trig's bound: fp32 angles cancel, since
  // the angle of -m is exactly minus the angle of m (cos even, sin odd).
  const bool exact = params.contract == tol::Contract::exact;
  Outcome o{.bound_u = exact ? tol::rope_inverse(dt) : tol::rope_inverse(dt, tol::rope_pair_dtype_trig(dt))};
  const auto x = gen::values(c.data, 1, c.size(), dt);
  std::vector<std::int64_t> negated(c.positions);
  for (auto& p : negated) p = -p;
  const auto y = encoder_rope(enc, dt, c, x, c.positions, o.failure);
  const auto back = encoder_rope(enc, dt, c, y, negated, o.failure);
  if (!o.failure.empty()) return o;
  // With YaRN's factor m, R_(-m) R_m = m^2 I on the rotated dims.
  const double m = c.spec.magnitude();
  return worst_pair_error(c, dt, x, as_double(back), rotated_times(c, x, m * m), m * m).store(o);
}

}  // namespace
}  // namespace rope_inverse_detail

Property rope_inverse() {
  using namespace rope_inverse_detail;
  return make_property<RopeCase>({.id = "rope.inverse",
                                  .statement = "R_(-m) R_m x = x: rotating to m and back to -m returns x.",
                                  .family = Family::rope,
                                  .op = Op::rope_apply,
                                  .pinnable = true},
                                 cases, check);
}

}  // namespace pecheck::props
