// The RoPE accuracy contracts (harness/tolerance.hpp, docs/error-model.md rope.pair.dtype_trig and
// rope.pair.fp32_angles) against HF's arithmetic emulated step by step in fp32: the exponent
// 2p/d and base^x in fp32, the reciprocal, the fp32 angle pos * inv_freq, cosf/sinf, cos and sin
// rounded to the dtype, the rotation's products and sum rounded in it. Every pair meets the
// fp32-angles contract; with the angle taken exact, the dtype-trig one; the contracts are not
// vacuous (the fp32 path leaves the exact contract at far positions) and a base off by 1e-4 fails
// them.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <cstdlib>

#include "harness/tolerance.hpp"
#include "tests/test_seed.hpp"

namespace pecheck {
namespace {

[[maybe_unused]] const bool kSeeded = [] {
  const auto params = "seed=" + std::to_string(testing::test_seed());
  return setenv("RC_PARAMS", params.c_str(), /*overwrite=*/0) == 0;
}();

/// One rotated pair: its error in the rope.pair metric, and what the contracts allow there.
struct PairCase {
  double error_u, turned, exponent;
};

/// HF's fp32 path for pair p of a d-dim RoPE at `pos`, on x = (x1, x2) in dtype dt; `exact_angle`
/// replaces the fp32 angle with the exact one (the dtype-trig contract's premise).
PairCase hf_pair(DType dt, double base, int d, int p, std::int64_t pos, double x1, double x2, bool exact_angle) {
  const float exponent = static_cast<float>(2 * p) / static_cast<float>(d);
  const float inv = 1.0f / std::pow(static_cast<float>(base), exponent);
  const float angle32 = static_cast<float>(pos) * inv;
  const long double exact = static_cast<long double>(pos) * std::pow(static_cast<long double>(base), -2.0L * p / d);
  const float c = exact_angle ? static_cast<float>(std::cos(exact)) : std::cos(angle32);
  const float s = exact_angle ? static_cast<float>(std::sin(exact)) : std::sin(angle32);
  const double cd = round_to(dt, c), sd = round_to(dt, s);  // the cache in the dtype
  const double y1 = round_to(dt, round_to(dt, x1 * cd) - round_to(dt, x2 * sd));
  const double y2 = round_to(dt, round_to(dt, x2 * cd) + round_to(dt, x1 * sd));
  const long double e1 = x1 * std::cos(exact) - x2 * std::sin(exact), e2 = x2 * std::cos(exact) + x1 * std::sin(exact);
  const double err = std::hypot(static_cast<double>(y1 - e1), static_cast<double>(y2 - e2));
  return {err / (unit_roundoff(dt) * std::hypot(x1, x2)), static_cast<double>(std::fabs(exact)),
          std::fabs(2.0 * p / d * std::log(base))};
}

struct Drawn {
  DType dt;
  double base, x1, x2;
  int d, p;
  std::int64_t pos;
};

Drawn draw() {
  Drawn c;
  c.dt = *rc::gen::element(DType::f32, DType::bf16, DType::f16);
  c.base = *rc::gen::element(10000.0, 500000.0, 1e6, 100.0);
  c.d = 2 * *rc::gen::inRange(1, 129);
  c.p = *rc::gen::inRange(0, c.d / 2);
  c.pos = *rc::gen::oneOf(rc::gen::inRange<std::int64_t>(0, 4096), rc::gen::inRange<std::int64_t>(0, 1 << 24));
  c.x1 = round_to(c.dt, *rc::gen::inRange(-1000, 1001) / 1000.0);
  c.x2 = round_to(c.dt, *rc::gen::inRange(1, 1001) / 1000.0);
  return c;
}

RC_GTEST_PROP(RopeContracts, hfsFp32PathMeetsTheFp32AnglesContract, ()) {
  const Drawn c = draw();
  const PairCase e = hf_pair(c.dt, c.base, c.d, c.p, c.pos, c.x1, c.x2, false);
  RC_CLASSIFY(e.error_u > tol::rope_pair(c.dt), "beyond exact");
  RC_ASSERT(e.error_u <= tol::rope_pair_fp32_angles(c.dt, e.turned, e.exponent));
}

RC_GTEST_PROP(RopeContracts, aCacheInTheDtypeMeetsTheDtypeTrigContract, ()) {
  const Drawn c = draw();
  const PairCase e = hf_pair(c.dt, c.base, c.d, c.p, c.pos, c.x1, c.x2, true);
  RC_ASSERT(e.error_u <= tol::rope_pair_dtype_trig(c.dt));
}

TEST(RopeContracts, TheFp32PathLeavesTheExactContractFarOut) {
  // Pair 1 (inv_freq 0.866, not an fp32 value): at 2^20 its fp32 angle is off by ~0.05 rad.
  double worst = 0;
  for (std::int64_t pos = (1 << 20); pos < (1 << 20) + 64; ++pos)
    worst = std::max(worst, hf_pair(DType::f32, 10000, 128, 1, pos, 0.6, 0.8, false).error_u);
  EXPECT_GT(worst, 100 * tol::rope_pair(DType::f32));
}

TEST(RopeContracts, ABaseOffBy1e4FailsTheFp32AnglesContract) {
  // A wrong convention, not fp32 arithmetic: the slow pairs turn at the wrong rate.
  const int d = 128, p = 40;
  const double right = 10000, wrong = 10001;
  int failed = 0;
  for (std::int64_t pos : {4096, 65536, 1 << 20}) {
    const PairCase truth = hf_pair(DType::f32, right, d, p, pos, 0.6, 0.8, false);
    const double exact_wrong = pos * std::pow(wrong, -2.0 * p / d), exact_right = pos * std::pow(right, -2.0 * p / d);
    const double error_u = std::fabs(exact_wrong - exact_right) / unit_roundoff(DType::f32);  // |x| = 1
    failed += error_u > tol::rope_pair_fp32_angles(DType::f32, truth.turned, truth.exponent);
  }
  EXPECT_EQ(failed, 3);
}

}  // namespace
}  // namespace pecheck
