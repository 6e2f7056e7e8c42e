// Theorem: PE(p + k) = M(k) PE(p) with M(k) block-diagonal 2x2 rotations that do not depend on p
// (checked as w_i(p+k) conj(w_i(p)) = w_i(q+k) conj(w_i(q)) for each sin/cos pair i; under a weaker
// contract, within the four rows' contract bounds on that pair).
// Doc: docs/properties/sinusoidal.shift_linearity.md
#include "harness/runner.hpp"
#include "harness/tolerance.hpp"
#include "properties/catalogue.hpp"
#include "properties/absolute/sinusoid_contract_laws.hpp"
#include "properties/absolute/sinusoidal_cases.hpp"

namespace pecheck::props {

namespace sinusoidal_shift_linearity_detail {
namespace {

/// positions = {p, p + k, q, q + k}, all in [0, 2^24), k != 0.
rc::Gen<SinusoidalCase> cases(DType) {
  return rc::gen::apply(
      [](SinusoidalSpec s, std::int64_t p, std::int64_t q, std::int64_t k) {
        k = gen::nonzero_shift({&p, &q}, k);
        return SinusoidalCase{s, {p, p + k, q, q + k}};
      },
      sinusoidal_spec_gen(), gen::position(), gen::position(), gen::position());
}

Outcome check(Encoder& enc, DType dt, const SinusoidalCase& c, const RunParams& params) {
  // k = 0 compares |w(p)|^2 with |w(q)|^2: a norm check, not the shift.
  Outcome o{.bound_u = tol::sinusoidal_shift(dt), .trivial = c.positions[1] == c.positions[0]};
  const auto rows = encoder_rows(enc, dt, c.spec, c.positions, o.failure);
  if (!o.failure.empty()) return o;
  const bool exact = params.contract == tol::Contract::exact;
  const SinusoidContractBounds bounds(dt, c.spec);
  WorstOf worst;  // of error / bound
  double error = 0, bound = o.bound_u, least = std::numeric_limits<double>::infinity();
  for (int i = 0; i < c.spec.d_model / 2; ++i) {
    // M(k) restricted to pair i, seen from p and from q: w(p+k) conj(w(p)) vs w(q+k) conj(w(q)).
    const Phasor a = phasor(c.spec, rows, 0, i), b = phasor(c.spec, rows, 1, i);
    const Phasor x = phasor(c.spec, rows, 2, i), y = phasor(c.spec, rows, 3, i);
    const double re1 = b.re * a.re + b.im * a.im, im1 = b.im * a.re - b.re * a.im;
    const double re2 = y.re * x.re + y.im * x.im, im2 = y.im * x.re - y.re * x.im;
    const double err = std::hypot(re1 - re2, im1 - im2) / unit_roundoff(dt);
    // Under a weaker contract each pair has its own bound (its four entries' at their positions).
    const double pb = exact ? o.bound_u : shift_contract_bound(params.contract, dt, bounds, i, c.positions);
    least = std::min(least, pb);
    worst.offer(err / pb, [&] {
      error = err, bound = pb;
      return fmt::format(
          "pair {} (rotation by k seen from p: ({:.9g}, {:.9g}), from q: ({:.9g}, {:.9g})){}", i, re1, im1, re2, im2,
          exact ? ""
                : fmt::format(", the {} contract's bound there {:.4g} u", tol::contract_name(params.contract), pb));
    });
  }
  o.error_u = error, o.bound_u = bound, o.where = worst.where;
  // Two unit phasors' products lie within 2 of each other: a bound past that could not fail.
  o.trivial = o.trivial || (!exact && least >= 2 / unit_roundoff(dt));
  return o;
}

}  // namespace
}  // namespace sinusoidal_shift_linearity_detail

Property sinusoidal_shift_linearity() {
  using namespace sinusoidal_shift_linearity_detail;
  return make_property<SinusoidalCase>(
      {.id = "sinusoidal.shift_linearity",
       .statement = "PE(p+k) = M(k) PE(p) with M(k) block-diagonal 2x2 rotations independent of p.",
       .family = Family::sinusoidal,
       .op = Op::sinusoidal_table,
       .pinnable = true},
      cases, check);
}

}  // namespace pecheck::props
