// The double oracle that long attention cases are judged against (ref::attention<double>, bound
// tol::attention_oracle_f64, docs/error-model.md attention.oracle_f64) checked against the 50-digit
// reference on the short cases attention.agrees_with_reference draws: every PE, causal or full,
// positions up to 2^24, logits up to thousands. Its measured error must stay within its bound, and
// the bound must not be so loose that it admits anything.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "harness/measure.hpp"
#include "properties/attention/attention_cases.hpp"
#include "reference/attention.hpp"
#include "tests/test_seed.hpp"

namespace pecheck::props {
namespace {

constexpr double kU64 = 0x1p-53;

/// Case i of a generator at the test seed (PECHECK_SEED varies it), sizes cycling up to 100 as a
/// RapidCheck run's do.
AttentionCase draw(const rc::Gen<AttentionCase>& gen, int i) {
  return gen(rc::Random(testing::test_seed() + static_cast<std::uint64_t>(i)), i % 101).value();
}

/// The oracle's error on one case, in u64 max|V'|, and its bound in the same unit.
struct Measured {
  double error = 0, bound = 0;
};

Measured measure(const AttentionCase& c) {
  const AttentionData x = attention_data(c, DType::f32);
  const AttentionBound b = attention_bound(c, DType::f32, x, tol::Contract::exact);
  const auto widen = [](const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); };
  const auto oracle = ref::attention<double>(c.spec, c.positions, {widen(x.q), widen(x.k), widen(x.v)}, widen(x.table));
  const auto exact =
      ref::attention<Real>(c.spec, c.positions, {to_real(x.q), to_real(x.k), to_real(x.v)}, to_real(x.table));
  Measured m{.bound = b.oracle_u * unit_roundoff(DType::f32) / kU64};
  for (std::size_t i = 0; i < exact.size(); ++i)
    m.error = std::max(m.error, std::fabs(ref::to_double(Real(oracle[i]) - exact[i])) / (kU64 * b.max_v));
  return m;
}

TEST(AttentionOracle, TheDoubleOracleIsWithinItsBoundOfTheExactOutput) {
  const auto gen = attention_case_gen(DType::f32, all_attention_pes(), true, 1);
  double worst = 0, worst_share = 0;
  for (int i = 0; i < 300; ++i) {
    const AttentionCase c = draw(gen, i);
    const Measured m = measure(c);
    EXPECT_LE(m.error, m.bound) << c.describe();
    worst = std::max(worst, m.error);
    worst_share = std::max(worst_share, m.error / m.bound);
  }
  std::printf("double oracle: measured max %.3g u64 max|V'|, at most %.3g of its bound\n", worst, worst_share);
  // Not vacuous: the oracle rounds, and the comparison sees it.
  EXPECT_GT(worst, 0.01);
}

TEST(AttentionOracle, ItsBoundIsSmallBesideTheKernelsOnLongCases) {
  // On the long cases the oracle stands in for the reference: its share of the check's bound must
  // be small, or the check would admit kernels the exact comparison refuses.
  const auto gen = attention_long_case_gen(DType::f32);
  double worst_share = 0;
  for (int i = 0; i < 100; ++i) {
    const AttentionCase c = draw(gen, i);
    const AttentionData x = attention_data(c, DType::f32);
    const AttentionBound b = attention_bound(c, DType::f32, x, tol::Contract::exact);
    EXPECT_GT(b.oracle_u, 0) << c.describe();
    EXPECT_LT(b.oracle_u, 0.05 * b.bound_u) << c.describe();
    worst_share = std::max(worst_share, b.oracle_u / b.bound_u);
  }
  std::printf("long cases (f32): the oracle's bound is at most %.3g of the kernel's\n", worst_share);
}

}  // namespace
}  // namespace pecheck::props
