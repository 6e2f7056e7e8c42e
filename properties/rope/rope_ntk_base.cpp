// Theorem: NTK-aware scaling by s is plain RoPE with base b s^(d/(d-2)), and dynamic NTK at length
// L is plain RoPE with base b (s L / L0 - (s - 1))^(d/(d-2)) when L > L0 and with b itself when
// L <= L0 (d = rotary_dim); under a weaker contract, within the two calls' contract bounds.
// Doc: docs/properties/rope.ntk_base.md
#include <cmath>

#include "harness/runner.hpp"
#include "harness/tolerance.hpp"
#include "properties/catalogue.hpp"
#include "properties/rope/rope_cases.hpp"
#include "properties/rope/rope_contract_laws.hpp"

namespace pecheck::props {

namespace rope_ntk_base_detail {
namespace {

rc::Gen<RopeCase> cases(DType) {
  return rope_case_gen(gen::positions(3), rope_spec_scaled_as({RopeScalingKind::ntk, RopeScalingKind::dynamic_ntk}));
}

/// The base the rule is equivalent to, formed in long double and rounded once.
double equivalent_base(const RopeSpec& s) {
  const RopeScaling& sc = s.scaling;
  const long double d = s.rotary_dim, exponent = d / (d - 2);
  long double stretch = sc.factor;
  if (sc.kind == RopeScalingKind::dynamic_ntk) {
    if (sc.seq_len <= sc.original_max_position) return s.base;
    stretch = sc.factor * static_cast<long double>(sc.seq_len) / static_cast<long double>(sc.original_max_position) -
              (sc.factor - 1);
  }
  return static_cast<double>(static_cast<long double>(s.base) * std::pow(stretch, exponent));
}

Outcome check(Encoder& enc, DType dt, const RopeCase& c, const RunParams& params) {
  Outcome o{.bound_u = tol::rope_base_law(dt)};
  RopeCase plain = c;
  plain.spec.scaling = {};
  plain.spec.base = equivalent_base(c.spec);
  const auto x = gen::values(c.data, 1, c.size(), dt);
  const auto scaled = encoder_rope(enc, dt, c, x, c.positions, o.failure);
  const auto direct = encoder_rope(enc, dt, plain, x, c.positions, o.failure);
  if (!o.failure.empty()) return o;
  const std::string against = fmt::format(" [vs plain RoPE with base {:.17g}]", plain.spec.base);
  if (params.contract != tol::Contract::exact) {
    // Each call within its pairs' contract bounds at m (the scaled call's exponent weighed at the
    // base b' it stands for), both exact values equal up to b''s rounding to double: the two
    // bounds added pair by pair, and that rounding's share as under the exact contract.
    const measure::ContractBounds scaled_bounds(dt, c.spec), plain_bounds(dt, plain.spec);
    const double rounding = tol::rope_base_rounding(dt);
    const auto bound_of = [&](std::size_t token, int p) {
      return two_calls_contract_bound(params.contract, scaled_bounds, plain_bounds, p, c.positions[token],
                                      c.positions[token]) +
             rounding;
    };
    Outcome u = two_calls_under_contract(params.contract, dt, c, x, scaled, direct, bound_of, "pos");
    u.where += against;
    return u;
  }
  const WorstOf worst = worst_pair_error(c, dt, x, as_double(scaled), as_double(direct), 1.0);
  o.error_u = worst.value;
  o.where = worst.where + against;
  return o;
}

}  // namespace
}  // namespace rope_ntk_base_detail

Property rope_ntk_base() {
  using namespace rope_ntk_base_detail;
  return make_property<RopeCase>(
      {.id = "rope.ntk_base",
       .statement = "NTK scaling by s is RoPE with base b s^(d/(d-2)); dynamic NTK at length L <= L0 is plain RoPE, "
                    "past L0 RoPE with base b (s L/L0 - s + 1)^(d/(d-2)).",
       .family = Family::rope,
       .op = Op::rope_apply},
      cases, check);
}

}  // namespace pecheck::props
