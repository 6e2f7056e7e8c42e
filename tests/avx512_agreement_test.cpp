// The AVX-512 kernels compute what the AVX2 ones do, lane for lane: the sinusoidal table and add
// agree bit for bit at every width (the same double operations, one rounding), RoPE wherever the
// rotary pairs fill whole vectors (only the tails differ: AVX2 rotates them in double, AVX-512 in
// masked vectors; tests/avx2_guard_test.cpp holds both to the scalar backend there), and
// vcvtneps2bf16 rounds every float as the integer rounding does, subnormals, NaNs and ties too.
#include <cmath>
#include <limits>
#include <random>

#include "impl/avx512/detail.hpp"
#include "tests/avx2_test_support.hpp"

namespace pecheck {
namespace {

using namespace avx2_test;

template <class T>
class Avx512Agreement : public Avx2Fixture<T> {
 protected:
  void SetUp() override {
    const avx2::Cpu cpu = avx512::availability();
    if (!cpu.ok) GTEST_SKIP() << "avx512 unavailable: " << cpu.reason;
  }
};
TYPED_TEST_SUITE(Avx512Agreement, StorageTypes);

template <class T>
std::vector<T> native(const std::vector<float>& x) {
  std::vector<T> out(x.size());
  avx2::detail::from_float(storage_of<T>(), x.data(), x.size(), out.data());
  return out;
}

template <class T>
bool bitwise_equal(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

TYPED_TEST(Avx512Agreement, SinusoidalTableAndAddAreTheAvx2KernelsBitForBit) {
  using T = TypeParam;
  const DType dt = TestFixture::dt;
  const std::vector<std::int64_t> pos = {0, 1, 2, 15, 16, 17, 4093, -77, (1 << 24) - 1, 3};
  for (const int d : {2, 6, 16, 30, 32, 34, 64, 98, 256})
    for (const auto layout : {SinusoidalLayout::interleaved, SinusoidalLayout::concatenated}) {
      SinusoidalSpec s{d, 10000.0, layout};
      s.padding_idx = 3;  // the last row: zeros in a table, untouched by an add
      const std::size_t cols = static_cast<std::size_t>(d), n = pos.size();
      const avx2::Rows<T> shape{nullptr, n, cols, static_cast<std::ptrdiff_t>(cols)};
      std::vector<T> a(n * cols), b(n * cols);
      avx2::sinusoidal_table<T>(s, pos, {a.data(), shape.rows, shape.cols, shape.stride});
      avx512::sinusoidal_table<T>(s, pos, {b.data(), shape.rows, shape.cols, shape.stride});
      EXPECT_TRUE(bitwise_equal(a, b)) << "table " << s.describe();
      a = b = native<T>(values(n * cols, dt, 4));
      avx2::sinusoidal_add<T>(s, pos, {a.data(), shape.rows, shape.cols, shape.stride});
      avx512::sinusoidal_add<T>(s, pos, {b.data(), shape.rows, shape.cols, shape.stride});
      EXPECT_TRUE(bitwise_equal(a, b)) << "add " << s.describe();
    }
}

TYPED_TEST(Avx512Agreement, RopeOnWholeVectorsIsTheAvx2KernelBitForBit) {
  using T = TypeParam;
  const DType dt = TestFixture::dt;
  const std::vector<std::int64_t> pos = {0, 1, 4095, 4096, 65537, (1 << 24) - 1, -12345};
  // Half-split with 16 or 32 pairs and interleaved with 8 or 64 fill whole 16-lane vectors; YaRN
  // scales cos and sin (a magnitude other than 1).
  RopeSpec yarn{128, 128, 500000.0, RopeLayout::half_split};
  yarn.scaling = RopeScaling{.kind = RopeScalingKind::yarn, .factor = 8, .original_max_position = 4096};
  // 3 heads: one pass on the last token; 20: passes of 8, 8 and 4 (earlier tokens: one head each).
  for (const int heads : {3, 20})
    for (const RopeSpec& s :
         {RopeSpec{64, 64, 10000.0, RopeLayout::half_split}, yarn, RopeSpec{128, 16, 10000.0, RopeLayout::interleaved},
          RopeSpec{128, 128, 1e6, RopeLayout::interleaved}}) {
      const std::size_t size = pos.size() * static_cast<std::size_t>(heads * s.head_dim);
      std::vector<T> a = native<T>(values(size, dt, 9)), b = a;
      const auto ts = static_cast<std::ptrdiff_t>(heads * s.head_dim);
      const avx2::Heads<T> va[] = {{a.data(), pos.size(), heads, ts, s.head_dim}};
      const avx2::Heads<T> vb[] = {{b.data(), pos.size(), heads, ts, s.head_dim}};
      const std::vector<T> before = a;
      avx2::rope_apply<T>(s, pos, va);
      avx512::rope_apply<T>(s, pos, vb);
      EXPECT_TRUE(bitwise_equal(a, b)) << s.describe() << ", " << heads << " heads";
      EXPECT_FALSE(bitwise_equal(a, before)) << "nothing rotated: " << s.describe();
    }
}

// Outputs in the subnormal range and NaNs take each width's rare path (AVX-512's integer rounding
// where vcvtneps2bf16 would flush; AVX2's quieting blend), tested once per pair of vectors in a
// half-split block: the rotation still agrees bit for bit (NaN for NaN), so neither path loses a
// lane.
TYPED_TEST(Avx512Agreement, RopeOfSubnormalOutputsAndNansIsTheAvx2KernelBitForBit) {
  using T = TypeParam;
  const DType dt = TestFixture::dt;
  const std::vector<std::int64_t> pos = {1, 4097};
  for (const int heads : {3, 20}) {
    for (const RopeSpec& s :
         {RopeSpec{64, 64, 10000.0, RopeLayout::half_split}, RopeSpec{128, 128, 1e6, RopeLayout::interleaved}}) {
      const std::size_t size = pos.size() * static_cast<std::size_t>(heads * s.head_dim);
      std::vector<float> x = values(size, dt, 11);
      for (std::size_t i = 0; i < size; ++i) {
        if (i / static_cast<std::size_t>(s.head_dim) % 2 == 0) x[i] = std::ldexp(x[i], -128);  // every other head tiny
        if (i % 97 == 5) x[i] = std::numeric_limits<float>::quiet_NaN();
      }
      std::vector<T> a = native<T>(x), b = a;
      const auto ts = static_cast<std::ptrdiff_t>(heads * s.head_dim);
      const avx2::Heads<T> va[] = {{a.data(), pos.size(), heads, ts, s.head_dim}};
      const avx2::Heads<T> vb[] = {{b.data(), pos.size(), heads, ts, s.head_dim}};
      avx2::rope_apply<T>(s, pos, va);
      avx512::rope_apply<T>(s, pos, vb);
      std::vector<float> fa(size), fb(size);
      avx2::detail::to_float(storage_of<T>(), a.data(), size, fa.data());
      avx2::detail::to_float(storage_of<T>(), b.data(), size, fb.data());
      std::size_t subnormal = 0, differ = 0;
      for (std::size_t i = 0; i < size; ++i) {
        subnormal += std::fpclassify(fa[i]) == FP_SUBNORMAL;
        // a NaN's sign and payload follow the FMA's operand order, which each width's compiler picks
        const bool both_nan = std::isnan(fa[i]) && std::isnan(fb[i]);
        differ += !both_nan && std::memcmp(&a[i], &b[i], sizeof(T)) != 0;
      }
      EXPECT_EQ(differ, 0u) << s.describe() << ", " << heads << " heads";
      if (dt != DType::f16) {
        EXPECT_GT(subnormal, size / 10) << "too few subnormal outputs to test their rounding";
      }
    }
  }
}

/// Float bit patterns that exercise a rounding to bfloat16: every class, ties either way, the
/// largest finite (which rounds to infinity), subnormals that round up to the smallest normal.
std::vector<float> rounding_cases() {
  std::vector<std::uint32_t> bits = {0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001,
                                     0xffa00001, 0x7f7fffff, 0x00000001, 0x807fffff, 0x007f8000, 0x007fffff,
                                     0x3f808000, 0x3f818000, 0x3f80ffff, 0x3f807fff, 0x00018000, 0x00008000};
  std::mt19937 rng(7);
  for (int i = 0; i < 1 << 16; ++i) bits.push_back(rng());
  for (std::uint32_t lo = 0; lo < 1 << 16; lo += 255) bits.push_back(0x00400000u | lo);  // subnormals
  std::vector<float> x(bits.size());
  std::memcpy(x.data(), bits.data(), bits.size() * sizeof(float));
  return x;
}

TEST(Avx512Bf16, TheRoundingInstructionRoundsAsTheIntegerRounding) {
  if (const avx2::Cpu cpu = avx512::availability(); !cpu.ok) GTEST_SKIP() << "avx512 unavailable: " << cpu.reason;
  const std::vector<float> x = rounding_cases();
  std::vector<std::uint16_t> avx2_bits(x.size()), integer(x.size()), instruction(x.size());
  avx2::detail::from_float(avx2::detail::Storage::bf16, x.data(), x.size(), avx2_bits.data());
  avx512::detail::from_float(avx2::detail::Storage::bf16, x.data(), x.size(), integer.data(), false);
  EXPECT_EQ(integer, avx2_bits) << "the 16-lane integer rounding is the AVX2 one";
  if (!avx512::has_bf16_instructions()) GTEST_SKIP() << "CPU lacks AVX512_BF16: the instruction path never runs";
  avx512::detail::from_float(avx2::detail::Storage::bf16, x.data(), x.size(), instruction.data(), true);
  EXPECT_EQ(instruction, avx2_bits);
}

TEST(Avx512Availability, DisabledByEnvironmentWithTheReason) {
  ASSERT_EQ(setenv("PECHECK_DISABLE_AVX512", "1", 1), 0);
  const avx2::Cpu cpu = avx512::availability();
  unsetenv("PECHECK_DISABLE_AVX512");
  EXPECT_FALSE(cpu.ok);
  EXPECT_EQ(cpu.reason, "disabled by PECHECK_DISABLE_AVX512");
}

}  // namespace
}  // namespace pecheck
