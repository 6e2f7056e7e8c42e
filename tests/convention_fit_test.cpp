// Convention detection (dumpcheck/convention_fit.cpp) over random conventions: from a dump
// written by the reference and rounded once to the dtype, the fit finds a convention under which
// the dump agrees with the reference within 2u, with the rotary_dim and the pairing it was made
// with; round bases and factors come back exactly.
#include "dumpcheck/convention_fit.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdlib>
#include <random>

#include "dumpcheck/agreement.hpp"
#include "harness/rope_measure.hpp"
#include "reference/rope.hpp"
#include "reference/sinusoidal.hpp"
#include "tests/test_seed.hpp"

namespace pecheck::dumpcheck {
namespace {

[[maybe_unused]] const bool kSeeded = [] {
  const auto params = "seed=" + std::to_string(testing::test_seed());
  return setenv("RC_PARAMS", params.c_str(), /*overwrite=*/0) == 0;
}();

const std::vector<double> kBases = {10000, 500000, 1e6, 100, 25000};
const std::vector<double> kFactors = {1, 2, 4, 8};

DType any_dtype() { return *rc::gen::element(DType::f32, DType::bf16, DType::f16); }

/// Positions 0..40 (the fit needs 1 or 2), every power of two up to 2^23 and 2^24 - 1 (slow pairs
/// turn measurably only far out; a dump of an arange has all of these), then a few at random.
std::vector<std::int64_t> positions() {
  std::vector<std::int64_t> p;
  for (std::int64_t i = 0; i <= 40; ++i) p.push_back(i);
  for (int k = 6; k <= 23; ++k) p.push_back(std::int64_t{1} << k);
  p.push_back((1 << 24) - 1);
  for (auto q : *rc::gen::container<std::vector<std::int64_t>>(4, rc::gen::inRange<std::int64_t>(41, 1 << 24)))
    p.push_back(q);
  return p;
}

TEST(ConventionFit, SnapsOnlyWhatIsWithin1e4OfTwoSignificantDigits) {
  EXPECT_EQ(snap(10000.3), 10000);
  EXPECT_EQ(snap(499992.1), 500000);
  EXPECT_EQ(snap(17782.79), 17782.79);  // fairseq's 10000 seen as a Vaswani base: not round
  EXPECT_EQ(snap(8.0004), 8);
  EXPECT_EQ(snap(1.032), 1.032);
}

TEST(ConventionFit, OctavesArePowersOfTwo) {
  EXPECT_EQ(measure::octave_of(0), 0);
  EXPECT_EQ(measure::octave_of(1), 1);
  EXPECT_EQ(measure::octave_of(3), 2);
  EXPECT_EQ(measure::octave_of(4), 3);
  EXPECT_EQ(measure::octave_of((1 << 24) - 1), 24);
}

RC_GTEST_PROP(ConventionFit, ropeConventionIsFoundAgain, ()) {
  Dump d;
  d.dir = "generated";
  d.dtype = any_dtype();
  d.width = 2 * *rc::gen::inRange(2, 129);
  d.heads = *rc::gen::inRange(1, 4);
  RopeSpec s{.head_dim = d.width,
             .rotary_dim = *rc::gen::element(d.width, 2 * *rc::gen::inRange(1, d.width / 2 + 1)),
             .base = *rc::gen::elementOf(kBases),
             .layout = *rc::gen::element(RopeLayout::interleaved, RopeLayout::half_split)};
  if (const double f = *rc::gen::elementOf(kFactors); f != 1)
    s.scaling = {.kind = RopeScalingKind::linear, .factor = f};
  d.positions = positions();
  std::mt19937_64 rng(*rc::gen::arbitrary<std::uint32_t>());
  std::uniform_real_distribution<double> uniform(-1, 1);
  for (std::size_t i = 0; i < d.tokens() * static_cast<std::size_t>(d.heads * d.width); ++i)
    d.x.push_back(round_to(d.dtype, uniform(rng)));
  std::vector<double> y = d.x;
  ref::rope_apply<double>(s, d.heads, d.positions, y);
  for (double v : y) d.y.push_back(round_to(d.dtype, v));

  if (s.rotary_dim == 4 && s.scaling.kind == RopeScalingKind::linear) {
    // Two pairs, two parameters (base, factor): any two frequencies fit, so nothing confirms it.
    try {
      fit_rope(d);
      RC_FAIL("two pairs read as linear RoPE, which they cannot confirm");
    } catch (const FitError& e) {
      RC_ASSERT(std::string(e.what()).find("cannot confirm") != std::string::npos);
    }
    return;
  }
  const RopeFit f = fit_rope(d);
  RC_LOG() << s.describe() << " " << dtype_name(d.dtype) << " fitted: " << f.text << "\n";
  RC_ASSERT(f.spec.rotary_dim == s.rotary_dim);
  if (s.rotary_dim > 2) {  // one pair has no layout and no base
    RC_ASSERT(f.spec.layout == s.layout);
    RC_ASSERT(f.spec.base == s.base);
  }
  RC_ASSERT(f.spec.scaling.factor == s.scaling.factor);
  RC_ASSERT(rope_agreement(d, f.spec).holds());
}

RC_GTEST_PROP(ConventionFit, sinusoidConventionIsFoundAgain, ()) {
  Dump d;
  d.dir = "generated";
  d.kind = Kind::sinusoidal;
  d.dtype = any_dtype();
  d.width = 2 * *rc::gen::inRange(2, 129);
  const SinusoidalSpec s{
      .d_model = d.width,
      .base = *rc::gen::elementOf(kBases),
      .layout = *rc::gen::element(SinusoidalLayout::interleaved, SinusoidalLayout::concatenated),
      .frequencies = *rc::gen::element(SinusoidalFrequencies::vaswani, SinusoidalFrequencies::fairseq)};
  d.positions = positions();
  for (std::int64_t p : d.positions)
    for (double v : ref::sinusoidal_row<double>(s, p)) d.y.push_back(round_to(d.dtype, v));

  const SinusoidalFit f = fit_sinusoidal(d);
  RC_LOG() << s.describe() << " " << dtype_name(d.dtype) << " fitted: " << f.text << "\n";
  RC_ASSERT(f.spec.layout == s.layout);
  // Vaswani at base b is fairseq at b^((d-2)/d): either is the same table.
  RC_ASSERT(sinusoidal_agreement(d, f.spec).holds());
}

}  // namespace
}  // namespace pecheck::dumpcheck
