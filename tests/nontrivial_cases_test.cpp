// Non-trivial cases (issue 21): a case that could not fail for any wrong output (a shift of 0, a
// bound no bounded output exceeds, a pin too small to tell from 0) is counted apart, and a
// property with fewer than kMinNontrivialShare of its cases non-trivial does not pass. The
// generators that used to draw such cases now draw them at that share or better, on every seed
// tried: this file shows both halves.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "harness/encoders.hpp"
#include "harness/generators.hpp"
#include "harness/runner.hpp"
#include "harness/tolerance.hpp"
#include "properties/attention/attention_cases.hpp"
#include "properties/registry.hpp"

namespace pecheck {
namespace {

/// A case that is trivial when k < cut: the runner's bookkeeping, without any encoder arithmetic.
struct CountCase {
  int k = 0;
  std::string describe() const { return fmt::format("k={}", k); }
  std::vector<std::string> tags() const { return {}; }
};

Property counting_property(int cut) {
  return make_property<CountCase>(
      {.id = "test.counting", .statement = "k is counted.", .family = Family::rope, .op = Op::rope_apply},
      [](DType) {
        return rc::gen::map(rc::gen::resize(100, rc::gen::inRange(0, 100)), [](int k) { return CountCase{k}; });
      },
      [cut](Encoder&, DType, const CountCase& c) { return Outcome{.bound_u = 1, .trivial = c.k < cut}; });
}

std::unique_ptr<Encoder> scalar_encoder() { return make_encoder("scalar"); }

TEST(FailureMessage, AnExcessFourDigitsWouldRoundAwayIsShown) {
  // Issue 38: "error 2 u exceeds the bound 2 u" hid the excess.
  const Property p = make_property<CountCase>(
      {.id = "test.excess", .statement = "k is within 2 u.", .family = Family::rope, .op = Op::rope_apply},
      [](DType) { return rc::gen::map(rc::gen::inRange(0, 100), [](int k) { return CountCase{k}; }); },
      [](Encoder&, DType, const CountCase&) { return Outcome{.error_u = 2.00002, .bound_u = 2}; });
  const auto enc = scalar_encoder();
  const PropertyResult r = p.run(*enc, DType::f32, RunParams{.seed = 1, .cases = 5});
  EXPECT_EQ(r.verdict, Verdict::fail);
  EXPECT_TRUE(r.message.starts_with("error 2.00002 u exceeds the bound 2 u")) << r.message;
}

TEST(NontrivialCases, TheRunnerCountsThemAndRefusesAVacuousPass) {
  const auto enc = scalar_encoder();
  ASSERT_TRUE(enc);
  const RunParams params{.seed = 5, .cases = 400};
  // About a fifth of the cases trivial: below the share, so no pass.
  const PropertyResult vacuous = counting_property(20).run(*enc, DType::f32, params);
  EXPECT_EQ(vacuous.verdict, Verdict::fail);
  EXPECT_TRUE(vacuous.vacuous);
  EXPECT_EQ(vacuous.cases, 400);
  EXPECT_GT(vacuous.nontrivial_cases, 250);
  EXPECT_LT(vacuous.nontrivial_cases, 360);
  EXPECT_NE(vacuous.message.find("vacuous"), std::string::npos) << vacuous.message;
  // A few trivial cases: a pass, and the count says how many could have failed.
  const PropertyResult mostly = counting_property(3).run(*enc, DType::f32, params);
  EXPECT_EQ(mostly.verdict, Verdict::pass) << mostly.message;
  EXPECT_FALSE(mostly.vacuous);
  EXPECT_LT(mostly.nontrivial_cases, 400);
  EXPECT_GE(mostly.nontrivial_cases, kMinNontrivialShare * 400);
  // None trivial: every case counted.
  const PropertyResult all = counting_property(0).run(*enc, DType::f32, params);
  EXPECT_EQ(all.verdict, Verdict::pass);
  EXPECT_EQ(all.nontrivial_cases, 400);
}

TEST(NontrivialCases, ShiftsAreNeverZeroAndStayInRange) {
  const std::int64_t top = tol::kMaxPosition;
  std::int64_t m = top, n = 5;
  EXPECT_EQ(gen::nonzero_shift({&m, &n}, 0), -1);  // no room above: shifted down
  EXPECT_EQ(gen::nonzero_shift({&m, &n}, 100), -5);
  std::int64_t a = 0, b = top;  // the whole range: the top one moves down first
  EXPECT_EQ(gen::nonzero_shift({&a, &b}, 7), 1);
  EXPECT_EQ(b, top - 1);
  std::int64_t p = 10;
  EXPECT_EQ(gen::nonzero_shift({&p}, 0), 1);
  EXPECT_EQ(gen::nonzero_shift({&p}, top), top - 10);
}

TEST(NontrivialCases, TheLargeLogitCasesTheAttentionGeneratorNoLongerDrawsAdmitAnyOutput) {
  // The referee's case: RoPE in bf16 with Q and K scaled by 64. Its bound lets every output pass,
  // which is why bf16 and f16 no longer draw large logits with RoPE or the sinusoid.
  props::AttentionCase c;
  c.spec.heads = 1;
  c.spec.head_dim = 32;
  c.spec.pe = AttentionPE::rope;
  c.positions = {100, 101, 102, 103, 104, 105, 106, 107, 108, 109};
  c.data = 11;
  c.qk_scale = 64;
  for (DType dt : {DType::bf16, DType::f16}) {
    const auto x = props::attention_data(c, dt);
    EXPECT_TRUE(props::admits_any_output(props::attention_bound(c, dt, x, tol::Contract::exact).bound_u, dt))
        << dtype_name(dt);
  }
  c.qk_scale = 1;
  for (DType dt : {DType::f32, DType::bf16, DType::f16}) {
    const auto x = props::attention_data(c, dt);
    EXPECT_FALSE(props::admits_any_output(props::attention_bound(c, dt, x, tol::Contract::exact).bound_u, dt))
        << dtype_name(dt);
  }
}

/// The properties whose generators drew trivial cases, and those that share them.
bool once_drew_trivial_cases(const std::string& id) {
  return id == "rope.relative" || id == "rope.composition" || id == "rope.offset_invariance" ||
         id == "rope2d.relative" || id == "mrope.relative" || id == "sinusoidal.shift_linearity" ||
         id == "sinusoidal.offset_inner_product" || id == "rope.scaled_frequency_bounds" ||
         id == "alibi.causal_shift_equivalence" || id.starts_with("attention.");
}

TEST(NontrivialCases, EveryFixedGeneratorDrawsNonTrivialCasesOnEverySeedTried) {
  const auto enc = scalar_encoder();
  ASSERT_TRUE(enc);
  int checked = 0;
  for (const Property& p : property_registry()) {
    if (!once_drew_trivial_cases(p.id)) continue;
    for (DType dt : p.dtypes)
      for (std::uint64_t seed : {1, 4, 7}) {
        const PropertyResult r = p.run(*enc, dt, RunParams{.seed = seed, .cases = 300});
        ASSERT_EQ(r.verdict, Verdict::pass) << p.id << " " << dtype_name(dt) << " seed " << seed << ": " << r.message;
        // Stronger than the share: not one trivial case.
        EXPECT_EQ(r.nontrivial_cases, r.cases) << p.id << " " << dtype_name(dt) << " seed " << seed;
        ++checked;
      }
  }
  EXPECT_GT(checked, 60);  // the list above still names real properties
}

}  // namespace
}  // namespace pecheck
