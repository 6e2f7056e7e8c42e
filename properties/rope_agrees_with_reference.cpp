// Theorem: every rotated pair is within E = 2u |x_p| (normwise) of the exact rotation by
// pos * base^(-2p/rotary_dim), for both layouts, partial rotary, every position below 2^24.
// Doc: docs/properties/rope.agrees_with_reference.md
#include "harness/runner.hpp"
#include "harness/tolerance.hpp"
#include "properties/catalogue.hpp"
#include "properties/rope_cases.hpp"

namespace pecheck::props {

namespace rope_agrees_with_reference_detail {
namespace {

rc::Gen<RopeCase> cases(DType) { return rope_case_gen(gen::positions(3)); }

/// Under a weaker accuracy contract (RunParams::rope_contract: dtype-trig, fp32-angles) each pair
/// has its own bound, growing with the angle it turns (harness/tolerance.hpp): the case reports the
/// pair that comes closest to its bound, its error and that bound.
Outcome under_contract(tol::RopeContract contract, DType dt, const RopeCase& c, const std::vector<float>& x,
                       const std::vector<float>& y, const std::vector<double>& exact) {
  Outcome o;
  const RopeSpec& s = c.spec;
  const measure::ContractBounds bounds(dt, s);
  WorstOf worst;  // of error / bound
  double error = 0, bound = tol::rope_pair_contract(contract, dt, 0, 0);
  const std::vector<double> got = as_double(y);
  measure::rope_errors(
      s, c.heads, dt, x, got, exact, s.magnitude(),
      [&](const measure::PairError& e) {
        const std::int64_t pos = c.positions[e.token];
        const double b = bounds.at(contract, e.pair, pos);
        worst.offer(e.error_u / b, [&] {
          error = e.error_u, bound = b;
          return fmt::format("token {} head {} pair {} (dims {},{}) pos={}, the {} contract's bound there {:.4g} u",
                             e.token, e.head, e.pair, e.i, e.j, pos, tol::contract_name(contract), b);
        });
      },
      [&](const measure::ChangedPassThrough& p) {
        worst.offer(std::numeric_limits<double>::infinity(), [&] {
          error = std::numeric_limits<double>::infinity();
          return fmt::format("token {} head {} pass-through dim {} changed: {:.9g} -> {:.9g}", p.token, p.head, p.dim,
                             p.expected, p.got);
        });
      });
  o.error_u = error, o.bound_u = bound, o.where = worst.where;
  return o;
}

Outcome check(Encoder& enc, DType dt, const RopeCase& c, const RunParams& params) {
  Outcome o{.bound_u = tol::rope_pair(dt)};
  const auto x = gen::edge_values(c.data, 1, c.size(), dt, static_cast<std::size_t>(c.spec.head_dim));
  const auto y = encoder_rope(enc, dt, c, x, c.positions, o.failure);
  if (!o.failure.empty()) return o;
  auto exact = to_real(x);
  ref::rope_apply<Real>(c.spec, c.heads, c.positions, std::span<Real>(exact));
  const std::vector<double> exact_d = to_doubles(exact);
  if (params.rope_contract != tol::RopeContract::exact)
    return under_contract(params.rope_contract, dt, c, x, y, exact_d);
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
       .pinnable = true},
      cases, check);
}

}  // namespace pecheck::props
