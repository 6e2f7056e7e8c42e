// The rules transformers 5 added to the catalogue, against transformers' formulas evaluated here by
// hand (modeling_rope_utils.py's _compute_yarn_parameters and _compute_proportional_rope_parameters,
// written out in long double): YaRN with truncate false (the correction range's real ends), YaRN's
// attention factor from attention_factor or mscale / mscale_all_dim, and the proportional rope_type
// (the first int(f * head_dim // 2) pairs at base^(-2i/head_dim) / factor, the rest at 0). The
// 50-digit reference (reference/rope_scaling.hpp) and the kernels' frequencies
// (impl/rope_frequencies.hpp) must both give them; a dump made by the reference under each rule
// reads back as that rule when the manifest states it, and from the data alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>

#include "dumpcheck/convention_fit.hpp"
#include "impl/rope_frequencies.hpp"
#include "reference/real.hpp"
#include "reference/rope.hpp"

namespace pecheck {
namespace {

using ld = long double;

/// HF's YaRN inv_freq for rotary width dim: find_correction_range (floored and ceiled when
/// truncate), linear_ramp_factor, and the blend of interpolation and extrapolation.
std::vector<ld> hf_yarn(int dim, ld base, ld factor, ld l0, ld beta_fast, ld beta_slow, bool truncate) {
  const auto correction = [&](ld rotations) {
    return (dim * std::log(l0 / (rotations * 2 * std::numbers::pi_v<ld>))) / (2 * std::log(base));
  };
  ld low = correction(beta_fast), high = correction(beta_slow);
  if (truncate) low = std::floor(low), high = std::ceil(high);
  low = std::max(low, ld(0)), high = std::min(high, ld(dim - 1));
  if (low == high) high += 0.001L;
  std::vector<ld> inv;
  for (int i = 0; i < dim / 2; ++i) {
    const ld pos_freq = std::pow(base, ld(2 * i) / dim);
    const ld extrapolation = 1 / pos_freq, interpolation = 1 / (factor * pos_freq);
    const ld ramp = std::clamp((ld(i) - low) / (high - low), ld(0), ld(1));
    const ld keep = 1 - ramp;  // inv_freq_extrapolation_factor
    inv.push_back(interpolation * (1 - keep) + extrapolation * keep);
  }
  return inv;
}

/// HF's proportional inv_freq: head_dim / 2 entries.
std::vector<ld> hf_proportional(int head_dim, ld base, ld factor, double partial_rotary_factor) {
  const int rope_angles = static_cast<int>(std::floor(partial_rotary_factor * head_dim / 2));
  std::vector<ld> inv;
  for (int i = 0; i < head_dim / 2; ++i)
    inv.push_back(i < rope_angles ? 1 / std::pow(base, ld(2 * i) / head_dim) / factor : 0);
  return inv;
}

/// Both the reference (50 digits) and the kernels' long double frequencies give `want`.
void expect_frequencies(const RopeSpec& s, const std::vector<ld>& want) {
  ASSERT_EQ(want.size(), static_cast<std::size_t>(s.rotary_dim / 2));
  for (int p = 0; p < s.rotary_dim / 2; ++p) {
    const ld w = want[static_cast<std::size_t>(p)];
    const ld ref = static_cast<ld>(ref::rope_inv_freq<ref::Mpfr50>(s, p));
    const ld impl = angles::scaled_inv_freq(s, p);
    if (w == 0) {
      EXPECT_EQ(ref, 0) << s.describe() << " pair " << p;
      EXPECT_EQ(impl, 0) << s.describe() << " pair " << p;
      continue;
    }
    EXPECT_LT(std::fabs(ref / w - 1), 1e-17L) << s.describe() << " pair " << p;
    EXPECT_LT(std::fabs(impl / w - 1), 1e-17L) << s.describe() << " pair " << p;
  }
}

RopeSpec yarn_spec(bool truncate) {
  return {.head_dim = 64,
          .rotary_dim = 64,
          .base = 10000,
          .layout = RopeLayout::half_split,
          .scaling = {.kind = RopeScalingKind::yarn,
                      .factor = 4,
                      .original_max_position = 4096,
                      .beta_fast = 32,
                      .beta_slow = 1,
                      .truncate = truncate}};
}

TEST(RopeHf5Rules, YarnWithoutTruncationKeepsTheCorrectionRangesRealEnds) {
  for (const bool truncate : {true, false})
    expect_frequencies(yarn_spec(truncate), hf_yarn(64, 10000, 4, 4096, 32, 1, truncate));
  // Not vacuous: the two differ on the pairs the ramp crosses (its ends 10.47 and 22.51 are no integers).
  int differ = 0;
  for (int p = 0; p < 32; ++p)
    differ += ref::rope_inv_freq<double>(yarn_spec(true), p) != ref::rope_inv_freq<double>(yarn_spec(false), p);
  EXPECT_GE(differ, 10);
}

TEST(RopeHf5Rules, YarnAttentionFactorFromAttentionFactorOrMscale) {
  RopeSpec s = yarn_spec(true);
  const auto get_mscale = [](ld scale, ld m) { return scale <= 1 ? ld(1) : ld(0.1) * m * std::log(scale) + 1; };
  const auto expect_magnitude = [&](ld want) {
    EXPECT_LT(std::fabs(static_cast<ld>(ref::rope_magnitude<ref::Mpfr50>(s)) / want - 1), 1e-17L) << s.describe();
    EXPECT_LT(std::fabs(s.magnitude() / want - 1), 1e-15L) << s.describe();  // the kernels' (double)
  };
  expect_magnitude(get_mscale(4, 1));  // the default, 0.1 ln s + 1
  s.scaling.mscale = 0.8, s.scaling.mscale_all_dim = 0.5;
  expect_magnitude(get_mscale(4, 0.8L) / get_mscale(4, 0.5L));
  s.scaling.mscale = 1, s.scaling.mscale_all_dim = 1;  // DeepSeek-V3's: the factor is 1
  expect_magnitude(1);
  s.scaling.attention_factor = 1.25;  // stated: it wins over mscale
  expect_magnitude(1.25L);
  s.scaling.factor = 1, s.scaling.attention_factor = 0, s.scaling.mscale = 0.8;  // s <= 1: get_mscale is 1
  expect_magnitude(1);
}

TEST(RopeHf5Rules, ProportionalTurnsTheFirstPairsOnly) {
  for (const auto& [head_dim, f, factor] : {std::tuple{16, 0.25, 2.0}, {256, 0.25, 1.0}, {10, 0.3, 1.0}}) {
    const int pairs = static_cast<int>(std::floor(f * head_dim / 2));
    const RopeSpec s{.head_dim = head_dim,
                     .rotary_dim = head_dim,
                     .base = 1e6,
                     .layout = RopeLayout::half_split,
                     .scaling = {.kind = factor == 1 ? RopeScalingKind::none : RopeScalingKind::linear,
                                 .factor = factor,
                                 .rotated_pairs = pairs}};
    s.validate();
    expect_frequencies(s, hf_proportional(head_dim, 1e6, factor, f));
  }
  // The still pairs come out as they went in, the rotated ones do not.
  const RopeSpec s{16, 16, 1e4, RopeLayout::half_split, {.rotated_pairs = 2}};
  std::vector<ref::Mpfr50> head(16);
  for (int i = 0; i < 16; ++i) head[static_cast<std::size_t>(i)] = i + 1;
  ref::rope_rotate<ref::Mpfr50>(s, 7, head);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(head[static_cast<std::size_t>(i)] == i + 1, i % 8 >= 2) << "dim " << i;
}

/// A reference dump of spec s (positions 0..40 and every power of two to 2^23), f32.
dumpcheck::Dump reference_dump(const RopeSpec& s, const dumpcheck::StatedRope& stated) {
  dumpcheck::Dump d;
  d.dir = "generated";
  d.width = s.head_dim;
  d.heads = 2;
  for (std::int64_t i = 0; i <= 40; ++i) d.positions.push_back(i);
  for (int k = 6; k <= 23; ++k) d.positions.push_back(std::int64_t{1} << k);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> uniform(-1, 1);
  for (std::size_t i = 0; i < d.tokens() * static_cast<std::size_t>(d.heads * d.width); ++i)
    d.x.push_back(round_to(DType::f32, uniform(rng)));
  std::vector<double> y = d.x;
  ref::rope_apply<double>(s, d.heads, d.positions, y);
  for (double v : y) d.y.push_back(round_to(DType::f32, v));
  d.rope = stated;
  return d;
}

TEST(RopeHf5Rules, StatedRulesReadBackFromADump) {
  // YaRN untruncated with DeepSeek-style mscale, stated as a manifest states it.
  RopeSpec y = yarn_spec(false);
  y.scaling.mscale = 0.8, y.scaling.mscale_all_dim = 0.5;
  const dumpcheck::StatedRope yarn{.layout = RopeLayout::half_split,
                                   .rotary_dim = 64,
                                   .base = 10000,
                                   .rule = RopeScalingKind::yarn,
                                   .factor = 4,
                                   .original_max_position = 4096,
                                   .truncate = false,
                                   .mscale = 0.8,
                                   .mscale_all_dim = 0.5};
  const dumpcheck::RopeFit fy = dumpcheck::fit_rope(reference_dump(y, yarn));
  EXPECT_TRUE(fy.reading.spec) << fy.text;
  EXPECT_EQ(fy.spec.describe(), y.describe()) << fy.text;
  // Proportional: 4 of 16 pairs turn, at base^(-2i/32) / 2; the others are still, never read.
  const RopeSpec p{
      32, 32, 1e4, RopeLayout::half_split, {.kind = RopeScalingKind::linear, .factor = 2, .rotated_pairs = 4}};
  const dumpcheck::StatedRope proportional{.layout = RopeLayout::half_split,
                                           .rotary_dim = 32,
                                           .base = 10000,
                                           .rule = RopeScalingKind::linear,
                                           .factor = 2,
                                           .rotated_pairs = 4};
  const dumpcheck::RopeFit fp = dumpcheck::fit_rope(reference_dump(p, proportional));
  EXPECT_TRUE(fp.reading.spec) << fp.text;
  EXPECT_EQ(fp.spec.describe(), p.describe()) << fp.text;
}

TEST(RopeHf5Rules, TheNewRulesReadFromTheDataAlone) {
  const dumpcheck::StatedRope nothing{};
  // YaRN with a stated attention factor, and DeepSeek-V3's mscale = mscale_all_dim (factor 1):
  // the magnitude the pairs carry is the factor, fitted and snapped as a base is.
  for (const double a : {1.2, 1.0}) {
    RopeSpec y = yarn_spec(true);
    y.scaling.attention_factor = a;
    const dumpcheck::RopeFit f = dumpcheck::fit_rope(reference_dump(y, nothing));
    ASSERT_TRUE(f.reading.spec) << f.text;
    EXPECT_EQ(f.spec.scaling.kind, RopeScalingKind::yarn) << f.text;
    EXPECT_EQ(f.spec.magnitude(), a) << f.text;
    EXPECT_NE(f.text.find("from the magnitude"), std::string::npos) << f.text;
  }
  // YaRN untruncated: HF's betas at L0 4096 give the ramp's real ends, which no whole-pair range does.
  const dumpcheck::RopeFit u = dumpcheck::fit_rope(reference_dump(yarn_spec(false), nothing));
  ASSERT_TRUE(u.reading.spec) << u.text;
  EXPECT_EQ(u.spec.describe(), yarn_spec(false).describe()) << u.text;
  // Proportional: the still pairs (i, i + 16), i >= 4, give it away; the first four read as linear.
  const RopeSpec p{
      32, 32, 1e4, RopeLayout::half_split, {.kind = RopeScalingKind::linear, .factor = 2, .rotated_pairs = 4}};
  const dumpcheck::RopeFit fp = dumpcheck::fit_rope(reference_dump(p, nothing));
  ASSERT_TRUE(fp.reading.spec) << fp.text;
  EXPECT_EQ(fp.spec.describe(), p.describe()) << fp.text;
  // A partial rotary wider than half the head leaves only its tail still: not proportional.
  const RopeSpec partial{32, 24, 1e4, RopeLayout::half_split};
  const dumpcheck::RopeFit fr = dumpcheck::fit_rope(reference_dump(partial, nothing));
  EXPECT_EQ(fr.spec.describe(), partial.describe()) << fr.text;
}

}  // namespace
}  // namespace pecheck
