// Accurate angles pos * base^(-2i/dim) for positions below 2^24: the frequency is carried as a
// double-double (hi + lo, from long double), the product split exactly with an FMA, and the low
// part folded in to first order. fp32 angles are off by ~pos * 2^-24 rad (~4e3 u at pos 4096).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

// The sincos below is shared by the host backends and the CUDA kernels (impl/cuda/).
#ifdef __CUDACC__
#define PECHECK_HOST_DEVICE __host__ __device__
#else
#define PECHECK_HOST_DEVICE
#endif

namespace pecheck::angles {

static_assert(std::numeric_limits<long double>::digits >= 64,
              "accurate frequencies need an x87/quad long double (64+ bit significand)");

/// base^(-2i/dim) as hi + lo; |hi + lo - exact| <= ~2^-60 relative.
struct Frequency {
  double hi = 0, lo = 0;
};

inline Frequency frequency(int i, int dim, double base) {
  const long double f =
      std::pow(static_cast<long double>(base), -2.0L * static_cast<long double>(i) / static_cast<long double>(dim));
  const double hi = static_cast<double>(f);
  return {hi, static_cast<double>(f - static_cast<long double>(hi))};
}

/// Frequencies of pairs 0..dim/2-1; computed once per call and shared across heads and tokens.
inline std::vector<Frequency> frequencies(int dim, double base) {
  std::vector<Frequency> f(static_cast<std::size_t>(dim / 2));
  for (int i = 0; i < dim / 2; ++i) f[static_cast<std::size_t>(i)] = frequency(i, dim, base);
  return f;
}

struct SinCos {
  double s = 0, c = 1;
};

/// sin and cos of pos * f for 0 <= pos < 2^24: the angle is split as a_hi + a_lo (a_lo exact from
/// the FMA, plus pos * f.lo), then sin(a_hi + a_lo) = sin(a_hi) + a_lo cos(a_hi) + O(a_lo^2), with
/// |a_lo| <= 2^-28. The error is dominated by the frequency's own (~2^-64 relative, times pos):
/// measured against 256-bit MPFR, 2^-52.8 at pos 4096, 2^-45.5 at 2^20, 2^-41.5 at 2^24 - 1, all
/// far below the fp32 half-unit 2^-25.
PECHECK_HOST_DEVICE inline SinCos sincos(std::int64_t pos, Frequency f) {
  const double p = static_cast<double>(pos);  // exact below 2^53
  const double a_hi = p * f.hi;
  const double a_lo =
      ::fma(p, f.hi, -a_hi) + p * f.lo;  // global ::fma/::sin/::cos: libm on the host, CUDA's on the device
  const double s = ::sin(a_hi), c = ::cos(a_hi);
  return {s + a_lo * c, c - a_lo * s};
}

}  // namespace pecheck::angles
