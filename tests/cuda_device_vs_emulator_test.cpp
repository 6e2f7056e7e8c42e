// On a GPU: the device runs the same thread bodies as the CPU emulator (`cuda-emulated`), so the
// two must agree except where the device's libm differs from the host's (double sin, cos, exp,
// within 2 ulp of double either way). RoPE and the sinusoidal table therefore round to the same
// dtype value almost everywhere and never more than one unit apart; attention's weights (exp in
// double, rounded to fp32) may differ in their last fp32 bit. A larger gap is a device-only bug
// (a race, a launch or memory fault the emulator cannot have) and this test says where. Without
// a GPU it skips with the reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/encoders.hpp"
#include "tests/cuda_test_support.hpp"

namespace pecheck {
namespace {

using testing::backend;

struct Agreement {
  std::size_t equal = 0;
  double worst_units = 0;  ///< max |a - b| / ulp(max(|a|, |b|)) in the dtype's units
};

Agreement agreement(std::span<const float> a, std::span<const float> b, DType dt) {
  Agreement r;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] == b[i]) ++r.equal;
    const double scale = std::max({std::fabs(double(a[i])), std::fabs(double(b[i])), min_normal(dt)});
    r.worst_units = std::max(r.worst_units, std::fabs(double(a[i]) - b[i]) / (2 * unit_roundoff(dt) * scale));
  }
  return r;
}

class DeviceVsEmulator : public ::testing::Test {
 protected:
  void SetUp() override {
    const Availability a = backend("cuda").probe();
    if (!a.available) GTEST_SKIP() << a.reason;
    device = backend("cuda").make();
    emulator = backend("cuda-emulated").make();
  }
  std::unique_ptr<Encoder> device, emulator;
};

TEST_F(DeviceVsEmulator, RopeAndTablesRoundAlike) {
  std::vector<std::int64_t> positions(300);
  std::iota(positions.begin(), positions.end(), (std::int64_t{1} << 24) - 300);
  for (DType dt : kAllDTypes) {
    const RopeSpec r{.head_dim = 128, .rotary_dim = 128, .base = 500000, .layout = RopeLayout::half_split};
    std::vector<float> x(positions.size() * 4 * 128);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = round_to(dt, std::sin(0.37 * double(i)));
    std::vector<float> on_device = x, emulated = x;
    device->run(RopeApply{r, dt, 4, positions, on_device});
    emulator->run(RopeApply{r, dt, 4, positions, emulated});
    const Agreement rope = agreement(on_device, emulated, dt);
    EXPECT_LE(rope.worst_units, 1.0) << "rope " << dtype_name(dt);
    EXPECT_GE(rope.equal, x.size() * 99 / 100) << "rope " << dtype_name(dt);

    const SinusoidalSpec s{.d_model = 256, .layout = SinusoidalLayout::interleaved};
    std::vector<float> t_device(positions.size() * 256), t_emulated(t_device.size());
    device->run(SinusoidalTable{s, dt, positions, t_device});
    emulator->run(SinusoidalTable{s, dt, positions, t_emulated});
    const Agreement table = agreement(t_device, t_emulated, dt);
    EXPECT_LE(table.worst_units, 1.0) << "sinusoid " << dtype_name(dt);
    EXPECT_GE(table.equal, t_device.size() * 99 / 100) << "sinusoid " << dtype_name(dt);
  }
}

TEST_F(DeviceVsEmulator, TiledAttentionAgreesToTheLastBits) {
  const std::size_t n = 200;
  std::vector<std::int64_t> positions(n);
  std::iota(positions.begin(), positions.end(), 0);
  for (const int head_dim : {64, 128})
    for (bool causal : {false, true}) {
      const AttentionSpec s{.heads = 2, .head_dim = head_dim, .causal = causal, .pe = AttentionPE::rope};
      const std::size_t count = n * 2 * static_cast<std::size_t>(head_dim);
      const auto [q, k, v] = testing::attention_inputs(count, DType::f32);
      std::vector<float> on_device(count), emulated(count);
      device->run(Attention{s, DType::f32, positions, q, k, v, {}, on_device});
      emulator->run(Attention{s, DType::f32, positions, q, k, v, {}, emulated});
      double worst = 0;
      for (std::size_t i = 0; i < count; ++i) worst = std::max(worst, std::fabs(double(on_device[i]) - emulated[i]));
      // |V| <= 1; a weight's last fp32 bit, over the sums: a few units of 2^-24.
      EXPECT_LE(worst, 16 * 0x1p-24) << s.describe();
    }
}

}  // namespace
}  // namespace pecheck
