// Storage dtypes and their unit roundoff; exact rounding of a double into each storage format.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>

namespace pecheck {

/// Storage format of an encoder's inputs and outputs. Arithmetic may be wider.
enum class DType { f32, bf16, f16 };

inline constexpr DType kAllDTypes[] = {DType::f32, DType::bf16, DType::f16};

inline std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::f32:
      return "f32";
    case DType::bf16:
      return "bf16";
    case DType::f16:
      return "f16";
  }
  return "?";
}

inline DType parse_dtype(std::string_view s) {
  for (DType t : kAllDTypes)
    if (dtype_name(t) == s) return t;
  throw std::invalid_argument("unknown dtype '" + std::string(s) + "' (expected f32, bf16 or f16)");
}

/// Unit roundoff u = 2^-p of the storage format (half an ulp at 1): the unit of every error.
inline double unit_roundoff(DType t) {
  switch (t) {
    case DType::f32:
      return 0x1p-24;
    case DType::bf16:
      return 0x1p-8;
    case DType::f16:
      return 0x1p-11;
  }
  return 0;
}

/// Smallest positive normal number of the format; below it rounding is absolute, not relative.
inline double min_normal(DType t) { return t == DType::f16 ? 0x1p-14 : 0x1p-126; }

namespace detail {
/// Rounds x to `bits` significant bits (round to nearest, ties to even) with exponent range
/// [emin, emax] of a binary format; subnormals below 2^emin keep an absolute spacing.
inline double round_to_format(double x, int bits, int emin, int emax) {
  if (!std::isfinite(x) || x == 0) return x;
  int e = std::ilogb(x);
  if (e < emin) e = emin;
  const double spacing = std::ldexp(1.0, e - (bits - 1));
  const double r = std::nearbyint(x / spacing) * spacing;  // exact scaling by a power of two
  const double max_finite = std::ldexp(2.0 - std::ldexp(1.0, 1 - bits), emax);
  if (std::fabs(r) > max_finite) return std::copysign(std::numeric_limits<double>::infinity(), x);
  return r;
}
}  // namespace detail

/// Rounds a double to the nearest value of the storage format (ties to even), returned as float.
/// Every value of every format is exactly representable as a float, so float carries all three.
inline float round_to(DType t, double x) {
  switch (t) {
    case DType::f32:
      return static_cast<float>(x);
    case DType::bf16:
      return static_cast<float>(detail::round_to_format(x, 8, -126, 127));
    case DType::f16:
      return static_cast<float>(detail::round_to_format(x, 11, -14, 15));
  }
  return 0;
}

/// True when the float is a value of the format (what an encoder must return).
inline bool representable(DType t, float x) {
  return std::isnan(x) || static_cast<double>(round_to(t, x)) == static_cast<double>(x);
}

/// bf16 bits of a float that is already a bf16 value (the top 16 bits).
inline std::uint16_t bf16_bits(float x) { return std::bit_cast<std::uint32_t>(x) >> 16; }
inline float bf16_from_bits(std::uint16_t b) { return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16); }

}  // namespace pecheck
