// The 2-D RoPE oracle (reference/encodings_2d.hpp) against the vision towers' own formulas, written
// out by hand from transformers 5's code rather than from the pairing under test: Qwen2-VL's
// (cos = [h, w, h, w] with one rotate_half over the head: whole_head), SAM 2's (cos =
// repeat_interleave([h, w], 2) with rotate_pairwise: interleaved, either pairing) and Gemma 4's
// (cos = [h, h, w, w], each half-head its own rotate_half: per_half), and Pixtral's (the even-indexed
// frequencies of a width-d RoPE for the row, the odd for the column: split). Then the backends' quarter
// exchange (impl/rope2d_by_halves.hpp) on the scalar kernel against the oracle, within f32 rounding.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "impl/rope2d_by_halves.hpp"
#include "impl/scalar/kernels.hpp"
#include "reference/encodings_2d.hpp"
#include "tests/test_seed.hpp"

namespace {

using namespace pecheck;
using Vec = std::vector<double>;
using pecheck::testing::test_seed;

// The axis's d/4 angles at position pos: pos * base^(-2k / (d/2)), as compute_axial_rope_parameters.
Vec axis_angles(const Rope2dSpec& s, std::int64_t pos) {
  Vec a;
  for (int k = 0; k < s.head_dim / 4; ++k) a.push_back(double(pos) * std::pow(s.base, -2.0 * k / (s.head_dim / 2)));
  return a;
}

Vec cat(std::initializer_list<Vec> parts) {
  Vec out;
  for (const Vec& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// x * cos(angle) + turn(x) * sin(angle), elementwise, angle per dim.
Vec rotate(const Vec& x, const Vec& angle, const Vec& turned) {
  Vec y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] * std::cos(angle[i]) + turned[i] * std::sin(angle[i]);
  return y;
}

Vec rotate_half(const Vec& x) {  // cat(-x2, x1)
  const std::size_t h = x.size() / 2;
  Vec out(x.size());
  for (std::size_t i = 0; i < h; ++i) out[i] = -x[h + i], out[h + i] = x[i];
  return out;
}

Vec rotate_pairwise(const Vec& x) {  // (-x1, x0, -x3, x2, ...)
  Vec out(x.size());
  for (std::size_t i = 0; i < x.size(); i += 2) out[i] = -x[i + 1], out[i + 1] = x[i];
  return out;
}

Vec repeat_interleave(const Vec& a) {
  Vec out;
  for (double v : a) out.insert(out.end(), {v, v});
  return out;
}

Vec oracle(const Rope2dSpec& s, std::int64_t row, std::int64_t col, Vec x) {
  const std::int64_t rows[] = {row}, cols[] = {col};
  ref::rope2d_apply<double>(s, 1, rows, cols, std::span<double>(x));
  return x;
}

Vec random_head(int d, std::mt19937_64& rng) {
  std::normal_distribution<double> n;
  Vec x(static_cast<std::size_t>(d));
  for (double& v : x) v = n(rng);
  return x;
}

void expect_near(const Vec& got, const Vec& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-9) << "dim " << i;
}

const std::int64_t kPositions[][2] = {{0, 0}, {3, 5}, {17, 2}, {63, 63}, {1000, 7}};

TEST(Rope2dReference, WholeHeadIsQwen2VlVisionRotary) {
  std::mt19937_64 rng(test_seed());
  const Rope2dSpec s{
      .head_dim = 80, .base = 10000, .layout = RopeLayout::half_split, .pairing = Rope2dPairing::whole_head};
  for (const auto& [r, c] : kPositions) {
    const Vec x = random_head(s.head_dim, rng), hw = cat({axis_angles(s, r), axis_angles(s, c)});
    expect_near(oracle(s, r, c, x), rotate(x, cat({hw, hw}), rotate_half(x)));
  }
}

TEST(Rope2dReference, SplitIsPixtralVisionRotary) {
  // PixtralVisionRotaryEmbedding: inv_freq = base^(-2i/d) for i < d/2, the row's the even-indexed
  // ones, the column's the odd-indexed ones, cos = [h, w, h, w] and one rotate_half over the head.
  std::mt19937_64 rng(test_seed());
  const Rope2dSpec s{.head_dim = 64,
                     .base = 10000,
                     .layout = RopeLayout::half_split,
                     .pairing = Rope2dPairing::whole_head,
                     .frequencies = Rope2dFrequencies::split};
  for (const auto& [r, c] : kPositions) {
    Vec h, w;
    for (int k = 0; k < s.head_dim / 4; ++k) {
      h.push_back(double(r) * std::pow(s.base, -2.0 * (2 * k) / s.head_dim));
      w.push_back(double(c) * std::pow(s.base, -2.0 * (2 * k + 1) / s.head_dim));
    }
    const Vec x = random_head(s.head_dim, rng);
    expect_near(oracle(s, r, c, x), rotate(x, cat({h, w, h, w}), rotate_half(x)));
  }
  EXPECT_EQ(s.describe(), "rope2d(layout=half_split,d=64,base=10000,pairing=whole_head,frequencies=split)");
}

TEST(Rope2dReference, InterleavedIsSam2EitherPairing) {
  std::mt19937_64 rng(test_seed());
  for (const Rope2dPairing pairing : {Rope2dPairing::per_half, Rope2dPairing::whole_head}) {
    const Rope2dSpec s{.head_dim = 64, .base = 10000, .layout = RopeLayout::interleaved, .pairing = pairing};
    for (const auto& [r, c] : kPositions) {
      const Vec x = random_head(s.head_dim, rng);
      const Vec angle = repeat_interleave(cat({axis_angles(s, r), axis_angles(s, c)}));
      expect_near(oracle(s, r, c, x), rotate(x, angle, rotate_pairwise(x)));
    }
  }
}

TEST(Rope2dReference, PerHalfIsGemma4Vision) {
  std::mt19937_64 rng(test_seed());
  const Rope2dSpec s{.head_dim = 64, .base = 100, .layout = RopeLayout::half_split};
  const std::size_t half = 32;
  for (const auto& [r, c] : kPositions) {
    const Vec x = random_head(s.head_dim, rng), h = axis_angles(s, r), w = axis_angles(s, c);
    const Vec x1(x.begin(), x.begin() + half), x2(x.begin() + half, x.end());
    expect_near(oracle(s, r, c, x),
                cat({rotate(x1, cat({h, h}), rotate_half(x1)), rotate(x2, cat({w, w}), rotate_half(x2))}));
  }
}

TEST(Rope2dReference, PairingsDifferOnlyInHalfSplit) {
  std::mt19937_64 rng(test_seed());
  const Vec x = random_head(16, rng);
  Rope2dSpec per{.head_dim = 16, .base = 100, .layout = RopeLayout::half_split}, whole = per;
  whole.pairing = Rope2dPairing::whole_head;
  EXPECT_GT(std::fabs(oracle(per, 3, 5, x)[4] - oracle(whole, 3, 5, x)[4]), 1e-3);  // a real difference
  EXPECT_EQ(whole.describe(), "rope2d(layout=half_split,d=16,base=100,pairing=whole_head)");
  EXPECT_EQ(per.describe(), "rope2d(layout=half_split,d=16,base=100)");
}

// The backends' whole_head is the per-half kernel with a head's middle quarters exchanged: on the
// scalar kernel in f32 it rounds exactly as per_half does on the permuted input.
TEST(Rope2dReference, QuarterExchangeMatchesTheOracle) {
  std::mt19937_64 rng(test_seed());
  const Rope2dSpec s{
      .head_dim = 32, .base = 10000, .layout = RopeLayout::half_split, .pairing = Rope2dPairing::whole_head};
  const std::vector<std::int64_t> rows = {0, 9, 40}, cols = {2, 33, 1};
  const int heads = 2;
  std::vector<float> x(rows.size() * heads * 32);
  std::normal_distribution<float> n;
  for (float& v : x) v = n(rng);
  std::vector<double> want(x.begin(), x.end());
  ref::rope2d_apply<double>(s, heads, rows, cols, std::span<double>(want));
  std::vector<float> got = x;
  rope2d_by_halves(Rope2dApply{s, DType::f32, heads, rows, cols, got}, [&](const Rope2dSpec& per, std::span<float> y) {
    EXPECT_EQ(per.pairing, Rope2dPairing::per_half);
    scalar::rope2d_apply(per, DType::f32, heads, rows, cols, y);
  });
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5 * (1 + std::fabs(want[i]))) << i;
}

}  // namespace
