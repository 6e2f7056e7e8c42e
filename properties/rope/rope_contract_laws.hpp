// The bounds of RoPE's relational laws under a weaker accuracy contract (dtype-trig, fp32-angles):
// each call is taken to be within its pairs' contract bounds at its own positions (what
// rope.agrees_with_reference checks under that contract), and a law that compares calls adds those
// bounds up, pair by pair (docs/error-model.md, "The relational laws under a contract"). Under the
// exact contract the laws keep their own constants (harness/tolerance.hpp).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "harness/rope_measure.hpp"
#include "harness/tolerance.hpp"
#include "properties/rope/rope_cases.hpp"
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
double score_contract_bound(tol::Contract c, DType dt, const RopeSpec& s, const measure::ContractBounds& bounds,
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
inline double score_contract_bound(tol::Contract c, DType dt, const RopeSpec& s, const measure::ContractBounds& bounds,
                                   const float* q, const float* k, std::int64_t a, std::int64_t b) {
  return score_contract_bound(
      c, dt, s, bounds, q, k, [a](int) { return a; }, [b](int) { return b; });
}

/// A law comparing the scores of two calls, each <R~ q, R~ k> at its own positions, both equal
/// exactly: the two scores' contract bounds, and the dot products in double (2 head_dim u64 each,
/// as tol::rope_relative charges them).
inline double two_scores_contract_bound(tol::Contract c, DType dt, const RopeSpec& s,
                                        const measure::ContractBounds& bounds, const float* q, const float* k,
                                        std::int64_t m, std::int64_t n, std::int64_t m2, std::int64_t n2) {
  return score_contract_bound(c, dt, s, bounds, q, k, m, n) + score_contract_bound(c, dt, s, bounds, q, k, m2, n2) +
         2 * s.head_dim * tol::kU64 / unit_roundoff(dt);
}

/// R~_b(R~_a x) against R~_(a+b) x on pair p, in u |x_p|: e_p(a) + e_p(b) + e_p(a + b) +
/// u e_p(a) e_p(b) (the second rotation sees the first's error grown by at most e_p(a) u).
inline double composition_contract_bound(tol::Contract c, DType dt, const measure::ContractBounds& bounds, int p,
                                         std::int64_t a, std::int64_t b) {
  const double ea = bounds.at(c, p, a), eb = bounds.at(c, p, b);
  return ea + eb + bounds.at(c, p, a + b) + unit_roundoff(dt) * ea * eb;
}

/// Two calls whose exact results are equal, compared pair by pair, in u |x_p|: each call's bound
/// at its own position, added (no product term: neither call sees the other's output). For
/// R~^(lin,s)_(s m) x against R~_m x the scaled call's bound is at s m with its frequencies divided
/// by s (the same angle, one more rounding, which the contract's frequency term already counts);
/// for NTK against plain RoPE at the equivalent base both are at m.
inline double two_calls_contract_bound(tol::Contract c, const measure::ContractBounds& first,
                                       const measure::ContractBounds& second, int p, std::int64_t first_at,
                                       std::int64_t second_at) {
  return first.at(c, p, first_at) + second.at(c, p, second_at);
}

/// Two calls of one case whose exact results are equal (`a` and `b`, from the input x), judged
/// pair by pair against `bound_of(token, pair)` under contract c: the case reports the pair closest
/// to its bound, at the token's position (named `position_name` in the text), and is trivial where
/// every pair's bound is past any two rotations' distance (2 |x_p|): nothing could fail there.
template <class BoundOf>
Outcome two_calls_under_contract(tol::Contract c, DType dt, const RopeCase& rc, const std::vector<float>& x,
                                 const std::vector<float>& a, const std::vector<float>& b, BoundOf bound_of,
                                 const char* position_name) {
  Outcome o = against_pair_bounds(rc.spec, rc.heads, dt, x, as_double(a), as_double(b), 1.0, bound_of,
                                  [&](std::size_t token, int, double bound) {
                                    return fmt::format("{}={}, the {} contract's bound there {:.4g} u", position_name,
                                                       rc.positions[token], tol::contract_name(c), bound);
                                  });
  double least = std::numeric_limits<double>::infinity();
  for (std::size_t t = 0; t < rc.positions.size(); ++t)
    for (int p = 0; p < rc.spec.rotary_dim / 2; ++p) least = std::min(least, bound_of(t, p));
  o.trivial = least >= 2 / unit_roundoff(dt);
  return o;
}

}  // namespace pecheck::props
