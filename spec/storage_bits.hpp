// The bit patterns of fp16 values, for the interfaces that take storage rather than floats (the
// plugin ABI). bf16's are in dtype.hpp.
#pragma once

#include <cmath>
#include <cstdint>

#include "spec/dtype.hpp"

namespace pecheck {

/// IEEE binary16 bits of a float, rounded to fp16 first (exact for an fp16 value).
inline std::uint16_t f16_bits(float value) {
  const double x = round_to(DType::f16, value);
  const std::uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  if (std::isnan(x)) return sign | 0x7E00;
  if (std::isinf(x)) return sign | 0x7C00;
  const double a = std::fabs(x);
  if (a == 0) return sign;
  const int e = std::ilogb(a);
  if (e < -14) return sign | static_cast<std::uint16_t>(std::ldexp(a, 24));  // subnormal: m 2^-24
  return sign | static_cast<std::uint16_t>((e + 15) << 10) | static_cast<std::uint16_t>(std::ldexp(a, 10 - e) - 1024);
}

inline float f16_from_bits(std::uint16_t b) {
  const int exponent = (b >> 10) & 0x1F, mantissa = b & 0x3FF;
  double a;
  if (exponent == 0)
    a = std::ldexp(mantissa, -24);
  else if (exponent == 31)
    a = mantissa ? NAN : INFINITY;
  else
    a = std::ldexp(mantissa + 1024, exponent - 25);
  return static_cast<float>(b & 0x8000 ? -a : a);
}

}  // namespace pecheck
