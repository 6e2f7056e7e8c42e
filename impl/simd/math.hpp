// sin and cos of accurate angles in double, and exp in float, written once over a width's vector
// traits (impl/avx2/simd.hpp's Avx2, impl/avx512/simd.hpp's Avx512): D is a vector of D::W doubles,
// F one of F::W floats. Every width runs the same operations in the same order, so its results are
// the same bit for bit. Included only by vector units, in an unnamed namespace: each unit has its
// own copy, built for its own ISA (a shared inline copy could run AVX-512 code on an AVX2-only CPU).
#pragma once

#include <cstddef>

#include "impl/simd/polynomials.hpp"

namespace pecheck::simd {

namespace {

template <class D>
struct SinCos {
  typename D::R s, c;
};

/// sin and cos of p * (f_hi + f_lo) for |p| < 2^24. The angle is a_hi + a_lo with a_lo exact from
/// the FMA (plus p f_lo); it is reduced by k pi/2, k = nearest(a_hi 2/pi), with pi/2 split as P1
/// (29 bits, so k P1 is exact for |k| < 2^24) + P2 (their residue is 1.6e-26, times k below
/// 2^-62). On |r| <= pi/4 (a little beyond when a_hi 2/pi rounds), Taylor polynomials of degree 13
/// (sin) and 14 (cos) leave 2^-45 and 2^-49; all told the results are within ~2^-44 of the exact
/// sin and cos, far below fp32's half-unit 2^-25.
template <class D>
inline SinCos<D> sincos(typename D::R p, typename D::R f_hi, typename D::R f_lo) {
  using R = typename D::R;
  const R a_hi = D::mul(p, f_hi);
  const R a_lo = D::fmadd(p, f_lo, D::fmsub(p, f_hi, a_hi));
  const R k = D::round(D::mul(a_hi, D::set1(poly::kTwoOverPi)));
  R r = D::fnmadd(k, D::set1(poly::kHalfPi1), a_hi);
  r = D::add(D::fnmadd(k, D::set1(poly::kHalfPi2), r), a_lo);
  const R r2 = D::mul(r, r);

  R ps = D::set1(poly::kSin[0]);
#pragma GCC unroll 8
  for (std::size_t i = 1; i < sizeof poly::kSin / sizeof poly::kSin[0]; ++i)
    ps = D::fmadd(ps, r2, D::set1(poly::kSin[i]));
  const R sin_r = D::fmadd(D::mul(ps, r2), r, r);

  constexpr std::size_t kCosTerms = sizeof poly::kCos / sizeof poly::kCos[0];
  R pc = D::set1(poly::kCos[0]);
#pragma GCC unroll 8
  for (std::size_t i = 1; i + 1 < kCosTerms; ++i) pc = D::fmadd(pc, r2, D::set1(poly::kCos[i]));
  const R cos_r = D::fmadd(pc, r2, D::set1(poly::kCos[kCosTerms - 1]));

  // Quadrant q = k mod 4 from the low bits of k + 1.5 * 2^52 (two's complement, so k < 0 works):
  // sin = (sin r, cos r, -sin r, -cos r)[q], cos = (cos r, -sin r, -cos r, sin r)[q].
  const auto q = D::bits(D::add(k, D::set1(0x1.8p52)));
  const auto odd = D::odd(q);
  const R s = D::select(odd, sin_r, cos_r), c = D::select(odd, cos_r, sin_r);
  return {D::xor_(s, D::sign_of_bit1(q)), D::xor_(c, D::sign_of_bit1(D::next(q)))};
}

/// e^x in float: 2^k e^r with k = nearest(x log2 e), r = x - k ln 2 (ln 2 in two parts, the first
/// of 16 bits so k ln2_hi is exact), and the degree-7 Taylor polynomial on |r| <= ln2/2
/// (truncation 5e-9, ~0.1 u); Horner in fp32 adds ~1u. Below -87.3 the result is 0 (the weights
/// it feeds are relative to a maximum of 1); NaN stays NaN; +inf stays inf, -inf gives 0.
template <class F>
inline typename F::R exp(typename F::R x) {
  using R = typename F::R;
  const R clamped = F::min(F::set1(88.0f), x);  // min returns its second operand when either is NaN
  const R k = F::round(F::mul(clamped, F::set1(poly::kLog2e)));
  R r = F::fnmadd(k, F::set1(poly::kLn2_1), clamped);
  r = F::fnmadd(k, F::set1(poly::kLn2_2), r);
  R p = F::set1(poly::kExp[0]);
#pragma GCC unroll 8
  for (std::size_t i = 1; i < sizeof poly::kExp / sizeof poly::kExp[0]; ++i) p = F::fmadd(p, r, F::set1(poly::kExp[i]));
  // 2^k for k in [-126, 127] built in the exponent field; k = 128 (x in [88, 88.72]) as 2 * 2^127.
  R y = F::mul(p, F::pow2(F::min(k, F::set1(127.0f))));
  y = F::mul(y, F::select(F::gt(k, F::set1(127.0f)), F::set1(1.0f), F::set1(2.0f)));
  y = F::select(F::lt(x, F::set1(-87.3f)), y, F::zero());  // false for NaN
  return F::select(F::gt(x, F::set1(88.72284f)), y, F::set1(__builtin_inff()));
}

}  // namespace

}  // namespace pecheck::simd
