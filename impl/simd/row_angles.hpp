// The sinusoid kernels' angles, written once over a vector of double lanes D (a width trait's D:
// AVX2's 4, AVX-512's 8) and included by sinusoid_body.hpp (an unnamed namespace: each unit its own
// copy, built for its own ISA).
//
// sin and cos of (16 h + l) f for every frequency, from per-call tables of l = 0..15 and the
// current h: the angle-addition formulas cost 4 double operations per D::W frequencies where a
// direct sincos costs ~25, and each factor is within ~2^-44, so the product is within ~2^-43.
// Consecutive positions share h for 16 rows; arbitrary positions recompute it when it changes.
#pragma once

#include <cstdint>

#include "impl/simd/calls.hpp"
#include "impl/simd/math.hpp"

namespace pecheck::simd {

namespace {

template <class D>
class RowAngles {
 public:
  explicit RowAngles(const SinusoidalCall& c) : c_(c), P_((c.f.count + D::W - 1) / D::W * D::W) {
    for (std::size_t l = 0; l < kLow; ++l) fill(static_cast<double>(l), lo_s() + l * P_, lo_c() + l * P_);
  }
  /// Makes sin/cos of position p available to at(); returns the low part l.
  std::size_t seek(std::int64_t p) {
    const std::int64_t h = p >> 4;  // floor division: p = 16 h + l with 0 <= l < 16 also for p < 0
    if (h != h_) {
      fill(static_cast<double>(h * 16), hi_s(), hi_c());
      h_ = h;
    }
    return static_cast<std::size_t>(p & 15);
  }
  /// sin and cos of frequencies [i, i + W) at the position seek() returned l for.
  SinCos<D> at(std::size_t l, std::size_t i) const {
    const typename D::R hs = D::load(hi_s() + i), hc = D::load(hi_c() + i);
    const typename D::R ls = D::load(lo_s() + l * P_ + i), lc = D::load(lo_c() + l * P_ + i);
    return {D::fmadd(hs, lc, D::mul(hc, ls)), D::fmsub(hc, lc, D::mul(hs, ls))};
  }

 private:
  static constexpr std::size_t kLow = 16;
  void fill(double pos, double* s, double* c) const {
    const typename D::R p = D::set1(pos);
    for (std::size_t i = 0; i < P_; i += D::W) {  // the frequency arrays are padded to 8
      const SinCos<D> sc = sincos<D>(p, D::load(c_.f.hi + i), D::load(c_.f.lo + i));
      D::store(s + i, sc.s);
      D::store(c + i, sc.c);
    }
  }
  double* hi_s() const { return c_.scratch; }
  double* hi_c() const { return c_.scratch + P_; }
  double* lo_s() const { return c_.scratch + 2 * P_; }
  double* lo_c() const { return c_.scratch + (2 + kLow) * P_; }
  const SinusoidalCall& c_;
  std::size_t P_;
  std::int64_t h_ = INT64_MIN;
};

}  // namespace

}  // namespace pecheck::simd
