// Theorem: linear position interpolation by s is rotation at position / s: R^(lin,s)_(s m) = R_m
// for every integer factor s, layout, base and rotary_dim (under a weaker contract, within the two
// calls' contract bounds).
// Doc: docs/properties/rope.linear_scaling.md
#include "harness/runner.hpp"
#include "harness/tolerance.hpp"
#include "properties/catalogue.hpp"
#include "properties/rope/rope_cases.hpp"
#include "properties/rope/rope_contract_laws.hpp"

namespace pecheck::props {

namespace rope_linear_scaling_detail {
namespace {

/// An unscaled spec, an integer factor s (kept in spec.scaling) and positions m with s m < 2^24.
rc::Gen<RopeCase> cases(DType) {
  return rc::gen::mapcat(rope_case_gen(gen::positions(3), gen::rope_spec(256, /*scaled=*/false)), [](RopeCase c) {
    return rc::gen::map(rc::gen::element(2, 3, 4, 8, 16, 40), [c](int s) {
      RopeCase t = c;
      t.spec.scaling = {.kind = RopeScalingKind::linear, .factor = double(s)};
      for (auto& p : t.positions) p = std::min(p, tol::kMaxPosition / s);
      return t;
    });
  });
}

Outcome check(Encoder& enc, DType dt, const RopeCase& c, const RunParams& params) {
  Outcome o{.bound_u = tol::two_results(dt)};
  const auto s = static_cast<std::int64_t>(c.spec.scaling.factor);
  RopeCase plain = c;
  plain.spec.scaling = {};
  std::vector<std::int64_t> stretched(c.positions);
  for (auto& p : stretched) p *= s;
  const auto x = gen::values(c.data, 1, c.size(), dt);
  const auto scaled = encoder_rope(enc, dt, c, x, stretched, o.failure);
  const auto direct = encoder_rope(enc, dt, plain, x, c.positions, o.failure);
  if (!o.failure.empty()) return o;
  const std::string calls = fmt::format(" [R^(lin,{0})_({0} m) x vs R_m x]", s);
  if (params.contract != tol::Contract::exact) {
    // Each call within its pairs' contract bounds at its own position (the scaled one at s m with
    // the scaled frequencies), and both exact values equal: the two bounds added, pair by pair.
    const measure::ContractBounds scaled_bounds(dt, c.spec), plain_bounds(dt, plain.spec);
    const auto bound_of = [&](std::size_t token, int p) {
      return two_calls_contract_bound(params.contract, scaled_bounds, plain_bounds, p, stretched[token],
                                      c.positions[token]);
    };
    Outcome u = two_calls_under_contract(params.contract, dt, c, x, scaled, direct, bound_of, "m");
    u.where += calls;
    return u;
  }
  const WorstOf worst = worst_pair_error(c, dt, x, as_double(scaled), as_double(direct), 1.0);
  o.error_u = worst.value;
  o.where = worst.where + calls;
  return o;
}

}  // namespace
}  // namespace rope_linear_scaling_detail

Property rope_linear_scaling() {
  using namespace rope_linear_scaling_detail;
  return make_property<RopeCase>(
      {.id = "rope.linear_scaling",
       .statement = "Linear interpolation by s rotates position s m exactly as the unscaled RoPE rotates m.",
       .family = Family::rope,
       .op = Op::rope_apply},
      cases, check);
}

}  // namespace pecheck::props
