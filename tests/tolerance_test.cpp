// The tolerance model: bounds are at least the rounding they must allow, grow with the sizes
// they depend on, and are small enough that the real bugs' errors exceed them.
#include "harness/tolerance.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "impl/angles.hpp"

namespace pecheck {
namespace {

TEST(Tolerance, EntryBoundsAllowOneRoundingAndNoMore) {
  for (DType t : kAllDTypes) {
    // A correctly rounded entry is within 0.5u absolute (|pe| < 1) and a pair within 1u
    // relative; the contract adds one more u for the angle, not more.
    EXPECT_GE(tol::sinusoidal_entry(t), 0.5);
    EXPECT_GE(tol::rope_pair(t), 1.0);
    EXPECT_LE(tol::rope_pair(t), 2.0);
    EXPECT_GE(tol::learned_add(t), 1.0);
    EXPECT_LT(tol::learned_add(t), 1.1);
    EXPECT_GE(tol::alibi_bias(t), 1.0);
    EXPECT_GE(tol::shaw_score(t, 64), 1.0);
  }
}

TEST(Tolerance, BoundsGrowWithTheSizesTheyDependOn) {
  EXPECT_LT(tol::sinusoidal_gram(DType::f32, 8), tol::sinusoidal_gram(DType::f32, 256));
  EXPECT_LT(tol::shaw_score(DType::f32, 8), tol::shaw_score(DType::f32, 256));
  tol::AttentionMagnitudes small{.n = 4, .dot_length = 16, .head_dim = 16, .scale = 0.25, .max_weighted = 4};
  tol::AttentionMagnitudes large = small;
  large.n = 64;
  EXPECT_LT(tol::attention_output(small), tol::attention_output(large));
  large = small;
  large.max_weighted = 40;
  EXPECT_LT(tol::attention_output(small), tol::attention_output(large));
}

TEST(Tolerance, StorageRoundingDominatesInBf16) {
  // In bf16 the fp32 arithmetic is 2^-16 of a unit: the bound is the output rounding plus little.
  tol::AttentionMagnitudes c{
      .dtype = DType::bf16, .n = 8, .dot_length = 64, .head_dim = 64, .scale = 0.125, .max_weighted = 20};
  EXPECT_GE(tol::attention_output(c), 1.0);
  EXPECT_LT(tol::attention_output(c), 1.1);
}

TEST(Tolerance, Fp32AnglesBreakTheRopeContractBeyondPosition4096) {
  // The naive fp32 angle pos * inv_freq is off by up to ~pos * 2^-24 rad; at 4096 that is far
  // above the 2u contract, while the accurate angles stay far below it.
  const double u = unit_roundoff(DType::f32);
  for (std::int64_t pos : {4096, 131072, (1 << 24) - 1}) {
    const float inv = 1.0f / std::pow(10000.0f, 2.0f / 128.0f);
    const long double exact = static_cast<long double>(pos) * std::pow(10000.0L, -2.0L / 128.0L);
    const double naive_err = std::fabs(static_cast<long double>(static_cast<float>(pos) * inv) - exact) / u;
    EXPECT_GT(naive_err, 100 * tol::rope_pair(DType::f32)) << "pos " << pos;
    const auto sc = angles::sincos(pos, angles::frequency(1, 128, 1e4));
    const double accurate_err = std::fabs(static_cast<long double>(sc.s) - std::sin(exact)) / u;
    EXPECT_LT(accurate_err, 0.01) << "pos " << pos;
  }
}

TEST(Tolerance, TableRowsAreComplete) {
  EXPECT_GE(tol::table().size(), 11u);
  for (const auto& e : tol::table()) {
    EXPECT_FALSE(e.metric.empty()) << e.id;
    EXPECT_FALSE(e.formula.empty()) << e.id;
    EXPECT_FALSE(e.reason.empty()) << e.id;
  }
}

}  // namespace
}  // namespace pecheck
