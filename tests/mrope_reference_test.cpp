// The M-RoPE oracle (reference/mrope.hpp, spec/mrope.hpp): the pair-to-axis tables of Qwen2-VL
// and Qwen3-VL written out by hand from HF's code, the reduction to 1-D RoPE for text tokens
// (t == h == w, bit for bit), relativity in 3-D, the uniform shift that llama.cpp's KV-cache
// shift relies on, and the spec's validation. Sources: docs/notes/mrope-bugs.md.

#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "reference/mrope.hpp"
#include "reference/real.hpp"
#include "reference/rope.hpp"
#include "spec/mrope.hpp"
#include "tests/test_seed.hpp"

namespace {

using namespace pecheck;
using Pos = std::array<std::int64_t, 3>;

// Written out by hand, not by the formula under test. Qwen2-VL: cos.split([16, 24, 24] * 2) and
// chunk i takes stream i % 3, so pairs 0-15 are T, 16-39 H, 40-63 W (each pair's two dims share it).
const std::string kQwen2Vl =
    "TTTTTTTTTTTTTTTT"
    "HHHHHHHHHHHHHHHHHHHHHHHH"
    "WWWWWWWWWWWWWWWWWWWWWWWW";
// Qwen3-VL [24, 20, 20]: H overwrites slice(1, 60, 3) = 1, 4, ..., 58, W slice(2, 60, 3) = 2, ..., 59,
// and 60-63 keep T.
const std::string kQwen3Vl =
    "THWTHWTHWTHWTHWTHWTHWTHWTHWTHW"
    "THWTHWTHWTHWTHWTHWTHWTHWTHWTHW"
    "TTTT";
// Qwen3.5's [11, 11, 10] over 32 pairs: slice(1, 33, 3) reaches pair 31, slice(2, 30, 3) stops at 29.
const std::string kQwen35 = "THWTHWTHWTHWTHWTHWTHWTHWTHWTHWTH";

constexpr MropeSpec kQwen2VlSpec{128, 1e6, {16, 24, 24}, MropeAssignment::sectioned, RopeLayout::half_split};
constexpr MropeSpec kQwen3VlSpec{128, 5e6, {24, 20, 20}, MropeAssignment::interleaved, RopeLayout::half_split};
// Qwen3.5's rotated 64 dims only (head_dim 256, partial_rotary_factor 0.25): MropeSpec has no rotary_dim.
constexpr MropeSpec kQwen35Spec{64, 1e7, {11, 11, 10}, MropeAssignment::interleaved, RopeLayout::half_split};

static_assert(mrope_axis(kQwen2VlSpec, 15) == kMropeTemporal && mrope_axis(kQwen2VlSpec, 16) == kMropeHeight);
static_assert(mrope_axis(kQwen2VlSpec, 39) == kMropeHeight && mrope_axis(kQwen2VlSpec, 40) == kMropeWidth);
static_assert(mrope_pair_counts(kQwen3VlSpec) == std::array{24, 20, 20});

int axis_of(char c) { return c == 'T' ? kMropeTemporal : c == 'H' ? kMropeHeight : kMropeWidth; }

MropeSpec with_layout(MropeSpec s, RopeLayout l) {
  s.layout = l;
  return s;
}

/// n nonzero values k/64, |k| <= 4096: exact in every Real.
template <class Real>
std::vector<Real> draw_values(std::mt19937_64& rng, std::size_t n) {
  std::uniform_int_distribution<int> k(-4096, 4095);
  std::vector<Real> x;
  for (std::size_t i = 0; i < n; ++i) {
    const int v = k(rng);
    x.push_back(Real(v >= 0 ? v + 1 : v) / 64);
  }
  return x;
}

/// One head of x rotated to pos.
template <class Real>
std::vector<Real> rotated(const MropeSpec& s, const Pos& pos, std::vector<Real> x) {
  const std::int64_t t[] = {pos[0]}, h[] = {pos[1]}, w[] = {pos[2]};
  ref::mrope_apply<Real>(s, 1, t, h, w, std::span<Real>(x));
  return x;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

TEST(MropeSpec, AxisTablesMatchHfByHand) {
  for (const auto& [spec, table] :
       {std::pair{kQwen2VlSpec, kQwen2Vl}, std::pair{kQwen3VlSpec, kQwen3Vl}, std::pair{kQwen35Spec, kQwen35}}) {
    ASSERT_EQ(table.size(), static_cast<std::size_t>(spec.pairs())) << spec.describe();
    for (int p = 0; p < spec.pairs(); ++p)
      EXPECT_EQ(mrope_axis(spec, p), axis_of(table[static_cast<std::size_t>(p)])) << spec.describe() << " pair " << p;
    EXPECT_EQ(mrope_pair_counts(spec), spec.mrope_section) << spec.describe();
  }
}

TEST(MropeSpec, InterleavedSlicesSaturateLikeHf) {
  // [10, 11, 11] over 32 pairs: slice(2, 33, 3) runs past the row, so W gets 10 pairs, T 11.
  MropeSpec s = kQwen35Spec;
  s.mrope_section = {10, 11, 11};
  ASSERT_NO_THROW(s.validate());
  for (int p = 0; p < s.pairs(); ++p) EXPECT_EQ(mrope_axis(s, p), mrope_axis(kQwen35Spec, p)) << "pair " << p;
  EXPECT_EQ(mrope_pair_counts(s), (std::array{11, 11, 10}));
}

TEST(MropeReference, EachPairFollowsItsAxis) {
  // Only one axis away from 0: the pairs of that axis turn exactly as 1-D RoPE at that position,
  // every other pair is left bit for bit (angle 0: cos 1, sin 0).
  std::mt19937_64 rng(pecheck::testing::test_seed());
  for (const auto& [base_spec, table] :
       {std::pair{kQwen2VlSpec, kQwen2Vl}, std::pair{kQwen3VlSpec, kQwen3Vl}, std::pair{kQwen35Spec, kQwen35}})
    for (RopeLayout layout : {RopeLayout::half_split, RopeLayout::interleaved})
      for (int axis = 0; axis < 3; ++axis) {
        const MropeSpec s = with_layout(base_spec, layout);
        const std::vector<double> x = draw_values<double>(rng, static_cast<std::size_t>(s.head_dim));
        Pos pos{0, 0, 0};
        pos[static_cast<std::size_t>(axis)] = 7;
        const std::vector<double> y = rotated(s, pos, x);
        std::vector<double> one_d = x;
        const std::int64_t seven[] = {7};
        ref::rope_apply<double>(s.rope(), 1, seven, std::span<double>(one_d));
        for (int p = 0; p < s.pairs(); ++p) {
          const bool moves = axis_of(table[static_cast<std::size_t>(p)]) == axis;
          const auto [a, b] = ref::rope_pair(s.rope(), p);
          for (int d : {a, b}) {
            const auto i = static_cast<std::size_t>(d);
            EXPECT_EQ(std::bit_cast<std::uint64_t>(y[i]), std::bit_cast<std::uint64_t>(moves ? one_d[i] : x[i]))
                << s.describe() << " axis " << axis << " pair " << p << " dim " << d;
          }
        }
        EXPECT_NE(y, x) << s.describe() << ": no pair moved";
      }
}

template <class Real>
void check_reduces_to_1d(const MropeSpec& s, std::mt19937_64& rng, int heads, std::size_t tokens) {
  std::uniform_int_distribution<std::int64_t> position(-(std::int64_t{1} << 24), std::int64_t{1} << 24);
  std::vector<std::int64_t> pos{0, 1, -1, (std::int64_t{1} << 24) - 1};
  while (pos.size() < tokens) pos.push_back(position(rng));
  const std::vector<Real> x =
      draw_values<Real>(rng, pos.size() * static_cast<std::size_t>(heads) * static_cast<std::size_t>(s.head_dim));
  std::vector<Real> m = x, r = x;
  ref::mrope_apply<Real>(s, heads, pos, pos, pos, std::span<Real>(m));
  ref::rope_apply<Real>(s.rope(), heads, pos, std::span<Real>(r));
  for (std::size_t i = 0; i < x.size(); ++i) {
    if constexpr (std::is_same_v<Real, double>)
      ASSERT_EQ(std::bit_cast<std::uint64_t>(m[i]), std::bit_cast<std::uint64_t>(r[i])) << s.describe() << " at " << i;
    else
      ASSERT_TRUE(m[i] == r[i]) << s.describe() << " at " << i;
  }
}

TEST(MropeReference, TextTokensAreOneDimensionalRope) {
  std::mt19937_64 rng(pecheck::testing::test_seed());
  for (const MropeSpec& base_spec : {kQwen2VlSpec, kQwen3VlSpec, kQwen35Spec})
    for (MropeAssignment assignment : {MropeAssignment::sectioned, MropeAssignment::interleaved})
      for (RopeLayout layout : {RopeLayout::half_split, RopeLayout::interleaved}) {
        MropeSpec s = with_layout(base_spec, layout);
        s.assignment = assignment;
        check_reduces_to_1d<double>(s, rng, 3, 24);
      }
  const MropeSpec small{16, 1e4, {2, 3, 3}};
  for (MropeAssignment assignment : {MropeAssignment::sectioned, MropeAssignment::interleaved})
    for (RopeLayout layout : {RopeLayout::half_split, RopeLayout::interleaved}) {
      MropeSpec s = with_layout(small, layout);
      s.assignment = assignment;
      check_reduces_to_1d<ref::DefaultReal>(s, rng, 2, 6);
    }
}

TEST(MropeReference, ScoreDependsOnlyOnTheOffset) {
  // <R(a) q, R(b) k> = <R(a + c) q, R(b + c) k> for any 3-D shift c.
  std::mt19937_64 rng(pecheck::testing::test_seed());
  std::uniform_int_distribution<std::int64_t> coord(-5000, 5000);
  const auto draw_pos = [&] { return Pos{coord(rng), coord(rng), coord(rng)}; };
  for (const MropeSpec& base_spec : {kQwen2VlSpec, kQwen3VlSpec, kQwen35Spec})
    for (RopeLayout layout : {RopeLayout::half_split, RopeLayout::interleaved})
      for (int round = 0; round < 20; ++round) {
        const MropeSpec s = with_layout(base_spec, layout);
        const auto n = static_cast<std::size_t>(s.head_dim);
        const std::vector<double> q = draw_values<double>(rng, n), k = draw_values<double>(rng, n);
        const Pos a = draw_pos(), b = draw_pos(), c = draw_pos();
        const Pos ac{a[0] + c[0], a[1] + c[1], a[2] + c[2]}, bc{b[0] + c[0], b[1] + c[1], b[2] + c[2]};
        const double scale = std::sqrt(dot(q, q) * dot(k, k));
        // Angles are pos * inv_freq with |pos| <= 10^4: each carries ~10^4 u of error.
        const double tol = 64.0 * s.head_dim * std::numeric_limits<double>::epsilon() * 1e4 * scale;
        const double score = dot(rotated(s, a, q), rotated(s, b, k));
        EXPECT_NEAR(score, dot(rotated(s, ac, q), rotated(s, bc, k)), tol) << s.describe() << " round " << round;
      }
}

TEST(MropeReference, EveryAxisOffsetMovesTheScore) {
  // No vacuous relativity: with q = k = one dim of the first pair p of an axis, moving that axis
  // by D ~ (pi/2) / inv_freq_p takes the score from 1 to about cos(pi/2) = 0.
  for (const MropeSpec& base_spec : {kQwen2VlSpec, kQwen3VlSpec, kQwen35Spec})
    for (RopeLayout layout : {RopeLayout::half_split, RopeLayout::interleaved})
      for (int axis = 0; axis < 3; ++axis) {
        const MropeSpec s = with_layout(base_spec, layout);
        int p = 0;
        while (p < s.pairs() && mrope_axis(s, p) != axis) ++p;
        ASSERT_LT(p, s.pairs()) << s.describe() << ": no pair on axis " << axis;
        std::vector<double> q(static_cast<std::size_t>(s.head_dim), 0.0);
        q[static_cast<std::size_t>(ref::rope_pair(s.rope(), p).first)] = 1.0;
        const double inv_freq = std::pow(s.base, -2.0 * p / s.head_dim);
        Pos moved{0, 0, 0};
        moved[static_cast<std::size_t>(axis)] = std::llround(std::acos(-1.0) / 2 / inv_freq);
        EXPECT_EQ(dot(rotated(s, Pos{0, 0, 0}, q), rotated(s, Pos{0, 0, 0}, q)), 1.0);
        EXPECT_LT(std::abs(dot(rotated(s, moved, q), rotated(s, Pos{0, 0, 0}, q))), 0.5)
            << s.describe() << " axis " << axis << " pair " << p;
      }
}

TEST(MropeReference, UniformShiftIsOneDimensionalRope) {
  // R(t + d, h + d, w + d) = R_1d(d) R(t, h, w): every pair moves by d whatever its axis, which is
  // what re-rotating an M-RoPE KV cache by a 1-D shift needs (llama.cpp PR 13870).
  std::mt19937_64 rng(pecheck::testing::test_seed());
  std::uniform_int_distribution<std::int64_t> coord(-5000, 5000);
  for (const MropeSpec& base_spec : {kQwen2VlSpec, kQwen3VlSpec})
    for (RopeLayout layout : {RopeLayout::half_split, RopeLayout::interleaved}) {
      const MropeSpec s = with_layout(base_spec, layout);
      const std::vector<double> x = draw_values<double>(rng, static_cast<std::size_t>(s.head_dim));
      const Pos p{coord(rng), coord(rng), coord(rng)};
      const std::int64_t d = coord(rng);
      const std::vector<double> direct = rotated(s, Pos{p[0] + d, p[1] + d, p[2] + d}, x);
      std::vector<double> shifted = rotated(s, p, x);
      const std::int64_t delta[] = {d};
      ref::rope_apply<double>(s.rope(), 1, delta, std::span<double>(shifted));
      const double tol = 64.0 * std::numeric_limits<double>::epsilon() * 1e4 * std::sqrt(dot(x, x));
      for (std::size_t i = 0; i < x.size(); ++i)
        EXPECT_NEAR(direct[i], shifted[i], tol) << s.describe() << " dim " << i;
    }
}

TEST(MropeSpec, ValidateNamesTheFault) {
  ASSERT_NO_THROW(kQwen2VlSpec.validate());
  EXPECT_EQ(kQwen2VlSpec.describe(), "mrope(sectioned,layout=half_split,d=128,base=1000000,section=16/24/24)");
  const auto message = [](MropeSpec s) -> std::string {
    try {
      s.validate();
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "(accepted)";
  };
  MropeSpec s = kQwen2VlSpec;
  s.head_dim = 127;
  EXPECT_EQ(message(s), "M-RoPE head_dim must be even and > 0, got 127");
  s.head_dim = 0;
  EXPECT_EQ(message(s), "M-RoPE head_dim must be even and > 0, got 0");
  s = kQwen2VlSpec;
  s.mrope_section = {0, 32, 32};
  EXPECT_EQ(message(s), "M-RoPE mrope_section entries must be > 0, got [0, 32, 32]");
  s.mrope_section = {-1, 33, 32};
  EXPECT_EQ(message(s), "M-RoPE mrope_section entries must be > 0, got [-1, 33, 32]");
  s.mrope_section = {16, 24, 23};
  EXPECT_EQ(message(s), "M-RoPE mrope_section [16, 24, 23] must sum to head_dim/2 = 64, got 63");
  s.mrope_section = {32, 48, 48};  // the sum over the whole head_dim, not its half
  EXPECT_EQ(message(s), "M-RoPE mrope_section [32, 48, 48] must sum to head_dim/2 = 64, got 128");
  s = kQwen2VlSpec;
  for (double bad : {1.0, 0.5, std::nan(""), std::numeric_limits<double>::infinity()}) {
    s.base = bad;
    EXPECT_NE(message(s).find("M-RoPE base (rope_theta) must be finite and > 1"), std::string::npos) << bad;
  }
}

TEST(MropeReference, RefusesMisshapenInput) {
  std::vector<double> x(2 * 128, 1.0);
  const std::vector<std::int64_t> two{0, 1}, one{0};
  EXPECT_THROW(ref::mrope_apply<double>(kQwen2VlSpec, 1, two, one, two, std::span<double>(x)), std::invalid_argument);
  EXPECT_THROW(ref::mrope_apply<double>(kQwen2VlSpec, 2, two, two, two, std::span<double>(x)), std::invalid_argument);
  EXPECT_THROW(ref::mrope_apply<double>(kQwen2VlSpec, 0, two, two, two, std::span<double>(x)), std::invalid_argument);
  EXPECT_NO_THROW(ref::mrope_apply<double>(kQwen2VlSpec, 1, two, two, two, std::span<double>(x)));
}

}  // namespace
