// What a run exercised (properties/coverage.hpp): the forms no case drew are named per encoder and
// operation, read from the results' tags; skips count for nothing; a pinned encoder is not asked
// for the forms its convention fixes; a real run of the catalogue on a backend draws every form.
#include "properties/coverage.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "harness/encoders.hpp"
#include "properties/registry.hpp"
#include "tests/test_seed.hpp"

namespace pecheck {
namespace {

PropertyResult row(const std::string& property, Verdict v, std::vector<std::pair<std::string, int>> tags) {
  PropertyResult r;
  r.property = property, r.encoder = "e", r.verdict = v, r.cases = 10, r.distribution = std::move(tags);
  return r;
}

bool names(const CoverageGap& g, const std::string& form) {
  return std::find(g.never.begin(), g.never.end(), form) != g.never.end();
}

TEST(Coverage, TheFormsNoCaseDrewAreNamedAndSkipsCountForNothing) {
  const std::vector<PropertyResult> results = {
      row("attention.agrees_with_reference", Verdict::pass, {{"causal", 6}, {"full", 4}, {"window", 2}}),
      row("attention.gqa_repeat_equivalence", Verdict::fail, {{"grouped-query", 10}}),
      row("attention.decode_equivalence", Verdict::skip, {{"queries < keys", 10}})};
  const auto gaps = coverage_gaps(results, /*pinned=*/false);
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_EQ(gaps[0].op, Op::attention);
  EXPECT_EQ(gaps[0].cases, 20);
  for (const char* drawn : {"causal", "full", "window", "grouped-query"}) EXPECT_FALSE(names(gaps[0], drawn)) << drawn;
  for (const char* never : {"queries < keys", "stated scale", "n > 128", "sinusoidal"})
    EXPECT_TRUE(names(gaps[0], never)) << never;
  EXPECT_EQ(coverage_lines(gaps)[0].rfind("coverage on e (attention, 20 cases): never exercised: queries < keys", 0),
            0u)
      << coverage_lines(gaps)[0];
}

TEST(Coverage, APinnedEncoderIsNotAskedForWhatItsConventionFixes) {
  const std::vector<PropertyResult> results = {
      row("rope.relative", Verdict::pass, {{"half_split", 10}, {"pos=0", 3}, {"pos>=2^20", 2}, {"pos=2^24-1", 1}})};
  EXPECT_TRUE(coverage_gaps(results, /*pinned=*/true)[0].never.empty());
  const auto unpinned = coverage_gaps(results, /*pinned=*/false);
  EXPECT_TRUE(names(unpinned[0], "interleaved"));
  EXPECT_TRUE(names(unpinned[0], "scaling:yarn"));
}

TEST(Coverage, TheCatalogueOnTheScalarBackendDrawsEveryForm) {
  auto scalar = make_encoder("scalar");
  const RunParams rp{testing::test_seed(), testing::test_cases()};
  std::vector<PropertyResult> results;
  for (const Property& p : property_registry())
    if (p.op == Op::rope_apply || p.op == Op::attention) results.push_back(p.run(*scalar, DType::f32, rp));
  const auto gaps = coverage_gaps(results, /*pinned=*/false);
  ASSERT_EQ(gaps.size(), 2u);
  for (const CoverageGap& g : gaps) EXPECT_TRUE(g.never.empty()) << coverage_lines({g})[0];
}

}  // namespace
}  // namespace pecheck
