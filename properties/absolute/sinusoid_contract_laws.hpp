// The bounds of the sinusoid's relational laws under a weaker contract (dtype-trig, fp32-angles):
// each entry of a table is taken to be within its own contract bound at its position (what
// sinusoidal.agrees_with_reference checks under that contract), and a law comparing rows adds those
// bounds up as its exact-contract derivation adds E (docs/error-model.md,
// "sinusoidal.relational.contract"). Under the exact contract the laws keep their own constants.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "harness/measure.hpp"  // Real
#include "harness/tolerance.hpp"
#include "reference/real.hpp"
#include "reference/sinusoidal.hpp"
#include "spec/conventions.hpp"
#include "spec/dtype.hpp"

namespace pecheck::props {

/// Each sin/cos pair's contract bound at a position, in u (absolute: entries are in [-1, 1]).
class SinusoidContractBounds {
 public:
  SinusoidContractBounds(DType dt, const SinusoidalSpec& s) : dt_(dt), spec_(s) {
    for (const Real& f : ref::sinusoidal_frequencies<Real>(s)) freq_.push_back(ref::to_double(f));
    for (int i = 0; i < s.d_model / 2; ++i)
      exponent_.push_back(std::fabs(2.0 * i / s.frequency_width() * std::log(s.base)));
  }
  /// Both entries of pair i at pos (the padding row is zeros in every contract: nothing rounds).
  double at(tol::Contract c, int i, std::int64_t pos) const {
    if (spec_.is_padding(pos)) return tol::sinusoidal_entry(dt_);
    const std::size_t k = static_cast<std::size_t>(i);
    return tol::sinusoidal_entry_contract(c, dt_, std::fabs(static_cast<double>(pos) * freq_[k]), exponent_[k]);
  }
  /// |PE~(pos) - PE(pos)| / u over the whole row: the entries' bounds in quadrature.
  double row(tol::Contract c, std::int64_t pos) const {
    double sum = 0;
    for (int i = 0; i < spec_.d_model / 2; ++i) sum += 2 * at(c, i, pos) * at(c, i, pos);
    return std::sqrt(sum);
  }

 private:
  DType dt_;
  SinusoidalSpec spec_;
  std::vector<double> freq_, exponent_;
};

/// sinusoidal.shift_linearity on pair i, in u: each phasor within sqrt(2) e u of a unit one, so
/// one product w(b) conj(w(a)) within sqrt(2) (e_a + e_b) u + 2 e_a e_b u^2, and two products whose
/// exact values are equal within the sum of theirs (positions p, p + k, q, q + k).
inline double shift_contract_bound(tol::Contract c, DType dt, const SinusoidContractBounds& b, int i,
                                   const std::vector<std::int64_t>& positions) {
  const double u = unit_roundoff(dt);
  const double e0 = b.at(c, i, positions[0]), e1 = b.at(c, i, positions[1]), e2 = b.at(c, i, positions[2]),
               e3 = b.at(c, i, positions[3]);
  return std::sqrt(2.0) * (e0 + e1 + e2 + e3) + 2 * u * (e0 * e1 + e2 * e3);
}

/// sinusoidal.offset_inner_product, in u: a row PE(a) + D_a with |D_a| <= N_a u (row()) and
/// |PE(a)| = sqrt(d/2), so one Gram entry within (N_a + N_b) sqrt(d/2) u + N_a N_b u^2; two whose
/// exact values are equal within the sum of theirs, plus the dot products in double (d u64 each).
/// Positions p, q, p + t, q + t.
inline double gram_contract_bound(tol::Contract c, DType dt, const SinusoidContractBounds& b, int d_model,
                                  const std::vector<std::int64_t>& positions) {
  const double u = unit_roundoff(dt), norm = std::sqrt(d_model / 2.0);
  const auto one = [&](std::int64_t a, std::int64_t bpos) {
    const double na = b.row(c, a), nb = b.row(c, bpos);
    return (na + nb) * norm + u * na * nb;
  };
  return one(positions[0], positions[1]) + one(positions[2], positions[3]) + 2 * d_model * tol::kU64 / u;
}

}  // namespace pecheck::props
