// The bounds of RoPE's relational laws under a weaker accuracy contract (dtype-trig, fp32-angles):
// each call is taken to be within its pairs' contract bounds at its own positions (what
// rope.agrees_with_reference checks under that contract), and a law that compares calls adds those
// bounds up, pair by pair (docs/error-model.md, "The relational laws under a contract"). Under the
// exact contract the laws keep their own constants (harness/tolerance.hpp).
#pragma once

#include <cmath>
#include <cstdint>

#include "harness/rope_measure.hpp"
#include "harness/tolerance.hpp"
#include "reference/rope.hpp"
#include "spec/conventions.hpp"
#include "spec/dtype.hpp"

namespace pecheck::props {

/// How far the score <R~_a q, R~_b k> of one head (q, k: head_dim values each) may sit from the
/// exact <R_a q, R_b k>, in u |q| |k| (times the rotations' magnitude squared, which the laws
/// divide out): sum over pairs of (e_p(a) + e_p(b) + u e_p(a) e_p(b)) |q_p| |k_p|, e_p the
/// contract's bound on pair p at that position. The pass-through dims are exact in both.
/// a_of(p) and b_of(p) are the two calls' positions for pair p (M-RoPE turns each pair by its
/// section's axis); the overload below takes one position per call.
template <class AOf, class BOf>
double score_contract_bound(tol::RopeContract c, DType dt, const RopeSpec& s, const measure::ContractBounds& bounds,
                            const float* q, const float* k, AOf a_of, BOf b_of) {
  const double u = unit_roundoff(dt);
  double sum = 0, qq = 0, kk = 0;
  for (int i = 0; i < s.head_dim; ++i) qq += double{q[i]} * q[i], kk += double{k[i]} * k[i];
  for (int p = 0; p < s.rotary_dim / 2; ++p) {
    const auto [i, j] = ref::rope_pair(s, p);
    const double ea = bounds.at(c, p, a_of(p)), eb = bounds.at(c, p, b_of(p));
    sum += (ea + eb + u * ea * eb) * std::hypot(double{q[i]}, double{q[j]}) * std::hypot(double{k[i]}, double{k[j]});
  }
  const double norms = std::sqrt(qq * kk);
  return norms > 0 ? sum / norms : 0;
}
inline double score_contract_bound(tol::RopeContract c, DType dt, const RopeSpec& s,
                                   const measure::ContractBounds& bounds, const float* q, const float* k,
                                   std::int64_t a, std::int64_t b) {
  return score_contract_bound(
      c, dt, s, bounds, q, k, [a](int) { return a; }, [b](int) { return b; });
}

/// A law comparing the scores of two calls, each <R~ q, R~ k> at its own positions, both equal
/// exactly: the two scores' contract bounds, and the dot products in double (2 head_dim u64 each,
/// as tol::rope_relative charges them).
inline double two_scores_contract_bound(tol::RopeContract c, DType dt, const RopeSpec& s,
                                        const measure::ContractBounds& bounds, const float* q, const float* k,
                                        std::int64_t m, std::int64_t n, std::int64_t m2, std::int64_t n2) {
  return score_contract_bound(c, dt, s, bounds, q, k, m, n) + score_contract_bound(c, dt, s, bounds, q, k, m2, n2) +
         2 * s.head_dim * tol::kU64 / unit_roundoff(dt);
}

/// R~_b(R~_a x) against R~_(a+b) x on pair p, in u |x_p|: e_p(a) + e_p(b) + e_p(a + b) +
/// u e_p(a) e_p(b) (the second rotation sees the first's error grown by at most e_p(a) u).
inline double composition_contract_bound(tol::RopeContract c, DType dt, const measure::ContractBounds& bounds, int p,
                                         std::int64_t a, std::int64_t b) {
  const double ea = bounds.at(c, p, a), eb = bounds.at(c, p, b);
  return ea + eb + bounds.at(c, p, a + b) + unit_roundoff(dt) * ea * eb;
}

/// R~^(lin,s)_(s m) x against R~_m x on pair p, in u |x_p|: the scaled call's bound at s m (its
/// frequencies divided by s: the same angle, one more rounding, which the contract's frequency
/// term already counts) plus the plain call's at m. Both exact values are equal; no product term,
/// since neither call sees the other's output.
inline double linear_scaling_contract_bound(tol::RopeContract c, const measure::ContractBounds& scaled,
                                            const measure::ContractBounds& plain, int p, std::int64_t stretched,
                                            std::int64_t m) {
  return scaled.at(c, p, stretched) + plain.at(c, p, m);
}

}  // namespace pecheck::props
