// The scalar kernels as a baseline: bad input is refused with a clear message, every output
// element is written and nothing else, outputs are values of the storage dtype, and the accurate
// angles really are accurate. Every optimized backend is measured against these kernels, so a
// silent overrun or a wrong angle here would move every other verdict.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "impl/alibi_slopes.hpp"
#include "impl/angles.hpp"
#include "impl/scalar/kernels.hpp"

namespace {

using namespace pecheck;
using Positions = std::vector<std::int64_t>;

/// Runs f and requires exception E whose message names the offending parameter.
template <class E>
void expect_throw_naming(const std::function<void()>& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one mentioning '" << needle << "'";
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << "message: " << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

TEST(ScalarKernels, InvalidSpecsAndShapesThrowInvalidArgument) {
  using IA = std::invalid_argument;
  std::vector<float> buf(4096, 0.0f);
  const std::span<float> b(buf);
  const Positions two{0, 1};
  const auto rope = [&](RopeSpec s, int heads, std::size_t n) {
    return [=] { scalar::rope_apply(s, DType::f32, heads, two, b.first(n)); };
  };
  expect_throw_naming<IA>(rope({7, 6}, 1, 14), "head_dim must be even");
  expect_throw_naming<IA>(rope({8, 10}, 1, 16), "rotary_dim");
  expect_throw_naming<IA>(rope({8, 3}, 1, 16), "rotary_dim");
  expect_throw_naming<IA>(rope({8, 8, 1.0}, 1, 16), "base");
  expect_throw_naming<IA>(rope({8, 8}, 0, 0), "heads > 0");
  expect_throw_naming<IA>(rope({8, 8}, -2, 16), "heads > 0");
  expect_throw_naming<IA>(rope({8, 8}, 1, 15), "RoPE input has 15 elements, expected 16");

  const auto sin_call = [&](SinusoidalSpec s, std::size_t n) {
    return [=] { scalar::sinusoidal_table(s, DType::bf16, two, b.first(n)); };
  };
  expect_throw_naming<IA>(sin_call({7}, 14), "d_model must be even");
  expect_throw_naming<IA>(sin_call({0}, 0), "d_model must be even");
  expect_throw_naming<IA>(sin_call({8, 0.5}, 16), "base must be > 1");
  expect_throw_naming<IA>(sin_call({8}, 17), "sinusoidal output has 17 elements, expected 16");

  expect_throw_naming<IA>([&] { scalar::learned_add({4, 3}, DType::f32, b.first(11), two, b.first(6)); },
                          "learned table has 11 elements, expected 12");
  expect_throw_naming<IA>([&] { scalar::learned_add({4, 3}, DType::f32, b.first(12), two, b.first(5)); },
                          "learned input has 5 elements");
  expect_throw_naming<IA>([&] { scalar::alibi_bias({0}, DType::f32, two, b.first(0)); }, "heads > 0");
  expect_throw_naming<IA>([&] { scalar::alibi_bias({-1}, DType::f32, two, b.first(0)); }, "heads > 0");
  expect_throw_naming<IA>([&] { scalar::alibi_bias({2}, DType::f32, two, b.first(4)); },
                          "ALiBi output has 4 elements, expected 8");

  const auto shaw = [&](ShawSpec s, std::size_t q, std::size_t k, std::size_t t, std::size_t o) {
    return [=] { scalar::shaw_scores(s, DType::f32, b.first(q), b.first(k), b.first(t), two, b.first(o)); };
  };
  expect_throw_naming<IA>(shaw({-1, 4}, 8, 8, 4, 4), "K >= 0");
  expect_throw_naming<IA>(shaw({1, 4}, 7, 8, 12, 4), "Shaw q");
  expect_throw_naming<IA>(shaw({1, 4}, 8, 9, 12, 4), "Shaw k");
  expect_throw_naming<IA>(shaw({1, 4}, 8, 8, 8, 4), "Shaw table has 8 elements, expected 12");
  expect_throw_naming<IA>(shaw({1, 4}, 8, 8, 12, 3), "Shaw output");

  const auto attn = [&](AttentionSpec s, std::size_t q, std::size_t k, std::size_t v, std::size_t t,
                        std::size_t o) {
    return [=] { scalar::attention(s, DType::f32, two, b.first(q), b.first(k), b.first(v), b.first(t), b.first(o)); };
  };
  expect_throw_naming<IA>(attn({.heads = 0, .head_dim = 4}, 0, 0, 0, 0, 0), "heads, head_dim > 0");
  expect_throw_naming<IA>(attn({.heads = 2, .head_dim = 4}, 15, 16, 16, 0, 16), "attention q");
  expect_throw_naming<IA>(attn({.heads = 2, .head_dim = 4}, 16, 16, 17, 0, 16), "attention v");
  expect_throw_naming<IA>(attn({.heads = 2, .head_dim = 4}, 16, 16, 16, 0, 8), "attention output");
  expect_throw_naming<IA>(attn({.heads = 2, .head_dim = 3, .pe = AttentionPE::rope}, 12, 12, 12, 0, 12),
                          "head_dim must be even");
  expect_throw_naming<IA>(attn({.heads = 2, .head_dim = 4, .pe = AttentionPE::shaw, .shaw_max_distance = 1},
                               16, 16, 16, 4, 16),
                          "attention Shaw table has 4 elements, expected 12");
}

TEST(ScalarKernels, LearnedPositionOutsideTheTableThrowsOutOfRange) {
  const LearnedSpec s{4, 2};
  const std::vector<float> table(8, 1.0f);
  for (std::int64_t bad : {std::int64_t{-1}, std::int64_t{4}, std::int64_t{1} << 40,
                           std::numeric_limits<std::int64_t>::min()}) {
    std::vector<float> x(4, 0.0f);
    const Positions pos{0, bad};
    expect_throw_naming<std::out_of_range>([&] { scalar::learned_add(s, DType::f32, table, pos, x); },
                                           "outside the table [0, 4)");
  }
  std::vector<float> x(4, 0.0f);
  const Positions edge{0, 3};  // both ends of the table are fine
  EXPECT_NO_THROW(scalar::learned_add(s, DType::f32, table, edge, x));
}

/// A buffer with kGuard sentinels on each side of an n-element body that starts out NaN.
class Guarded {
 public:
  static constexpr std::size_t kGuard = 64;
  static constexpr std::uint32_t kSentinel = 0x7FA5A5A5u;  // a NaN payload no kernel produces

  explicit Guarded(std::size_t n) : buf_(n + 2 * kGuard, std::bit_cast<float>(kSentinel)), n_(n) {
    std::fill(body().begin(), body().end(), std::numeric_limits<float>::quiet_NaN());
  }
  std::span<float> body() { return std::span<float>(buf_).subspan(kGuard, n_); }
  /// Index (relative to the body) of the first clobbered guard, or 0 when all are intact.
  std::ptrdiff_t clobbered() const {
    for (std::size_t i = 0; i < buf_.size(); ++i)
      if ((i < kGuard || i >= kGuard + n_) && std::bit_cast<std::uint32_t>(buf_[i]) != kSentinel)
        return static_cast<std::ptrdiff_t>(i) - static_cast<std::ptrdiff_t>(kGuard);
    return 0;
  }

 private:
  std::vector<float> buf_;
  std::size_t n_;
};

/// Values of the dtype, drawn from [-2, 2).
std::vector<float> random_values(DType dt, std::size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  std::vector<float> v(n);
  for (float& x : v) x = round_to(dt, u(rng));
  return v;
}

/// (b) no write outside the output and (c) every output element written with a dtype value.
void check_output(const char* what, int k, DType dt, Guarded& g) {
  SCOPED_TRACE(testing::Message() << what << " size " << k << " " << dtype_name(dt));
  EXPECT_EQ(g.clobbered(), 0) << "write outside the output (offset relative to its start)";
  const auto body = g.body();
  for (std::size_t i = 0; i < body.size(); ++i) {
    ASSERT_FALSE(std::isnan(body[i])) << "element " << i << " not written";
    ASSERT_TRUE(representable(dt, body[i])) << "element " << i << " = " << body[i] << " not a value";
  }
}

// Sizes 1..17 cross the usual SIMD widths (4, 8, 16) and their tails.
TEST(ScalarKernels, WriteExactlyTheirOutputWithValuesOfTheDtype) {
  std::mt19937 rng(20261130);
  for (DType dt : kAllDTypes)
    for (int k = 1; k <= 17; ++k) {
      const std::size_t n = static_cast<std::size_t>(k), even = 2 * ((n + 1) / 2);
      Positions pos(n);
      for (std::size_t t = 0; t < n; ++t) pos[t] = static_cast<std::int64_t>(t * 977 % 4099) - 5;
      Positions nonneg(n);
      std::iota(nonneg.begin(), nonneg.end(), std::int64_t{0});

      for (auto layout : {SinusoidalLayout::interleaved, SinusoidalLayout::concatenated}) {
        const SinusoidalSpec s{2 * k, 10000.0, layout};
        Guarded out(n * 2 * n);
        scalar::sinusoidal_table(s, dt, nonneg, out.body());
        check_output("sinusoidal", k, dt, out);
      }
      {
        const LearnedSpec s{k + 1, k};
        const auto table = random_values(dt, n * (n + 1), rng), x = random_values(dt, n * n, rng);
        Guarded g(n * n);
        std::copy(x.begin(), x.end(), g.body().begin());
        scalar::learned_add(s, dt, table, nonneg, g.body());
        check_output("learned", k, dt, g);
      }
      for (auto layout : {RopeLayout::interleaved, RopeLayout::half_split}) {
        const RopeSpec s{2 * k, static_cast<int>(even), 10000.0, layout};
        const int heads = 1 + k % 3;
        const auto x = random_values(dt, n * static_cast<std::size_t>(heads) * 2 * n, rng);
        Guarded g(x.size());
        std::copy(x.begin(), x.end(), g.body().begin());
        scalar::rope_apply(s, dt, heads, pos, g.body());
        check_output("rope", k, dt, g);
      }
      for (bool causal : {false, true}) {
        Guarded out(n * n * n);
        scalar::alibi_bias({k, causal}, dt, pos, out.body());
        check_output("alibi", k, dt, out);
      }
      {
        const ShawSpec s{k % 5, k};
        const auto q = random_values(dt, n * n, rng), kk = random_values(dt, n * n, rng);
        const auto table = random_values(dt, static_cast<std::size_t>(s.table_rows()) * n, rng);
        Guarded out(n * n);
        scalar::shaw_scores(s, dt, q, kk, table, pos, out.body());
        check_output("shaw", k, dt, out);
      }
      for (auto pe : {AttentionPE::none, AttentionPE::sinusoidal, AttentionPE::rope, AttentionPE::alibi,
                      AttentionPE::shaw}) {
        const AttentionSpec s{.heads = 1 + k % 2, .head_dim = static_cast<int>(even), .causal = k % 2 == 1,
                              .pe = pe, .shaw_max_distance = k % 4};
        const std::size_t w = n * static_cast<std::size_t>(s.width());
        const auto q = random_values(dt, w, rng), kk = random_values(dt, w, rng), v = random_values(dt, w, rng);
        const auto table = random_values(dt, static_cast<std::size_t>(s.shaw().table_rows()) * even, rng);
        Guarded out(w);
        scalar::attention(s, dt, nonneg, q, kk, v, pe == AttentionPE::shaw ? table : std::vector<float>{},
                          out.body());
        check_output(std::string("attention pe=").append(pe_name(pe)).c_str(), k, dt, out);
      }
    }
}

/// sin(pos * f) in long double with the product split exactly by an FMA: independent of double.
long double sin_ld(std::int64_t pos, long double f, bool cosine) {
  const long double p = static_cast<long double>(pos), a = p * f, lo = std::fma(p, f, -a);
  return cosine ? std::cos(a) - lo * std::sin(a) : std::sin(a) + lo * std::cos(a);
}

// The largest position the f32 tables promise: the angle of pair 0 is 2^24 - 1 rad, where an
// fp32 angle would be off by ~1 rad. The f32 result must be the correctly rounded value but for
// the double angle error, so within half an ulp (<= 0.5u for |pe| <= 1) plus 2^-30.
TEST(ScalarKernels, SinusoidalF32IsCorrectlyRoundedAtTheLargestPosition) {
  const int d = 128;
  const double u = unit_roundoff(DType::f32);
  for (auto layout : {SinusoidalLayout::interleaved, SinusoidalLayout::concatenated}) {
    const SinusoidalSpec s{d, 1e4, layout};
    const Positions pos{(std::int64_t{1} << 24) - 1, (std::int64_t{1} << 24) - 2, 1000003, 4097, 0};
    std::vector<float> out(pos.size() * d);
    scalar::sinusoidal_table(s, DType::f32, pos, out);
    for (std::size_t t = 0; t < pos.size(); ++t)
      for (int i = 0; i < d / 2; ++i) {
        // The frequency from exp/log, not pow as the kernel: agrees to ~2^-63 relative.
        const long double f = std::exp(-(2.0L * i / d) * std::log(1e4L));
        const bool inter = layout == SinusoidalLayout::interleaved;
        const int si = inter ? 2 * i : i, ci = inter ? 2 * i + 1 : d / 2 + i;
        for (auto [slot, cosine] : {std::pair{si, false}, std::pair{ci, true}}) {
          const long double ref = sin_ld(pos[t], f, cosine);
          const float got = out[t * d + static_cast<std::size_t>(slot)];
          const double err = static_cast<double>(std::fabs(static_cast<long double>(got) - ref));
          ASSERT_LE(err, 0.5 * u + 0x1p-30) << "pos " << pos[t] << " pair " << i << (cosine ? " cos" : " sin");
          // Tighter: half an ulp of the value itself (the table is rounded once, from double).
          const float mag = std::max(std::fabs(static_cast<float>(ref)), 0x1p-126f);  // no ilogb(0)
          const double half_ulp = std::ldexp(1.0, std::ilogb(mag) - 24);
          ASSERT_LE(err, half_ulp + 0x1p-40) << "pos " << pos[t] << " pair " << i << " not correctly rounded";
        }
      }
  }
}

// Both layouts rotate the same pairs, only stored at different dims; with the same arithmetic
// per pair the results must be bit-identical after un-permuting, pass-through dims included.
TEST(ScalarKernels, RopeInterleavedAndHalfSplitAgreeUpToThePermutation) {
  std::mt19937 rng(7);
  for (auto [hd, rot] : {std::pair{64, 64}, std::pair{16, 8}, std::pair{10, 6}, std::pair{2, 2}}) {
    const int heads = 3;
    const Positions pos{0, 1, 4097, 65535, (1 << 24) - 1, -12};
    const auto x = random_values(DType::f32, pos.size() * heads * static_cast<std::size_t>(hd), rng);
    // Half-split stores pair p at (p, p + rot/2); interleaved at (2p, 2p+1).
    std::vector<std::size_t> to_half(static_cast<std::size_t>(hd));
    std::iota(to_half.begin(), to_half.end(), std::size_t{0});
    for (int p = 0; p < rot / 2; ++p) {
      to_half[static_cast<std::size_t>(2 * p)] = static_cast<std::size_t>(p);
      to_half[static_cast<std::size_t>(2 * p + 1)] = static_cast<std::size_t>(p + rot / 2);
    }
    std::vector<float> inter = x, half(x.size());
    for (std::size_t h = 0; h < x.size() / static_cast<std::size_t>(hd); ++h)
      for (std::size_t c = 0; c < static_cast<std::size_t>(hd); ++c)
        half[h * static_cast<std::size_t>(hd) + to_half[c]] = x[h * static_cast<std::size_t>(hd) + c];
    scalar::rope_apply({hd, rot, 1e4, RopeLayout::interleaved}, DType::f32, heads, pos, inter);
    scalar::rope_apply({hd, rot, 1e4, RopeLayout::half_split}, DType::f32, heads, pos, half);
    EXPECT_NE(inter, x) << "rotation did nothing: vacuous comparison";
    for (std::size_t h = 0; h < x.size() / static_cast<std::size_t>(hd); ++h)
      for (std::size_t c = 0; c < static_cast<std::size_t>(hd); ++c) {
        const std::size_t i = h * static_cast<std::size_t>(hd) + c;
        ASSERT_EQ(inter[i], half[h * static_cast<std::size_t>(hd) + to_half[c]]) << "hd " << hd << " row " << h << " dim " << c;
        if (c >= static_cast<std::size_t>(rot)) {
          ASSERT_EQ(inter[i], x[i]) << "pass-through dim " << c << " changed";
        }
      }
  }
}

// The kernels' angle machinery: given the frequency it carries (hi + lo), sin and cos of
// pos * f to 2^-50 absolute for every position below 2^24; and that frequency is base^(-2i/dim)
// to ~2^-60 relative (checked against exp/log, an independent long double formula whose own
// error is ~|ln f| * 2^-64, hence the 2^-58 slack).
TEST(ScalarKernels, AnglesSincosIsAccurateUpTo2To24) {
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<std::int64_t> any_pos(0, (std::int64_t{1} << 24) - 1);
  double worst = 0;
  for (auto [dim, base] : {std::pair{128, 1e4}, std::pair{64, 5e5}, std::pair{96, 1e6}, std::pair{2, 1e4}})
    for (int i = 0; i < dim / 2; ++i) {
      const auto f = angles::frequency(i, dim, base);
      const long double fl = static_cast<long double>(f.hi) + f.lo;
      const long double indep = std::exp(-(2.0L * i / dim) * std::log(static_cast<long double>(base)));
      ASSERT_LE(static_cast<double>(std::fabs(fl - indep) / indep), 0x1p-58) << "frequency " << i << "/" << dim;
      std::vector<std::int64_t> ps{0, 1, 2, 3, 4095, 4096, 4097, (1 << 24) - 1, (1 << 24) - 2};
      for (int r = 0; r < 64; ++r) ps.push_back(any_pos(rng));
      for (std::int64_t p : ps) {
        const auto sc = angles::sincos(p, f);
        const double es = static_cast<double>(std::fabs(sc.s - sin_ld(p, fl, false)));
        const double ec = static_cast<double>(std::fabs(sc.c - sin_ld(p, fl, true)));
        worst = std::max({worst, es, ec});
        ASSERT_LE(std::max(es, ec), 0x1p-50) << "pos " << p << " pair " << i << "/" << dim << " base " << base;
      }
    }
  RecordProperty("worst_abs_error_log2", std::to_string(std::log2(worst)));
}

TEST(ScalarKernels, AlibiSlopesFollowTheClosedForm) {
  for (int heads : {1, 2, 4, 8, 16, 32, 64})
    for (int h = 0; h < heads; ++h) {
      const long double want = std::exp2(-8.0L * (h + 1) / heads);
      EXPECT_NEAR(alibi::slope(h, heads), static_cast<double>(want), 0x1p-52 * static_cast<double>(want))
          << "H=" << heads << " h=" << h;
    }
  for (int h = 0; h < 8; ++h) EXPECT_EQ(alibi::slope(h, 8), std::ldexp(1.0, -(h + 1))) << "H=8 is exact";
  // Not a power of two (H=12): the 8 slopes of H=8, then 2^(-4k/8) for k = 1, 3, 5, 7.
  for (int h = 0; h < 12; ++h) {
    const double want = h < 8 ? std::ldexp(1.0, -(h + 1)) : std::exp2(-0.5 * (2 * (h - 8) + 1));
    EXPECT_DOUBLE_EQ(alibi::slope(h, 12), want) << "H=12 h=" << h;
  }
}

}  // namespace
