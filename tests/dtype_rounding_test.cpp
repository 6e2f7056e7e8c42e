// round_to / representable against an independent decoding of every bf16 and f16 bit pattern:
// each value is a fixed point, each midpoint rounds to the even neighbour, overflow happens
// exactly at the IEEE rounding boundary. Every error metric of pecheck is in units of these
// formats, so a rounding bug here would silently shift every tolerance.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "spec/dtype.hpp"

namespace {

using pecheck::DType;
using pecheck::representable;
using pecheck::round_to;

/// The layout of a binary interchange format, decoded here without touching spec/dtype.hpp.
struct Format {
  DType dtype;
  int exp_bits;
  int man_bits;
  const char* name;

  int bias() const { return (1 << (exp_bits - 1)) - 1; }
  std::uint32_t patterns() const { return 1u << (1 + exp_bits + man_bits); }
  std::uint32_t exp_field(std::uint32_t b) const { return (b >> man_bits) & ((1u << exp_bits) - 1); }
  bool finite(std::uint32_t b) const { return exp_field(b) != (1u << exp_bits) - 1; }

  /// Value of a finite pattern: (-1)^s * m * 2^(e - bias - man_bits), with the hidden bit for e >
  /// 0.
  double decode(std::uint32_t b) const {
    const std::uint32_t m = b & ((1u << man_bits) - 1), e = exp_field(b);
    const bool neg = (b >> (exp_bits + man_bits)) & 1u;
    const double mag = e == 0 ? std::ldexp(double(m), 1 - bias() - man_bits)
                              : std::ldexp(double(m | (1u << man_bits)), int(e) - bias() - man_bits);
    return neg ? -mag : mag;
  }
  /// Largest finite value: all-ones mantissa under the largest finite exponent.
  double max_finite() const { return decode(((((1u << exp_bits) - 2) << man_bits)) | ((1u << man_bits) - 1)); }
};

constexpr Format kBF16{DType::bf16, 8, 7, "bf16"};
constexpr Format kF16{DType::f16, 5, 10, "f16"};
constexpr Format kFormats[] = {kBF16, kF16};

// Compares as doubles so that -0 vs +0 is not hidden by float equality (signbit is checked apart).
double rt(const Format& f, double x) { return static_cast<double>(round_to(f.dtype, x)); }

TEST(DtypeRounding, EveryFinitePatternIsAFixedPoint) {
  for (const Format& f : kFormats) {
    int checked = 0;
    for (std::uint32_t b = 0; b < f.patterns(); ++b) {
      if (!f.finite(b)) continue;
      const double v = f.decode(b);
      ASSERT_EQ(rt(f, v), v) << f.name << " bits 0x" << std::hex << b;
      ASSERT_EQ(std::signbit(rt(f, v)), std::signbit(v)) << f.name << " sign of 0x" << std::hex << b;
      ASSERT_TRUE(representable(f.dtype, static_cast<float>(v))) << f.name << " 0x" << std::hex << b;
      ++checked;
    }
    // 2^16 patterns minus the two (sign) all-ones exponents with their 2^man_bits mantissas.
    EXPECT_EQ(checked, int(f.patterns() - 2 * (1u << f.man_bits))) << f.name;
  }
}

TEST(DtypeRounding, Bf16BitsRoundTripThroughTheTopHalfOfAFloat) {
  for (std::uint32_t b = 0; b < kBF16.patterns(); ++b) {
    if (!kBF16.finite(b)) continue;
    const auto bits = static_cast<std::uint16_t>(b);
    ASSERT_EQ(static_cast<double>(pecheck::bf16_from_bits(bits)), kBF16.decode(b)) << std::hex << b;
    ASSERT_EQ(pecheck::bf16_bits(pecheck::bf16_from_bits(bits)), bits) << std::hex << b;
  }
}

// Between patterns b and b+1 of the same sign: the tie goes to the even pattern (also across a
// binade, where the all-ones mantissa is odd and the next power of two is even), and anything
// off the tie by the smallest double step goes to the nearer neighbour.
TEST(DtypeRounding, MidpointsTieToEvenAndNeighboursRoundToNearer) {
  for (const Format& f : kFormats) {
    const std::uint32_t sign = 1u << (f.exp_bits + f.man_bits);
    for (std::uint32_t b = 0; b + 1 < sign; ++b) {
      if (!f.finite(b + 1)) continue;
      for (std::uint32_t s : {0u, sign}) {
        const double a = f.decode(s | b), c = f.decode(s | (b + 1));
        const double mid = (a + c) / 2;  // exact: one bit more than the format
        const double even = (b % 2 == 0) ? a : c;
        ASSERT_EQ(rt(f, mid), even) << f.name << " tie between 0x" << std::hex << (s | b) << " and next";
        ASSERT_FALSE(representable(f.dtype, static_cast<float>(mid))) << f.name << " mid " << mid;
        const double toward_a = std::nextafter(mid, a), toward_c = std::nextafter(mid, c);
        ASSERT_EQ(rt(f, toward_a), a) << f.name << " just inside a of 0x" << std::hex << (s | b);
        ASSERT_EQ(rt(f, toward_c), c) << f.name << " just inside c of 0x" << std::hex << (s | b);
        // A quarter of the gap is far from any tie: also nearer, whatever the rounding of mid.
        ASSERT_EQ(rt(f, a + (c - a) / 4), a) << f.name;
        ASSERT_EQ(rt(f, c - (c - a) / 4), c) << f.name;
      }
    }
  }
}

TEST(DtypeRounding, TiesAtZeroKeepTheSignOfZero) {
  for (const Format& f : kFormats) {
    const double tiny = f.decode(1);  // smallest subnormal
    EXPECT_EQ(rt(f, tiny / 2), 0.0) << f.name;
    EXPECT_FALSE(std::signbit(rt(f, tiny / 2))) << f.name;
    EXPECT_EQ(rt(f, -tiny / 2), 0.0) << f.name;
    EXPECT_TRUE(std::signbit(rt(f, -tiny / 2))) << f.name << ": -tiny/2 must round to -0";
    EXPECT_EQ(rt(f, 0.75 * tiny), tiny) << f.name;
    EXPECT_EQ(rt(f, 1.5 * tiny), 2 * tiny) << f.name << ": 1.5 ulp ties to the even 2 ulp";
  }
}

// f16 subnormals are multiples of 2^-24 up to 2^-14; the spacing is absolute there, not relative.
TEST(DtypeRounding, F16SubnormalsHaveAbsoluteSpacing) {
  EXPECT_EQ(kF16.decode(1), 0x1p-24);
  for (int k = 0; k <= 2048; ++k) {
    const double x = k * 0x1p-24;  // up to 2^-13: crosses into the first normal binade
    EXPECT_EQ(rt(kF16, x), x) << k;
    // A quarter of the 2^-24 spacing: always below the tie, in the subnormals as above them.
    EXPECT_EQ(rt(kF16, x + 0x1p-26), x) << k;
  }
  // In the first normal binade [2^-14, 2^-13) the spacing is still 2^-24; above it, 2^-23.
  EXPECT_EQ(rt(kF16, 0x1p-13 + 0x1p-24), 0x1p-13) << "tie to even at the binade above";
  EXPECT_EQ(rt(kF16, 0x1p-13 + 3 * 0x1p-24), 0x1p-13 + 0x1p-22) << "tie to even (odd neighbour below)";
  EXPECT_EQ(rt(kF16, 0x1p-30), 0.0);
  EXPECT_EQ(pecheck::min_normal(DType::f16), kF16.decode(1u << 10));
}

// IEEE round-to-nearest overflows exactly when the value, rounded with an unbounded exponent,
// exceeds the max finite: at and beyond max + half an ulp, never below it.
TEST(DtypeRounding, OverflowOnlyBeyondTheRoundingBoundary) {
  EXPECT_EQ(kF16.max_finite(), 65504.0);
  EXPECT_EQ(kBF16.max_finite(), 0x1.fep127);
  const double inf = std::numeric_limits<double>::infinity();
  for (const Format& f : kFormats) {
    const double max = f.max_finite();
    const double half_ulp = std::ldexp(1.0, std::ilogb(max) - f.man_bits - 1);
    const double boundary = max + half_ulp;  // 65520 for f16
    for (double sgn : {1.0, -1.0}) {
      EXPECT_EQ(rt(f, sgn * max), sgn * max) << f.name;
      EXPECT_EQ(rt(f, sgn * std::nextafter(boundary, 0.0)), sgn * max) << f.name;
      EXPECT_EQ(rt(f, sgn * (max + half_ulp / 2)), sgn * max) << f.name;
      EXPECT_EQ(rt(f, sgn * boundary), sgn * inf) << f.name << ": the tie goes to the even 2^(emax+1)";
      EXPECT_EQ(rt(f, sgn * std::nextafter(boundary, inf)), sgn * inf) << f.name;
      EXPECT_EQ(rt(f, sgn * 2 * max), sgn * inf) << f.name;
      EXPECT_EQ(rt(f, sgn * 1e300), sgn * inf) << f.name;
      EXPECT_EQ(rt(f, sgn * inf), sgn * inf) << f.name;
    }
  }
  EXPECT_EQ(rt(kF16, 65519.0), 65504.0);
  EXPECT_EQ(rt(kF16, 65520.0), inf);
}

TEST(DtypeRounding, NanStaysNanInEveryFormat) {
  const double nans[] = {std::numeric_limits<double>::quiet_NaN(), -std::numeric_limits<double>::quiet_NaN()};
  for (DType t : pecheck::kAllDTypes)
    for (double x : nans) {
      EXPECT_TRUE(std::isnan(round_to(t, x))) << pecheck::dtype_name(t);
      EXPECT_TRUE(representable(t, static_cast<float>(x))) << pecheck::dtype_name(t);
    }
}

// An independent bf16 rounding in integers (the usual add-0x7FFF-plus-lsb trick) over a stride
// of all float bit patterns: normals, subnormals and the overflow to infinity.
TEST(DtypeRounding, Bf16MatchesIntegerRoundingOfFloats) {
  for (std::uint64_t b = 0; b <= 0xFFFFFFFFull; b += 4099) {
    const auto bits = static_cast<std::uint32_t>(b);
    const float x = std::bit_cast<float>(bits);
    if (std::isnan(x)) continue;
    const std::uint32_t r = (bits + 0x7FFFu + ((bits >> 16) & 1u)) & 0xFFFF0000u;
    const float expected = std::isinf(x) ? x : std::bit_cast<float>(r);
    ASSERT_EQ(static_cast<double>(round_to(DType::bf16, x)), static_cast<double>(expected))
        << "float bits 0x" << std::hex << bits;
    ASSERT_EQ(representable(DType::bf16, x), (bits & 0xFFFFu) == 0) << "float bits 0x" << std::hex << bits;
  }
}

TEST(DtypeRounding, F32IsTheFloatConversion) {
  for (double x : {1.0 + 0x1p-24, 1.0 + 3 * 0x1p-24, 0x1p-149 / 2, 0x1p-149 * 0.75, 3.4028235677973366e38})
    EXPECT_EQ(round_to(DType::f32, x), static_cast<float>(x)) << x;
  EXPECT_EQ(round_to(DType::f32, 1.0 + 0x1p-24), 1.0f) << "tie to even";
  EXPECT_TRUE(std::isinf(round_to(DType::f32, 0x1p128)));
  EXPECT_TRUE(representable(DType::f32, 0x1p-149f));
}

// The units of every error: u = 2^-p with p the significand bits including the hidden one, and
// the smallest normal, below which errors are absolute.
TEST(DtypeRounding, UnitRoundoffAndMinNormal) {
  EXPECT_EQ(pecheck::unit_roundoff(DType::f32), std::ldexp(1.0, -24));
  EXPECT_EQ(pecheck::unit_roundoff(DType::bf16), std::ldexp(1.0, -(kBF16.man_bits + 1)));
  EXPECT_EQ(pecheck::unit_roundoff(DType::f16), std::ldexp(1.0, -(kF16.man_bits + 1)));
  for (const Format& f : kFormats) {
    // u is half the spacing at 1: 1 + u is the tie that rounds back to 1, 1 + 2u is the next value.
    const double u = pecheck::unit_roundoff(f.dtype);
    EXPECT_EQ(rt(f, 1 + u), 1.0) << f.name;
    EXPECT_EQ(rt(f, 1 + 2 * u), 1 + 2 * u) << f.name;
    EXPECT_EQ(pecheck::min_normal(f.dtype), f.decode(1u << f.man_bits)) << f.name;
  }
  EXPECT_EQ(pecheck::min_normal(DType::f32), static_cast<double>(std::numeric_limits<float>::min()));
}

}  // namespace
