// Theorem: rotations compose additively, R_b(R_a x) = R_{a+b} x, for every layout, base and
// rotary_dim.
// Doc: docs/properties/rope.composition.md
#include "harness/runner.hpp"
#include "harness/tolerance.hpp"
#include "properties/catalogue.hpp"
#include "properties/rope/rope_cases.hpp"
#include "properties/rope/rope_contract_laws.hpp"

namespace pecheck::props {

namespace rope_composition_detail {
namespace {

/// positions = {a, b, a + b}, all in [0, 2^24), b != 0; every token of x gets the same position.
rc::Gen<RopeCase> cases(DType) {
  return rc::gen::map(rope_case_gen(gen::positions(2)), [](RopeCase c) {
    c.positions[1] = gen::nonzero_shift({&c.positions[0]}, c.positions[1]);
    c.positions.push_back(c.positions[0] + c.positions[1]);
    return c;
  });
}

Outcome check(Encoder& enc, DType dt, const RopeCase& c, const RunParams& params) {
  // b = 0 checks only R_0 = I, which rope.offset_invariance and rope.inverse already state.
  Outcome o{.bound_u = tol::rope_composition(dt), .trivial = c.positions[1] == 0};
  // One token of `heads` heads, rotated three ways.
  RopeCase one = c;
  one.positions = {c.positions[0]};
  const auto x = gen::values(c.data, 1, one.size(), dt);
  const auto ya = encoder_rope(enc, dt, one, x, {c.positions[0]}, o.failure);
  const auto yab = encoder_rope(enc, dt, one, ya, {c.positions[1]}, o.failure);
  const auto direct = encoder_rope(enc, dt, one, x, {c.positions[2]}, o.failure);
  if (!o.failure.empty()) return o;
  // With YaRN's factor m, R_b R_a = m R_(a+b) on the rotated dims.
  const double m = c.spec.magnitude();
  const std::string calls = fmt::format(" [R_{} R_{} x vs R_{} x]", c.positions[1], c.positions[0], c.positions[2]);
  if (params.contract != tol::Contract::exact) {
    // Each pair against its own bound: the three calls' contract bounds at their positions.
    const measure::ContractBounds bounds(dt, c.spec);
    Outcome u = against_pair_bounds(
        one.spec, one.heads, dt, x, as_double(yab), rotated_times(one, direct, m), m * m,
        [&](std::size_t, int p) {
          return composition_contract_bound(params.contract, dt, bounds, p, c.positions[0], c.positions[1]);
        },
        [&](std::size_t, int, double b) {
          return fmt::format("the {} contract's bound there {:.4g} u", tol::contract_name(params.contract), b);
        });
    u.where += calls;
    // Where every pair's bound is past any rotation's distance from another (2 |x_p|), nothing
    // could have failed.
    double least = std::numeric_limits<double>::infinity();
    for (int p = 0; p < c.spec.rotary_dim / 2; ++p)
      least =
          std::min(least, composition_contract_bound(params.contract, dt, bounds, p, c.positions[0], c.positions[1]));
    u.trivial = o.trivial || least >= 2 / unit_roundoff(dt);
    return u;
  }
  const WorstOf worst = worst_pair_error(one, dt, x, as_double(yab), rotated_times(one, direct, m), m * m);
  o.error_u = worst.value;
  o.where = worst.where + calls;
  return o;
}

}  // namespace
}  // namespace rope_composition_detail

Property rope_composition() {
  using namespace rope_composition_detail;
  return make_property<RopeCase>({.id = "rope.composition",
                                  .statement = "R_b(R_a x) = R_(a+b) x: rotating by a then by b is rotating by a + b.",
                                  .family = Family::rope,
                                  .op = Op::rope_apply,
                                  .pinnable = true},
                                 cases, check);
}

}  // namespace pecheck::props
