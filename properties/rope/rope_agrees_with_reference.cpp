// Theorem: every rotated pair is within E = 2u |x_p| (normwise) of the exact rotation by
// pos * base^(-2p/rotary_dim), for both layouts, partial rotary, every position below 2^24.
// Doc: docs/properties/rope.agrees_with_reference.md
#include "harness/runner.hpp"
#include "harness/tolerance.hpp"
#include "properties/catalogue.hpp"
#include "properties/rope/rope_cases.hpp"

namespace pecheck::props {

namespace rope_agrees_with_reference_detail {
namespace {

rc::Gen<RopeCase> cases(DType) { return rope_case_gen(gen::positions(3)); }

Outcome check(Encoder& enc, DType dt, const RopeCase& c, const RunParams& params) {
  Outcome o{.bound_u = tol::rope_pair(dt)};
  const auto x = gen::edge_values(c.data, 1, c.size(), dt, static_cast<std::size_t>(c.spec.head_dim));
  const auto y = encoder_rope(enc, dt, c, x, c.positions, o.failure);
  if (!o.failure.empty()) return o;
  auto exact = to_real(x);
  ref::rope_apply<Real>(c.spec, c.heads, c.positions, std::span<Real>(exact));
  const std::vector<double> exact_d = to_doubles(exact);
  if (params.contract != tol::Contract::exact)
    return under_contract(params.contract, dt, c.spec, c.heads, x, y, exact_d, c.spec.magnitude(),
                          [&](std::size_t token, int) { return c.positions[token]; });
  const WorstOf worst = worst_pair_error(c, dt, x, as_double(y), exact_d, c.spec.magnitude());
  return worst.store(o);
}

}  // namespace
}  // namespace rope_agrees_with_reference_detail

Property rope_agrees_with_reference() {
  using namespace rope_agrees_with_reference_detail;
  return make_property<RopeCase>(
      {.id = "rope.agrees_with_reference",
       .statement = "Every rotated pair is within 2u|x_p| of the exact rotation, at every position below 2^24.",
       .family = Family::rope,
       .op = Op::rope_apply,
       .pinnable = true,
       .calls_at_case_positions = true},
      cases, check);
}

}  // namespace pecheck::props
