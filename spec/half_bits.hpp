// Exact decoding of IEEE binary16 and bfloat16 bit patterns into double, and correctly rounded
// encoding back: the storage of the interfaces that take bits rather than floats (NPY and
// safetensors files, the plugin ABI). Written out by bit fields (not via float/_Float16) so that
// subnormals, signed zeros, infinities and NaNs behave the same on every compiler and target.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace pecheck {

namespace detail {

/// Value of a binary floating-point pattern with `exp_bits` exponent bits and `man_bits` stored
/// significand bits. Exact: every such value with exp_bits <= 11, man_bits <= 52 is a double.
inline double decode_binary(std::uint32_t bits, int exp_bits, int man_bits) {
  const std::uint32_t man = bits & ((1u << man_bits) - 1);
  const std::uint32_t exp = (bits >> man_bits) & ((1u << exp_bits) - 1);
  const bool negative = (bits >> (man_bits + exp_bits)) & 1u;
  const int bias = (1 << (exp_bits - 1)) - 1;
  double a;
  if (exp == (1u << exp_bits) - 1) {
    a = man == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  } else if (exp == 0) {
    a = std::ldexp(static_cast<double>(man), 1 - bias - man_bits);  // subnormal or zero
  } else {
    a = std::ldexp(static_cast<double>(man | (1u << man_bits)), static_cast<int>(exp) - bias - man_bits);
  }
  return negative ? -a : a;
}

/// Rounds x to the nearest pattern of the format (ties to even), overflowing to infinity. NaN
/// becomes the quiet NaN with x's sign.
inline std::uint32_t encode_binary(double x, int exp_bits, int man_bits) {
  const std::uint32_t sign = std::signbit(x) ? 1u << (man_bits + exp_bits) : 0u;
  const std::uint32_t exp_all = ((1u << exp_bits) - 1) << man_bits;
  if (std::isnan(x)) return sign | exp_all | (1u << (man_bits - 1));
  const double a = std::fabs(x);
  const int bias = (1 << (exp_bits - 1)) - 1;
  if (a >= std::ldexp(1.0, bias + 1)) return sign | exp_all;  // includes infinity
  if (a == 0) return sign;
  // Count a in units of the format's spacing at a's binade (the subnormal spacing below the
  // smallest normal); scaling by a power of two is exact, so the rounding below is the only one.
  const int e = std::max(std::ilogb(a), 1 - bias);
  const double n = std::ldexp(a, man_bits - e);
  double r = std::floor(n);
  const double frac = n - r;  // exact
  if (frac > 0.5 || (frac == 0.5 && std::fmod(r, 2.0) != 0)) r += 1;
  // Below the smallest normal, e is pinned to the minimum exponent and the units are the subnormal
  // significand. In both cases a carry out of the significand bumps the exponent field (up to the
  // infinity pattern), so one formula serves.
  return sign | ((static_cast<std::uint32_t>(e + bias - 1) << man_bits) + static_cast<std::uint32_t>(r));
}

}  // namespace detail

/// Exact value of an IEEE binary16 pattern.
inline double f16_to_double(std::uint16_t bits) { return detail::decode_binary(bits, 5, 10); }

/// Exact value of a bfloat16 pattern (the top half of a binary32).
inline double bf16_to_double(std::uint16_t bits) { return detail::decode_binary(bits, 8, 7); }

/// Nearest binary16 pattern (ties to even; beyond the largest finite value, infinity).
inline std::uint16_t double_to_f16(double x) { return static_cast<std::uint16_t>(detail::encode_binary(x, 5, 10)); }

/// Nearest bfloat16 pattern (ties to even; beyond the largest finite value, infinity).
inline std::uint16_t double_to_bf16(double x) { return static_cast<std::uint16_t>(detail::encode_binary(x, 8, 7)); }

}  // namespace pecheck
