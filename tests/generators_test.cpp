// The position generator (harness/generators.cpp): every band, the top one (2^24 - 1) included,
// shrinks towards 0, so a counterexample ends at the smallest position that still fails.
#include "harness/generators.hpp"

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include "harness/tolerance.hpp"

namespace pecheck {
namespace {

TEST(Generators, EveryPositionBandShrinksTowardsZero) {
  const rc::Gen<std::int64_t> gen = gen::position();
  int top = 0, drawn = 0;
  for (std::uint64_t seed = 1; seed <= 400; ++seed) {
    const rc::Shrinkable<std::int64_t> s = gen(rc::Random(seed), 100);
    const std::int64_t v = s.value();
    ASSERT_GE(v, 0);
    ASSERT_LE(v, tol::kMaxPosition);
    if (v == 0) continue;
    ++drawn;
    top += v == tol::kMaxPosition;
    const auto first = s.shrinks().next();
    ASSERT_TRUE(static_cast<bool>(first)) << "position " << v << " does not shrink";
    EXPECT_LT(first->value(), v);
  }
  EXPECT_GT(drawn, 300);
  EXPECT_GT(top, 5);  // the top band was drawn, and shrank like the others
}

}  // namespace
}  // namespace pecheck
