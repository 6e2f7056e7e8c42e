// A case an encoder declines is drawn again at larger sizes (harness/runner.cpp): RapidCheck draws
// its first cases where every choice is its first (interleaved pairs, no scaling), so an encoder
// that declines that one choice used to decline the first ten cases and lose the whole property
// (issue 38: a spec-mode function with one layout lost rope.nan_parity and
// rope.scaled_frequency_bounds). Every RoPE property that needs nothing the encoder declines now
// runs its full case count and says how many drawn cases were not offered; one that needs the
// declined layout in every case is a skip naming it. A failure found after redraws names the case
// checked, not the declined ones drawn before it.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "harness/encoders.hpp"
#include "properties/registry.hpp"
#include "tests/test_seed.hpp"

namespace pecheck {
namespace {

/// The scalar backend, except that it declines the RoPE cases `declines` names (a reason), as a
/// spec-mode function that implements one layout or one rule does.
class Declines final : public Offering<RopeApply> {
 public:
  using Offering<RopeApply>::run;
  using Rule = std::function<std::optional<std::string>(const RopeSpec&)>;
  explicit Declines(Rule declines) : declines_(std::move(declines)) {}
  std::string name() const override { return "declines"; }
  Support supports(Op op, DType dt) const override { return inner_->supports(op, dt); }
  void run(const RopeApply& c) override {
    if (const auto why = declines_(c.spec)) throw Unsupported(*why);
    inner_->run(c);
  }

 private:
  Rule declines_;
  std::unique_ptr<Encoder> inner_ = make_encoder("scalar");
};

std::optional<std::string> declines_layout(const RopeSpec& s, RopeLayout layout) {
  if (s.layout == layout) return fmt::format("declines {} pairs", layout_name(layout));
  return std::nullopt;
}

/// The RoPE properties whose every case calls the encoder with both layouts.
bool needs_both_layouts(const std::string& id) { return id == "rope.layout_conjugacy"; }
/// Those whose every case calls the encoder with a scaling rule, and those whose every case
/// calls it with NTK's.
bool needs_scaling(const std::string& id) {
  return id == "rope.linear_scaling" || id == "rope.ntk_base" || id == "rope.scaled_frequency_bounds";
}
bool needs_ntk(const std::string& id) { return id == "rope.ntk_base"; }

void expect_every_property_runs(Declines& e, bool (*needs_declined)(const std::string&)) {
  RunParams rp{testing::test_seed(), testing::test_cases()};
  int full = 0;
  for (const Property& p : property_registry()) {
    if (p.op != Op::rope_apply) continue;
    const PropertyResult r = p.run(e, DType::f32, rp);
    SCOPED_TRACE(p.id + ": " + r.message);
    if (needs_declined(p.id)) {
      EXPECT_EQ(r.verdict, Verdict::skip);
      EXPECT_NE(r.message.find("declines"), std::string::npos);
      continue;
    }
    EXPECT_EQ(r.verdict, Verdict::pass);
    EXPECT_EQ(r.cases, rp.cases);
    full += r.cases == rp.cases;
  }
  EXPECT_GE(full, 10);
}

TEST(DeclinedCases, AnEncoderDecliningInterleavedPairsKeepsEveryPropertyThatNeedsNone) {
  Declines e([](const RopeSpec& s) { return declines_layout(s, RopeLayout::interleaved); });
  expect_every_property_runs(e, needs_both_layouts);
}

TEST(DeclinedCases, AnEncoderDecliningHalfSplitPairsKeepsEveryPropertyThatNeedsNone) {
  Declines e([](const RopeSpec& s) { return declines_layout(s, RopeLayout::half_split); });
  expect_every_property_runs(e, needs_both_layouts);
}

TEST(DeclinedCases, AnEncoderDecliningScalingKeepsEveryPropertyThatNeedsNone) {
  Declines e([](const RopeSpec& s) -> std::optional<std::string> {
    if (s.scaling.kind != RopeScalingKind::none) return "declines every scaling rule";
    return std::nullopt;
  });
  expect_every_property_runs(e, needs_scaling);
}

// One layout and one rule (a spec-mode function written for Llama 2's half-split pairs and
// linear interpolation): most drawn cases are declined, and each property still runs in full.
TEST(DeclinedCases, AnEncoderWithOneLayoutAndOneRuleKeepsEveryPropertyThatNeedsNoOther) {
  Declines e([](const RopeSpec& s) -> std::optional<std::string> {
    if (s.scaling.kind != RopeScalingKind::none && s.scaling.kind != RopeScalingKind::linear)
      return fmt::format("declines the rule {}", scaling_name(s.scaling.kind));
    return declines_layout(s, RopeLayout::interleaved);
  });
  expect_every_property_runs(e, [](const std::string& id) { return needs_both_layouts(id) || needs_ntk(id); });
}

/// Declines interleaved pairs and turns half-split ones at twice the base: a real failure found
/// after declined cases were drawn again.
class DeclinesThenFails final : public Offering<RopeApply> {
 public:
  using Offering<RopeApply>::run;
  std::string name() const override { return "declines-then-fails"; }
  void run(const RopeApply& c) override {
    if (c.spec.layout == RopeLayout::interleaved) throw Unsupported("declines interleaved pairs");
    RopeApply wrong = c;
    wrong.spec.base *= 2;
    inner_->run(wrong);
  }

 private:
  std::unique_ptr<Encoder> inner_ = make_encoder("scalar");
};

TEST(DeclinedCases, ACounterexampleIsTheCaseCheckedNotTheDeclinedOnesBeforeIt) {
  DeclinesThenFails e;
  const PropertyResult r =
      registered_property("rope.agrees_with_reference").run(e, DType::f32, RunParams{testing::test_seed(), 30});
  ASSERT_EQ(r.verdict, Verdict::fail) << r.message;
  // One case description: each redraw of a declined case is a pick RapidCheck lists too.
  const auto first = r.counterexample.find("data="), last = r.counterexample.rfind("data=");
  EXPECT_NE(first, std::string::npos) << r.counterexample;
  EXPECT_EQ(first, last) << r.counterexample;
  EXPECT_NE(r.counterexample.find("layout=half_split"), std::string::npos) << r.counterexample;
}

}  // namespace
}  // namespace pecheck
