// A failing agreement names what the encoder's output does fit (dumpcheck/convention_hint.hpp):
// a layout, rotary_dim or scaling rule ignored is named as such, pinned or not; a numeric failure
// (the convention right, the arithmetic not) adds nothing; other properties add nothing, but for a
// RoPE that flushes subnormal inputs where no flush was stated.
#include "dumpcheck/convention_hint.hpp"

#include <gtest/gtest.h>

#include "harness/encoders.hpp"
#include "mutants/mutants.hpp"
#include "properties/registry.hpp"
#include "tests/test_seed.hpp"

namespace pecheck {
namespace {

RunParams hinted() {
  RunParams rp{testing::test_seed(), testing::test_cases()};
  rp.explain_failure = dumpcheck::convention_hint;
  return rp;
}

PropertyResult agreement(const std::string& mutant, DType dt, const RunParams& rp = hinted()) {
  auto e = mutants::make_mutant_named(mutant);
  return registered_property("rope.agrees_with_reference").run(*e, dt, rp);
}

class ConventionHint : public ::testing::TestWithParam<DType> {};

TEST_P(ConventionHint, AnIgnoredLayoutIsNamed) {
  const PropertyResult r = agreement("mutant-rope-always-half-split", GetParam());
  ASSERT_EQ(r.verdict, Verdict::fail);
  EXPECT_NE(r.message.find("its output fits RoPE half_split, rotary_dim 32 of 64"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("called as rope(layout=interleaved,d=64,rot=32,base=500000)"), std::string::npos)
      << r.message;
}

TEST_P(ConventionHint, AHardCodedBaseIsNamed) {
  const PropertyResult r = agreement("mutant-rope-base-1000", GetParam());
  ASSERT_EQ(r.verdict, Verdict::fail);
  EXPECT_NE(r.message.find("its output fits RoPE half_split, rotary_dim 64 of 64, base 1000"), std::string::npos)
      << r.message;
  EXPECT_NE(r.message.find("called as rope(layout=half_split,d=64,rot=64,base=10000)"), std::string::npos) << r.message;
}

TEST_P(ConventionHint, AnIgnoredRotaryDimIsNamed) {
  const PropertyResult r = agreement("mutant-rope-ignores-rotary-dim", GetParam());
  ASSERT_EQ(r.verdict, Verdict::fail);
  EXPECT_NE(r.message.find("its output fits RoPE interleaved, rotary_dim 64 of 64"), std::string::npos) << r.message;
}

TEST_P(ConventionHint, AScalingFactorAppliedTwiceIsNamed) {
  const PropertyResult r = agreement("mutant-rope-freq-scale-twice", GetParam());
  ASSERT_EQ(r.verdict, Verdict::fail);
  EXPECT_NE(r.message.find("its output fits RoPE half_split, rotary_dim 64 of 64"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("linear"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("16"), std::string::npos) << r.message;
}

TEST_P(ConventionHint, APinnedEncoderIsProbedAtItsOwnConvention) {
  RunParams rp = hinted();
  auto pins = std::make_shared<Pins>();
  pins->rope = [](RopeSpec& s) {
    s.layout = RopeLayout::interleaved;
    s.base = 10000;
    s.rotary_dim = s.head_dim;
    s.scaling = {};
  };
  rp.pins = pins;
  const PropertyResult r = agreement("mutant-rope-always-half-split", GetParam(), rp);
  ASSERT_EQ(r.verdict, Verdict::fail);
  EXPECT_NE(r.message.find("its output fits RoPE half_split, rotary_dim 64 of 64, base 10000"), std::string::npos)
      << r.message;
  EXPECT_NE(r.message.find("called as rope(layout=interleaved,d=64,rot=64,base=10000)"), std::string::npos)
      << r.message;
}

// The convention is right and the arithmetic is not (angles without range reduction): the hint
// must not send the user looking for a convention.
TEST_P(ConventionHint, ANumericFailureNamesNoConvention) {
  const PropertyResult r = agreement("mutant-rope-no-range-reduction", GetParam());
  ASSERT_EQ(r.verdict, Verdict::fail);
  EXPECT_EQ(r.message.find("fits"), std::string::npos) << r.message;
}

TEST_P(ConventionHint, ASinusoidWithSinAndCosSwappedIsSaidToBeIt) {
  auto e = mutants::make_mutant_named("mutant-sin-cos-swapped");
  const PropertyResult r = registered_property("sinusoidal.agrees_with_reference").run(*e, GetParam(), hinted());
  ASSERT_EQ(r.verdict, Verdict::fail);
  // sin where cos belongs: each pair's angle reads pi/2 - w p, whose frequencies fit no line;
  // with each pair's slots exchanged, the output is the convention called.
  EXPECT_NE(r.message.find("its output is sinusoidal(layout=interleaved,d=64,base=10000) with sin and cos swapped "
                           "in every pair"),
            std::string::npos)
      << r.message;
}

// A kernel that flushes subnormal inputs fails R_0 = I at position 0 (a subnormal returned 0);
// the failure says it flushes and how to state a platform that does. Stated, nothing is said.
TEST(ConventionHint, AFlushToZeroIsNamedWhereItIsNotStated) {
  for (DType dt : {DType::f32, DType::bf16}) {
    auto flushes = mutants::make_mutant_named("mutant-rope-flushes-subnormals");
    const PropertyResult r = registered_property("rope.orthogonal").run(*flushes, dt, hinted());
    ASSERT_EQ(r.verdict, Verdict::fail) << dtype_name(dt);
    EXPECT_NE(r.message.find("; it flushes subnormal inputs to zero"), std::string::npos) << r.message;
    EXPECT_NE(r.message.find("state it (--ftz, ftz=True, a plugin's PECHECK_FLAG_FTZ)"), std::string::npos)
        << r.message;
    RunParams stated = hinted();
    stated.ftz = true;
    EXPECT_EQ(dumpcheck::convention_hint(registered_property("rope.orthogonal"), *flushes, dt, stated), "");
  }
  // f16 holds nothing below FLT_MIN: no flush to ask about.
  auto flushes = mutants::make_mutant_named("mutant-rope-flushes-subnormals");
  EXPECT_EQ(dumpcheck::convention_hint(registered_property("rope.orthogonal"), *flushes, DType::f16, hinted()), "");
}

TEST(ConventionHint, ACorrectEncoderOrAnotherPropertyGetsNone) {
  const Property& agrees = registered_property("rope.agrees_with_reference");
  auto scalar = make_encoder("scalar");
  for (DType dt : {DType::f32, DType::bf16}) {
    EXPECT_EQ(dumpcheck::convention_hint(agrees, *scalar, dt, hinted()), "");
    EXPECT_EQ(dumpcheck::convention_hint(registered_property("rope.orthogonal"), *scalar, dt, hinted()), "");
  }
  auto wrong = mutants::make_mutant_named("mutant-rope-always-half-split");
  EXPECT_EQ(dumpcheck::convention_hint(registered_property("rope.orthogonal"), *wrong, DType::f32, hinted()), "");
}

INSTANTIATE_TEST_SUITE_P(Dtypes, ConventionHint, ::testing::Values(DType::f32, DType::bf16, DType::f16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

}  // namespace
}  // namespace pecheck
