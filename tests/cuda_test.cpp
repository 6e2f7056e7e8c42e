// The CUDA backend's own smoke test, run twice: on the GPU (`cuda`: always listed, with the reason
// when it cannot run: no nvcc at build time, no device or driver at run time) and on the CPU
// emulator (`cuda-emulated`: the same thread bodies, run everywhere). Every operation agrees with
// the double reference within 1u in every dtype, at positions up to 2^24 - 1, with partial
// rotary, both layouts, each access width, a scaling rule and fairseq's padding row. (The
// properties run against both from properties_test and `pecheck verify`.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "harness/encoders.hpp"
#include "harness/reference_encoder.hpp"
#include "tests/cuda_test_support.hpp"

namespace pecheck {
namespace {

using testing::backend;

TEST(CudaBackend, IsListedAndSaysWhyWhenUnavailable) {
  const Availability a = backend("cuda").probe();
  if (!a.available) {
    EXPECT_FALSE(a.reason.empty());
    EXPECT_TRUE(a.reason.find("CUDA") != std::string::npos) << a.reason;
  }
  EXPECT_TRUE(backend("cuda-emulated").probe().available) << "the emulator runs everywhere";
}

/// The GPU and the CPU emulator of the same kernels.
class CudaKernels : public ::testing::TestWithParam<std::string> {};

/// The encoder, or a skip with the backend's own reason.
#define PECHECK_CUDA_OR_SKIP(enc)                                   \
  const Availability availability = backend(GetParam()).probe();    \
  if (!availability.available) GTEST_SKIP() << availability.reason; \
  const std::unique_ptr<Encoder> enc = backend(GetParam()).make()

double worst_u(std::span<const float> got, std::span<const float> want, DType dt) {
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, std::fabs(double(got[i]) - want[i]) /
                                (unit_roundoff(dt) * std::max(std::fabs(double(want[i])), min_normal(dt))));
  return worst;
}

TEST_P(CudaKernels, RopeAgreesWithTheReference) {
  PECHECK_CUDA_OR_SKIP(enc);
  const auto ref = make_reference_double_encoder();
  const std::vector<std::int64_t> positions{0, 1, 7, 4096, 65537, (1 << 24) - 1};
  for (DType dt : kAllDTypes)
    for (RopeLayout layout : {RopeLayout::interleaved, RopeLayout::half_split}) {
      RopeSpec s{.head_dim = 20, .rotary_dim = 12, .base = 500000, .layout = layout};
      s.scaling = {.kind = RopeScalingKind::yarn, .factor = 4, .original_max_position = 4096};
      std::vector<float> x(positions.size() * 3 * 20);
      for (std::size_t i = 0; i < x.size(); ++i) x[i] = round_to(dt, std::cos(0.7 * double(i)));
      std::vector<float> got = x, want = x;
      enc->run(RopeApply{s, dt, 3, positions, got});
      ref->run(RopeApply{s, dt, 3, positions, want});
      EXPECT_LE(worst_u(got, want, dt), 1.0) << dtype_name(dt) << " " << s.describe();
      EXPECT_NE(got, x) << "nothing rotated";
      for (std::size_t t = 0; t < positions.size() * 3; ++t)  // pass-through dims untouched
        for (std::size_t k = 12; k < 20; ++k) EXPECT_EQ(got[t * 20 + k], x[t * 20 + k]);
    }
}

TEST_P(CudaKernels, SinusoidalTableAgreesWithTheReference) {
  PECHECK_CUDA_OR_SKIP(enc);
  const auto ref = make_reference_double_encoder();
  const std::vector<std::int64_t> positions{0, 1, 2, 5000, (1 << 24) - 1};
  for (DType dt : kAllDTypes) {
    const SinusoidalSpec s{.d_model = 34,
                           .layout = SinusoidalLayout::concatenated,
                           .frequencies = SinusoidalFrequencies::fairseq,
                           .padding_idx = 2};
    std::vector<float> got(positions.size() * 34), want(got.size());
    enc->run(SinusoidalTable{s, dt, positions, got});
    ref->run(SinusoidalTable{s, dt, positions, want});
    EXPECT_LE(worst_u(got, want, dt), 1.0) << dtype_name(dt);
    EXPECT_TRUE(std::all_of(got.begin() + 2 * 34, got.begin() + 3 * 34, [](float v) { return v == 0; }));
  }
}

TEST_P(CudaKernels, AlibiAndT5BiasesEqualTheReference) {
  PECHECK_CUDA_OR_SKIP(enc);
  const auto ref = make_reference_double_encoder();
  const std::vector<std::int64_t> positions{0, 3, 4, 100, 4097};
  for (DType dt : kAllDTypes) {
    for (bool causal : {false, true}) {
      const AlibiSpec s{.heads = 12, .causal = causal};  // not a power of two: the paper's second rule
      std::vector<float> got(12 * 25), want(got.size());
      enc->run(AlibiBias{s, dt, positions, got});
      ref->run(AlibiBias{s, dt, positions, want});
      EXPECT_LE(worst_u(got, want, dt), 1.0) << dtype_name(dt) << " " << s.describe();
    }
    const T5Spec t{.heads = 3, .num_buckets = 32, .max_distance = 128, .bidirectional = true};
    std::vector<float> table(32 * 3);
    for (std::size_t i = 0; i < table.size(); ++i) table[i] = round_to(dt, 0.01 * double(i) - 0.4);
    std::vector<float> got(3 * 25), want(got.size());
    enc->run(T5Bias{t, dt, table, positions, got});
    ref->run(T5Bias{t, dt, table, positions, want});
    EXPECT_EQ(got, want) << dtype_name(dt);
  }
}

TEST_P(CudaKernels, LearnedAddAndShawScoresAgreeWithTheReference) {
  PECHECK_CUDA_OR_SKIP(enc);
  const auto ref = make_reference_double_encoder();
  const std::vector<std::int64_t> positions{0, 2, 9, 5, 40};
  for (DType dt : kAllDTypes) {
    const LearnedSpec l{.max_len = 41, .d_model = 6};
    std::vector<float> table(41 * 6), x(5 * 6);
    for (std::size_t i = 0; i < table.size(); ++i) table[i] = round_to(dt, std::sin(double(i)));
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = round_to(dt, std::cos(3.0 * double(i)));
    std::vector<float> got = x, want = x;
    enc->run(LearnedAdd{l, dt, table, positions, got});
    ref->run(LearnedAdd{l, dt, table, positions, want});
    EXPECT_EQ(got, want) << dtype_name(dt);  // one rounding of an exact sum: bitwise
    std::vector<float> past = x;
    EXPECT_THROW(enc->run(LearnedAdd{l, dt, table, std::vector<std::int64_t>{0, 2, 9, 5, 41}, past}),
                 std::out_of_range);
    EXPECT_EQ(past, x) << "nothing written before the refusal";

    const ShawSpec s{.max_distance = 4, .head_dim = 8};
    std::vector<float> q(5 * 8), k(5 * 8), r(9 * 8);
    for (std::size_t i = 0; i < q.size(); ++i) q[i] = round_to(dt, std::sin(0.3 * double(i)));
    for (std::size_t i = 0; i < k.size(); ++i) k[i] = round_to(dt, std::cos(0.2 * double(i)));
    for (std::size_t i = 0; i < r.size(); ++i) r[i] = round_to(dt, 0.05 * double(i) - 1);
    std::vector<float> scores(25), exact(25);
    enc->run(ShawScores{s, dt, q, k, r, positions, scores});
    ref->run(ShawScores{s, dt, q, k, r, positions, exact});
    EXPECT_LE(worst_u(scores, exact, dt), 1.0) << dtype_name(dt);
  }
}

TEST_P(CudaKernels, AttentionWithEachPeIsCloseToTheReference) {
  PECHECK_CUDA_OR_SKIP(enc);
  const auto ref = make_reference_double_encoder();
  const std::vector<std::int64_t> positions{0, 1, 5, 6, 300};
  for (AttentionPE pe :
       {AttentionPE::none, AttentionPE::sinusoidal, AttentionPE::rope, AttentionPE::alibi, AttentionPE::shaw})
    for (bool causal : {false, true}) {
      const AttentionSpec s{.heads = 2, .head_dim = 8, .causal = causal, .pe = pe, .shaw_max_distance = 2};
      std::vector<float> q(5 * 16), k(5 * 16), v(5 * 16), r(pe == AttentionPE::shaw ? 5 * 8 : 0);
      for (std::size_t i = 0; i < q.size(); ++i) {
        q[i] = round_to(DType::f32, std::sin(1.1 * double(i)));
        k[i] = round_to(DType::f32, std::cos(0.9 * double(i)));
        v[i] = round_to(DType::f32, std::sin(0.5 * double(i) + 1));
      }
      for (std::size_t i = 0; i < r.size(); ++i) r[i] = round_to(DType::f32, 0.1 * double(i) - 2);
      std::vector<float> got(q.size()), want(q.size());
      enc->run(Attention{s, DType::f32, positions, q, k, v, r, got});
      ref->run(Attention{s, DType::f32, positions, q, k, v, r, want});
      double worst = 0;
      for (std::size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::fabs(double(got[i]) - want[i]));
      // A smoke test: attention.agrees_with_reference holds the derived bound; |V'| <= 2 here.
      EXPECT_LE(worst, 64 * 0x1p-24 * 2) << s.describe();
    }
}

TEST_P(CudaKernels, EveryAccessWidthAndHeadTailAgrees) {
  PECHECK_CUDA_OR_SKIP(enc);
  const auto ref = backend("scalar").make();  // the same angles: the double reference drifts at 2^24
  const std::vector<std::int64_t> positions{3, 0, 4095, 131071, (1 << 24) - 1};
  // (head_dim, rotary_dim): 16-byte packs of 4 or 8 pairs, 8-byte ones, and single elements.
  for (const auto& [head_dim, rotary_dim] : {std::pair{128, 128}, {64, 32}, {12, 8}, {6, 6}, {10, 2}})
    for (DType dt : kAllDTypes)
      for (RopeLayout layout : {RopeLayout::interleaved, RopeLayout::half_split}) {
        const RopeSpec s{.head_dim = head_dim, .rotary_dim = rotary_dim, .base = 10000, .layout = layout};
        const int heads = 5;  // one batch of 4 heads and a tail of 1
        std::vector<float> x(positions.size() * heads * static_cast<std::size_t>(head_dim));
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = round_to(dt, std::sin(1.3 * double(i) + 0.2));
        std::vector<float> got = x, want = x;
        enc->run(RopeApply{s, dt, heads, positions, got});
        ref->run(RopeApply{s, dt, heads, positions, want});
        EXPECT_LE(worst_u(got, want, dt), 1.0) << dtype_name(dt) << " " << s.describe();
      }
}

TEST_P(CudaKernels, SinusoidRunsOfConsecutivePositionsAgree) {
  PECHECK_CUDA_OR_SKIP(enc);
  const auto ref = backend("scalar").make();  // the same angles: the double reference drifts at 2^24
  // 100 consecutive positions ending at 2^24 - 1: three runs of 32 carried by rotation, and a tail.
  std::vector<std::int64_t> positions(100);
  std::iota(positions.begin(), positions.end(), (std::int64_t{1} << 24) - 100);
  for (DType dt : kAllDTypes)
    for (SinusoidalLayout layout : {SinusoidalLayout::interleaved, SinusoidalLayout::concatenated}) {
      const SinusoidalSpec s{.d_model = 64, .layout = layout, .padding_idx = positions[40]};
      std::vector<float> got(positions.size() * 64), want(got.size());
      enc->run(SinusoidalTable{s, dt, positions, got});
      ref->run(SinusoidalTable{s, dt, positions, want});
      EXPECT_LE(worst_u(got, want, dt), 1.0) << dtype_name(dt) << " " << s.describe();
      std::size_t equal = 0;
      for (std::size_t i = 0; i < got.size(); ++i) equal += got[i] == want[i];
      EXPECT_GE(equal, got.size() * 99 / 100) << "correctly rounded in practice: " << dtype_name(dt);
      EXPECT_TRUE(std::all_of(got.begin() + 40 * 64, got.begin() + 41 * 64, [](float v) { return v == 0; }));
    }
}

TEST_P(CudaKernels, AxialEncodingsAgreeWithTheReference) {
  PECHECK_CUDA_OR_SKIP(enc);
  const auto ref = backend("scalar").make();  // the same angles: the double reference drifts at 2^24
  const std::vector<std::int64_t> rows{0, 0, 1, 7, 255}, cols{0, 1, 1, 3, 4000};
  for (DType dt : kAllDTypes) {
    for (RopeLayout layout : {RopeLayout::interleaved, RopeLayout::half_split}) {
      const Rope2dSpec s{.head_dim = 16, .base = 100, .layout = layout};
      std::vector<float> x(rows.size() * 3 * 16);
      for (std::size_t i = 0; i < x.size(); ++i) x[i] = round_to(dt, std::cos(0.37 * double(i)));
      std::vector<float> got = x, want = x;
      enc->run(Rope2dApply{s, dt, 3, rows, cols, got});
      ref->run(Rope2dApply{s, dt, 3, rows, cols, want});
      EXPECT_LE(worst_u(got, want, dt), 1.0) << dtype_name(dt) << " " << s.describe();
    }
    for (SinusoidalLayout layout : {SinusoidalLayout::interleaved, SinusoidalLayout::concatenated}) {
      const Sinusoidal2dSpec s{.d_model = 24, .layout = layout};
      std::vector<float> got(rows.size() * 24), want(got.size());
      enc->run(Sinusoidal2dTable{s, dt, rows, cols, got});
      ref->run(Sinusoidal2dTable{s, dt, rows, cols, want});
      EXPECT_LE(worst_u(got, want, dt), 1.0) << dtype_name(dt) << " " << s.describe();
    }
  }
}

TEST_P(CudaKernels, TiledAttentionAcrossBlocksTilesAndTails) {
  PECHECK_CUDA_OR_SKIP(enc);
  const auto ref = make_reference_double_encoder();
  // n = 150: three blocks of 64 queries (the last a tail) and several key tiles (64 keys a tile
  // for head_dim <= 64, 32 for 128); head_dim 40 leaves columns of the 64-wide bucket unused.
  const std::size_t n = 150;
  std::vector<std::int64_t> positions(n);
  std::iota(positions.begin(), positions.end(), 1000);
  for (const int head_dim : {40, 128})
    for (AttentionPE pe : {AttentionPE::none, AttentionPE::rope, AttentionPE::alibi})
      for (bool causal : {false, true}) {
        const AttentionSpec s{.heads = 2, .head_dim = head_dim, .causal = causal, .pe = pe};
        const std::size_t count = n * 2 * static_cast<std::size_t>(head_dim);
        const auto [q, k, v] = testing::attention_inputs(count, DType::bf16);
        std::vector<float> got(count), want(count);
        enc->run(Attention{s, DType::bf16, positions, q, k, v, {}, got});
        ref->run(Attention{s, DType::bf16, positions, q, k, v, {}, want});
        // The attention metric, |o - o_ref| / (u max|V|): one bf16 rounding (0.5) plus fp32
        // arithmetic far below it; RoPE's transform in fp32 adds a little (docs/error-model.md 6).
        double worst = 0, max_v = 0;
        for (std::size_t i = 0; i < count; ++i) {
          worst = std::max(worst, std::fabs(double(got[i]) - want[i]));
          max_v = std::max(max_v, std::fabs(double(v[i])));
        }
        EXPECT_LE(worst / (unit_roundoff(DType::bf16) * max_v), 1.0) << s.describe();
      }
}

TEST_P(CudaKernels, BadShapesThrowBeforeAnyLaunch) {
  PECHECK_CUDA_OR_SKIP(enc);
  std::vector<float> x(7);
  EXPECT_THROW(
      enc->run(RopeApply{RopeSpec{.head_dim = 8, .rotary_dim = 8}, DType::f32, 1, std::vector<std::int64_t>{0}, x}),
      std::invalid_argument);
}

INSTANTIATE_TEST_SUITE_P(DeviceAndEmulator, CudaKernels, ::testing::Values("cuda", "cuda-emulated"),
                         [](const auto& info) { return info.param == "cuda" ? "device" : "emulator"; });

}  // namespace
}  // namespace pecheck
