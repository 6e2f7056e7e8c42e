// Reading a RoPE dump's scaling rule (dumpcheck/rope_rules.cpp): over every rule the catalogue
// draws (none, linear, NTK, dynamic NTK, YaRN, Llama 3, LongRoPE), layout, rotary_dim and dtype, a
// named reading always reproduces the data; frequency sets no rule makes (LongRoPE-like per-pair
// factors unstated, one pair off, a stated LongRoPE list one factor off) and manifests that state
// the wrong rule are never read as a rule; and the configurations real models ship read back with
// their parameters.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <cstdlib>
#include <numbers>
#include <random>

#include "dumpcheck/agreement.hpp"
#include "dumpcheck/convention_fit.hpp"
#include "harness/generators.hpp"
#include "reference/rope.hpp"
#include "tests/test_seed.hpp"

namespace pecheck::dumpcheck {
namespace {

[[maybe_unused]] const bool kSeeded = [] {
  const auto params = "seed=" + std::to_string(testing::test_seed());
  return setenv("RC_PARAMS", params.c_str(), /*overwrite=*/0) == 0;
}();

/// Positions 0..40, every power of two up to 2^23 and 2^24 - 1: what a dump of an arange holds.
std::vector<std::int64_t> dump_positions() {
  std::vector<std::int64_t> p;
  for (std::int64_t i = 0; i <= 40; ++i) p.push_back(i);
  for (int k = 6; k <= 23; ++k) p.push_back(std::int64_t{1} << k);
  p.push_back((1 << 24) - 1);
  return p;
}

/// A dump of x rotated by `rotate` (y from x in double), both rounded once to dt.
template <class Rotate>
Dump make_dump(const RopeSpec& shape, DType dt, int heads, std::uint32_t seed, Rotate rotate) {
  Dump d;
  d.dir = "generated";
  d.dtype = dt;
  d.width = shape.head_dim;
  d.heads = heads;
  d.positions = dump_positions();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-1, 1);
  for (std::size_t i = 0; i < d.tokens() * static_cast<std::size_t>(heads * d.width); ++i)
    d.x.push_back(round_to(dt, uniform(rng)));
  std::vector<double> y = d.x;
  rotate(d.positions, y);
  for (double v : y) d.y.push_back(round_to(dt, v));
  return d;
}

Dump reference_dump(const RopeSpec& s, DType dt, int heads, std::uint32_t seed) {
  return make_dump(s, dt, heads, seed, [&](const std::vector<std::int64_t>& pos, std::vector<double>& y) {
    ref::rope_apply<double>(s, heads, pos, y);
  });
}

/// RoPE with frequency freqs[p] for pair p (interleaved), in long double: a rule pecheck lacks.
Dump frequencies_dump(const RopeSpec& shape, const std::vector<long double>& freqs, DType dt, std::uint32_t seed) {
  return make_dump(shape, dt, 1, seed, [&](const std::vector<std::int64_t>& pos, std::vector<double>& y) {
    const std::size_t D = static_cast<std::size_t>(shape.head_dim);
    for (std::size_t tok = 0; tok < pos.size(); ++tok)
      for (std::size_t p = 0; p < freqs.size(); ++p) {
        const long double a = static_cast<long double>(pos[tok]) * freqs[p];
        const long double c = std::cos(a), s = std::sin(a);
        const double x1 = y[tok * D + 2 * p], x2 = y[tok * D + 2 * p + 1];
        y[tok * D + 2 * p] = static_cast<double>(x1 * c - x2 * s);
        y[tok * D + 2 * p + 1] = static_cast<double>(x1 * s + x2 * c);
      }
  });
}

DType any_dtype() { return *rc::gen::element(DType::f32, DType::bf16, DType::f16); }

/// The frequencies of every pair under a spec.
std::vector<double> frequencies(const RopeSpec& s) {
  std::vector<double> out;
  for (int p = 0; p < s.rotary_dim / 2; ++p) out.push_back(ref::rope_inv_freq<double>(s, p));
  return out;
}

/// A named reading must be the truth to the dump's precision: every pair the dump measured at
/// the truth's frequency within that pair's tolerance (so NTK read as plain RoPE at its base, or
/// Llama 3 whose band holds no pair read as linear, are the same function and pass), the rotated
/// pairs at the truth's magnitude. Where the truth's parameters are round (2 significant digits,
/// as the fit snaps them) the reading must also be exact: the dump agrees with the reference
/// under it at every position.
void assert_reads_the_truth(const Dump& d, const RopeFit& f, const RopeSpec& truth) {
  RC_ASSERT(f.spec.rotary_dim == truth.rotary_dim);
  RC_ASSERT(std::fabs(f.spec.magnitude() - truth.magnitude()) <= gain_tolerance(d.dtype));
  const auto read = frequencies(f.spec), made = frequencies(truth);
  for (std::size_t p = 0; p < made.size(); ++p) {
    RC_ASSERT(std::fabs(std::log(read[p] / made[p])) <= frequency_tolerance(f.measured[p], d.dtype));
  }
  const bool round = snap(truth.base) == truth.base && snap(truth.scaling.factor) == truth.scaling.factor;
  const auto k = truth.scaling.kind;
  if (round && (k == RopeScalingKind::none || k == RopeScalingKind::linear))
    RC_ASSERT(rope_agreement(d, f.spec).holds());
}

RC_GTEST_PROP(RopeRules, aNamedReadingReproducesTheRuleThatMadeTheData, ()) {
  const RopeSpec s = *gen::rope_spec(256);
  const DType dt = any_dtype();
  const Dump d = reference_dump(s, dt, *rc::gen::inRange(1, 3), *rc::gen::arbitrary<std::uint32_t>());
  RC_CLASSIFY(true, std::string(scaling_name(s.scaling.kind)));
  try {
    const RopeFit f = fit_rope(d);
    RC_LOG() << s.describe() << " " << dtype_name(dt) << " read: " << f.text << "\n";
    RC_TAG(f.reading.ambiguous ? "ambiguous" : "named");
    assert_reads_the_truth(d, f, s);
  } catch (const FitError& e) {
    // Not a misreading, but the rule is known: only a sliver of the draws (a band no pair falls
    // in, a ramp across one pair) may stay unread.
    RC_LOG() << s.describe() << " " << dtype_name(dt) << " unread: " << e.what() << "\n";
    RC_TAG("unread");
    // Plain and linear RoPE are always read, but for two pairs, which any two frequencies fit.
    RC_ASSERT((s.scaling.kind != RopeScalingKind::none && s.scaling.kind != RopeScalingKind::linear) ||
              s.rotary_dim <= 4);
  }
}

RC_GTEST_PROP(RopeRules, perPairFactorsNoRuleMakesAreNeverNamed, ()) {
  // LongRoPE rescales each pair by its own factor; here the factors are drawn at random in
  // [1, 16], rising with the pair like LongRoPE's, or one pair of plain RoPE is off by 1-5 %.
  const int pairs = *rc::gen::inRange(4, 65);
  const RopeSpec shape{.head_dim = 2 * pairs, .rotary_dim = 2 * pairs};
  const double base = *rc::gen::element(10000.0, 500000.0);
  std::vector<long double> freqs(static_cast<std::size_t>(pairs));
  for (int p = 0; p < pairs; ++p)
    freqs[static_cast<std::size_t>(p)] = std::pow(static_cast<long double>(base), -2.0L * p / (2 * pairs));
  const bool one_off = *rc::gen::arbitrary<bool>();
  if (one_off) {
    const int p = *rc::gen::inRange(1, pairs);
    freqs[static_cast<std::size_t>(p)] *= 1 + *rc::gen::inRange(1, 6) / 100.0L;
  } else {
    std::vector<int> f =
        *rc::gen::container<std::vector<int>>(static_cast<std::size_t>(pairs), rc::gen::inRange(100, 1601));
    std::sort(f.begin(), f.end());
    RC_PRE(f.back() > f.front() + 10);
    for (int p = 0; p < pairs; ++p) freqs[static_cast<std::size_t>(p)] /= f[static_cast<std::size_t>(p)] / 100.0L;
  }
  const Dump d = frequencies_dump(shape, freqs, DType::f32, *rc::gen::arbitrary<std::uint32_t>());
  RC_TAG(one_off ? "one pair off" : "per-pair factors");
  try {
    const RopeFit f = fit_rope(d);
    RC_FAIL("read as " + f.text);
  } catch (const FitError& e) {
    RC_ASSERT(std::string(e.what()).find("no known rule") != std::string::npos);
  }
}

RC_GTEST_PROP(RopeRules, aStatedRuleTheDataContradictsIsNeverNamed, ()) {
  RopeSpec s{.head_dim = 128, .rotary_dim = 128, .base = 10000, .layout = RopeLayout::half_split};
  const auto made = *rc::gen::element(RopeScalingKind::none, RopeScalingKind::linear, RopeScalingKind::llama3);
  if (made != RopeScalingKind::none) s.scaling = {.kind = made, .factor = 8, .original_max_position = 8192};
  Dump d = reference_dump(s, any_dtype(), 1, *rc::gen::arbitrary<std::uint32_t>());
  const auto stated = *rc::gen::element(RopeScalingKind::linear, RopeScalingKind::yarn, RopeScalingKind::llama3);
  RC_PRE(stated != made);
  d.rope.rule = stated;
  d.rope.factor = *rc::gen::element(2.0, 4.0, 8.0);
  try {
    const RopeFit f = fit_rope(d);
    RC_FAIL("stated " + std::string(scaling_name(stated)) + " read as " + f.text);
  } catch (const FitError& e) {
    RC_LOG() << e.what() << "\n";
  }
}

/// LongRoPE is read only as stated. With the lists that made the data (either one, base stated or
/// not) the reading is LongRoPE with the list the data used, and agrees everywhere; with one
/// factor of the used list 1-5 % off it is never named.
RC_GTEST_PROP(RopeRules, longropeReadsAsStatedAndNeverWithAWrongList, ()) {
  RopeSpec s = *gen::rope_spec(128, false);
  s.scaling = {
      .kind = RopeScalingKind::longrope, .factor = *rc::gen::element(4.0, 16.0, 32.0), .original_max_position = 4096};
  gen::longrope_lists(s.scaling, s.rotary_dim, *rc::gen::arbitrary<std::uint32_t>());
  const bool long_list = *rc::gen::arbitrary<bool>();
  s.scaling.seq_len = long_list ? 131072 : 4096;
  const DType dt = any_dtype();
  Dump d = reference_dump(s, dt, 1, *rc::gen::arbitrary<std::uint32_t>());
  d.rope.rule = RopeScalingKind::longrope;
  d.rope.factor = s.scaling.factor;
  d.rope.original_max_position = 4096;
  d.rope.rotary_dim = s.rotary_dim;
  d.rope.short_factor = s.scaling.short_factor;
  d.rope.long_factor = s.scaling.long_factor;
  const bool base_stated = *rc::gen::arbitrary<bool>();
  if (base_stated) d.rope.base = s.base;
  const bool wrong = *rc::gen::arbitrary<bool>();
  if (wrong) {
    auto& used = long_list ? *d.rope.long_factor : *d.rope.short_factor;
    used[static_cast<std::size_t>(*rc::gen::inRange(0, s.rotary_dim / 2))] *= 1 + *rc::gen::inRange(1, 6) / 100.0;
  }
  RC_TAG(wrong ? "one factor off" : "as made", long_list ? "long" : "short");
  try {
    const RopeFit f = fit_rope(d);
    RC_LOG() << s.describe() << " " << dtype_name(dt) << " read: " << f.text << "\n";
    // With two pairs and the base fitted, pair 0 does not depend on the base, so the base fitted
    // to pair 1 absorbs a wrong factor there: the reading is that other base, exactly (the same
    // function), not a wrong rule.
    RC_ASSERT(!wrong || (!base_stated && s.rotary_dim <= 4));
    if (wrong) return;
    RC_ASSERT(f.spec.scaling.kind == RopeScalingKind::longrope);
    RC_ASSERT((f.spec.scaling.seq_len > 4096) == long_list || f.reading.ambiguous);
    assert_reads_the_truth(d, f, s);
  } catch (const FitError& e) {
    RC_LOG() << s.describe() << " " << dtype_name(dt) << " unread: " << e.what() << "\n";
    // A wrong factor on a pair the dump turns too little to read cannot be seen; any other is.
    RC_ASSERT(wrong || s.rotary_dim <= 4);
  }
}

/// The configurations real models ship, each read back with its parameters.
struct Shipped {
  const char* model;
  RopeSpec spec;
};

TEST(RopeRules, ShippedConfigurationsReadBackWithTheirParameters) {
  const std::vector<Shipped> shipped = {
      {"Llama 3.1 (llama3, factor 8, low 1, high 4, L0 8192)",
       {128,
        128,
        500000,
        RopeLayout::half_split,
        {.kind = RopeScalingKind::llama3, .factor = 8, .original_max_position = 8192}}},
      {"YaRN x4 (L0 4096, betas 32/1)",
       {128,
        128,
        10000,
        RopeLayout::half_split,
        {.kind = RopeScalingKind::yarn, .factor = 4, .original_max_position = 4096}}},
      {"linear x4", {128, 128, 10000, RopeLayout::half_split, {.kind = RopeScalingKind::linear, .factor = 4}}},
      {"GPT-NeoX rotary_pct 0.25", {128, 32, 10000, RopeLayout::half_split, {}}},
      {"default base 500000", {128, 128, 500000, RopeLayout::half_split, {}}},
  };
  for (const auto& [model, s] : shipped)
    for (DType dt : {DType::f32, DType::bf16}) {
      const Dump d = reference_dump(s, dt, 2, 7);
      const RopeFit f = fit_rope(d);
      SCOPED_TRACE(std::string(model) + " " + std::string(dtype_name(dt)) + ": " + f.text);
      EXPECT_FALSE(f.reading.ambiguous);
      EXPECT_EQ(f.spec.scaling.kind, s.scaling.kind);
      EXPECT_EQ(f.spec.base, s.base);
      EXPECT_EQ(f.spec.scaling.factor, s.scaling.factor);
      if (s.scaling.kind == RopeScalingKind::llama3) {
        EXPECT_EQ(f.spec.scaling.low_freq_factor, 1);
        EXPECT_EQ(f.spec.scaling.high_freq_factor, 4);
      }
      EXPECT_TRUE(rope_agreement(d, f.spec).holds());
    }
}

TEST(RopeRules, DynamicNtkReadsAgainstTheStatedBaseWithItsLength) {
  const RopeSpec s{128,
                   128,
                   10000,
                   RopeLayout::half_split,
                   {.kind = RopeScalingKind::dynamic_ntk, .factor = 4, .original_max_position = 2048, .seq_len = 8192}};
  Dump d = reference_dump(s, DType::f32, 1, 3);
  {  // unstated, it is plain RoPE at a larger base: the same function
    const RopeFit f = fit_rope(d);
    EXPECT_EQ(f.spec.scaling.kind, RopeScalingKind::none) << f.text;
    EXPECT_TRUE(rope_agreement(d, f.spec).holds()) << f.text;
  }
  d.rope.base = 10000;
  d.rope.rule = RopeScalingKind::dynamic_ntk;
  d.rope.factor = 4;
  d.rope.original_max_position = 2048;
  const RopeFit f = fit_rope(d);
  EXPECT_EQ(f.spec.scaling.kind, RopeScalingKind::dynamic_ntk) << f.text;
  EXPECT_EQ(f.spec.scaling.seq_len, 8192) << f.text;
}

}  // namespace
}  // namespace pecheck::dumpcheck
