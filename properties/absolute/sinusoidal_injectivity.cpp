// Theorem: the sinusoid is injective on any window of L consecutive positions: distinct rows are
// at least delta_L = min_{0<k<L} 2 sqrt(sum_i sin^2(k w_i / 2)) apart, and delta_L > 0 because
// w_0 = 1 and no k < L <= 96 is a multiple of 2 pi (under a weaker contract, with each row's
// contract bounds as the slack).
// Doc: docs/properties/sinusoidal.injectivity.md
#include <cmath>

#include "harness/runner.hpp"
#include "harness/tolerance.hpp"
#include "properties/catalogue.hpp"
#include "properties/absolute/sinusoid_contract_laws.hpp"
#include "properties/absolute/sinusoidal_cases.hpp"

namespace pecheck::props {

namespace sinusoidal_injectivity_detail {
namespace {

/// d_model >= 8 and a window [start, start + L) of 2..96 consecutive positions below 2^24.
rc::Gen<SinusoidalCase> cases(DType) {
  return rc::gen::apply(
      [](SinusoidalSpec s, int length, std::int64_t start) {
        s.d_model = std::max(s.d_model, 8);
        std::vector<std::int64_t> p(static_cast<std::size_t>(length));
        for (std::size_t i = 0; i < p.size(); ++i) p[i] = std::min(start, tol::kMaxPosition - 96) + std::int64_t(i);
        return SinusoidalCase{s, p};
      },
      sinusoidal_spec_gen(), rc::gen::inRange(2, 97), gen::position());
}

/// delta_L from the spec's frequencies, in long double (k w_i / 2 < 48 rad: sinl is exact enough).
long double min_distance(const SinusoidalSpec& s, std::size_t length) {
  std::vector<long double> w(static_cast<std::size_t>(s.d_model / 2));  // once, not once per offset k
  for (int i = 0; i < s.d_model / 2; ++i)
    w[static_cast<std::size_t>(i)] = std::pow(static_cast<long double>(s.base), -2.0L * i / s.frequency_width());
  long double best = INFINITY;
  for (std::size_t k = 1; k < length; ++k) {
    long double sum = 0;
    for (int i = 0; i < s.d_model / 2; ++i) {
      const long double h = std::sin(static_cast<long double>(k) * w[static_cast<std::size_t>(i)] / 2);
      sum += h * h;
    }
    best = std::min(best, 2 * std::sqrt(sum));
  }
  return best;
}

/// How far pair (a, b)'s distance may fall short of delta_L, in u: each row within N(pos) u of the
/// exact one in norm, so the distance within N(a) + N(b), plus the distance formed in double
/// (docs/error-model.md, sinusoidal.distance). N is E sqrt(d) under the exact contract (the constant
/// tol::sinusoidal_distance), each row's entry bounds in quadrature under a weaker one.
class DistanceBounds {
 public:
  DistanceBounds(DType dt, const SinusoidalSpec& s, const std::vector<std::int64_t>& positions, tol::Contract c)
      : exact_(c == tol::Contract::exact), constant_(tol::sinusoidal_distance(dt, s.d_model)) {
    if (exact_) return;
    const SinusoidContractBounds bounds(dt, s);
    for (std::int64_t pos : positions) row_.push_back(bounds.row(c, pos));
    in_double_ = tol::sinusoidal_distance_in_double(dt, s.d_model);
  }
  double at(std::size_t a, std::size_t b) const { return exact_ ? constant_ : row_[a] + row_[b] + in_double_; }

 private:
  bool exact_;
  double constant_, in_double_ = 0;
  std::vector<double> row_;
};

Outcome check(Encoder& enc, DType dt, const SinusoidalCase& c, const RunParams& params) {
  const DistanceBounds bounds(dt, c.spec, c.positions, params.contract);
  Outcome o{.bound_u = bounds.at(0, 1)};
  const auto rows = encoder_rows(enc, dt, c.spec, c.positions, o.failure);
  if (!o.failure.empty()) return o;
  const double u = unit_roundoff(dt);
  const auto delta = static_cast<double>(min_distance(c.spec, c.positions.size()));
  const std::size_t d = static_cast<std::size_t>(c.spec.d_model), n = c.positions.size();
  double least_bound = INFINITY;
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = a + 1; b < n; ++b) least_bound = std::min(least_bound, bounds.at(a, b));
  if (!(delta > least_bound * u)) {
    // Under a weaker contract far out (fp32 angles), no pair's distance could fall short of what its
    // bound allows: the case is trivial. Under the exact contract this never happens for d >= 8,
    // L <= 96 (see the page): a guard, not a pass.
    if (params.contract != tol::Contract::exact) {
      o.trivial = true;
      return o;
    }
    o.failure = fmt::format("vacuous case: delta_L = {:.6g} is within the rounding slack {:.6g}", delta, o.bound_u * u);
    return o;
  }
  WorstOf worst;  // of shortfall / bound: the pair closest to its own bound is the case's measurement
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = a + 1; b < n; ++b) {
      double sq = 0;
      for (std::size_t k = 0; k < d; ++k) {
        const double diff = double{rows[a * d + k]} - rows[b * d + k];
        sq += diff * diff;
      }
      const double dist = std::sqrt(sq), bound = bounds.at(a, b), error = std::max(0.0, delta - dist) / u;
      // Ties (every pair at 0 shortfall) go to the closest pair, as the text reads best there.
      worst.offer(error > 0 ? error / bound : -dist, [&] {
        o.error_u = error, o.bound_u = bound;
        return fmt::format("rows {} and {} are {:.9g} apart; delta_L = {:.9g} for L = {}", c.positions[a],
                           c.positions[b], dist, delta, n);
      });
    }
  o.where = worst.where;
  return o;
}

}  // namespace
}  // namespace sinusoidal_injectivity_detail

Property sinusoidal_injectivity() {
  using namespace sinusoidal_injectivity_detail;
  return make_property<SinusoidalCase>(
      {.id = "sinusoidal.injectivity",
       .statement = "Rows of L <= 96 consecutive positions are pairwise at least delta_L > 0 apart (no two collide).",
       .family = Family::sinusoidal,
       .op = Op::sinusoidal_table,
       .pinnable = true},
      cases, check);
}

}  // namespace pecheck::props
