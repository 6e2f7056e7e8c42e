// The scalar kernels as a baseline: bad input is refused with a clear message, every output
// element is written and nothing else, outputs are values of the storage dtype, and the accurate
// angles really are accurate. Every optimized backend is measured against these kernels, so a
// silent overrun or a wrong angle here would move every other verdict.
#include <gtest/gtest.h>

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

#include "impl/alibi_slopes.hpp"
#include "impl/angles.hpp"
#include "impl/scalar/kernels.hpp"

namespace {

using namespace pecheck;
using Positions = std::vector<std::int64_t>;

/// Runs f and requires exception E whose message names the offending parameter.
template <class E>
void expect_throw(const std::function<void()>& f, const std::string& needle) {
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
  std::vector<float> buf(4096, 0.0f);
  const auto B = [&](std::size_t n) { return std::span<float>(buf).first(n); };
  const Positions two{0, 1};
  const DType F = DType::f32;
  const AttentionSpec att{.heads = 2, .head_dim = 4};
  AttentionSpec att_shaw = att;
  att_shaw.pe = AttentionPE::shaw;
  att_shaw.shaw_max_distance = 1;
  // Each call is wrong in exactly one way; the message must name what is wrong.
  const auto bad = [](const std::string& needle, const std::function<void()>& f) {
    expect_throw<std::invalid_argument>(f, needle);
  };
  bad("head_dim must be even", [&] { scalar::rope_apply({7, 6}, F, 1, two, B(14)); });
  bad("rotary_dim", [&] { scalar::rope_apply({8, 10}, F, 1, two, B(16)); });
  bad("rotary_dim", [&] { scalar::rope_apply({8, 3}, F, 1, two, B(16)); });
  bad("base must be > 1", [&] { scalar::rope_apply({8, 8, 1.0}, F, 1, two, B(16)); });
  bad("heads > 0", [&] { scalar::rope_apply({8, 8}, F, 0, two, B(0)); });
  bad("heads > 0", [&] { scalar::rope_apply({8, 8}, F, -2, two, B(16)); });
  bad("rope_apply x has 15 elements", [&] { scalar::rope_apply({8, 8}, F, 1, two, B(15)); });
  bad("d_model must be even", [&] { scalar::sinusoidal_table({7}, DType::bf16, two, B(14)); });
  bad("d_model must be even", [&] { scalar::sinusoidal_table({0}, F, two, B(0)); });
  bad("base must be > 1", [&] { scalar::sinusoidal_table({8, 0.5}, F, two, B(16)); });
  bad("sinusoidal_table out has 17 elements", [&] { scalar::sinusoidal_table({8}, F, two, B(17)); });
  bad("learned_add table has 11 elements", [&] { scalar::learned_add({4, 3}, F, B(11), two, B(6)); });
  bad("learned_add x has 5 elements", [&] { scalar::learned_add({4, 3}, F, B(12), two, B(5)); });
  bad("heads > 0", [&] { scalar::alibi_bias({0}, F, two, B(0)); });
  bad("heads > 0", [&] { scalar::alibi_bias({-1}, F, two, B(0)); });
  bad("alibi_bias out has 4 elements, expected 8", [&] { scalar::alibi_bias({2}, F, two, B(4)); });
  bad("K >= 0", [&] { scalar::shaw_scores({-1, 4}, F, B(8), B(8), B(4), two, B(4)); });
  bad("shaw_scores q has 7", [&] { scalar::shaw_scores({1, 4}, F, B(7), B(8), B(12), two, B(4)); });
  bad("shaw_scores k has 9", [&] { scalar::shaw_scores({1, 4}, F, B(8), B(9), B(12), two, B(4)); });
  bad("shaw_scores table has 8", [&] { scalar::shaw_scores({1, 4}, F, B(8), B(8), B(8), two, B(4)); });
  bad("shaw_scores out has 3", [&] { scalar::shaw_scores({1, 4}, F, B(8), B(8), B(12), two, B(3)); });
  bad("heads, head_dim > 0", [&] { scalar::attention({.heads = 0}, F, two, B(0), B(0), B(0), {}, B(0)); });
  bad("attention q has 15", [&] { scalar::attention(att, F, two, B(15), B(16), B(16), {}, B(16)); });
  bad("attention v has 17", [&] { scalar::attention(att, F, two, B(16), B(16), B(17), {}, B(16)); });
  bad("attention out has 8", [&] { scalar::attention(att, F, two, B(16), B(16), B(16), {}, B(8)); });
  bad("attention shaw_table has 4 elements, expected 12",
      [&] { scalar::attention(att_shaw, F, two, B(16), B(16), B(16), B(4), B(16)); });
  // A decode call: Q and the output hold `queries` rows (8 floats each here), K and V all n.
  AttentionSpec decode = att;
  decode.queries = 1;
  bad("attention q has 16 elements, expected 8",
      [&] { scalar::attention(decode, F, two, B(16), B(16), B(16), {}, B(8)); });
  bad("attention out has 16 elements, expected 8",
      [&] { scalar::attention(decode, F, two, B(8), B(16), B(16), {}, B(16)); });
  decode.queries = 3;
  bad("queries (3) exceed the tokens given (2)",
      [&] { scalar::attention(decode, F, two, B(24), B(16), B(16), {}, B(24)); });
  decode.queries = -1;
  bad("queries must be >= 0", [&] { scalar::attention(decode, F, two, B(16), B(16), B(16), {}, B(16)); });
}

TEST(ScalarKernels, LearnedPositionOutsideTheTableThrowsOutOfRange) {
  const LearnedSpec s{4, 2};
  const std::vector<float> table(8, 1.0f);
  for (std::int64_t bad : Positions{-1, 4, std::int64_t{1} << 40, INT64_MIN}) {
    std::vector<float> x(4, 0.0f);
    const Positions pos{0, bad};
    expect_throw<std::out_of_range>([&] { scalar::learned_add(s, DType::f32, table, pos, x); },
                                    "outside the table [0, 4)");
    // Nothing half-written: the valid row before the bad one is untouched too.
    EXPECT_EQ(x, std::vector<float>(4, 0.0f)) << "learned_add wrote before refusing position " << bad;
  }
  std::vector<float> x(4, 0.0f);
  const Positions edge{0, 3};  // both ends of the table are fine
  EXPECT_NO_THROW(scalar::learned_add(s, DType::f32, table, edge, x));
}

/// A buffer with kGuard sentinels on each side of an n-element body that starts out NaN.
struct Guarded {
  static constexpr std::size_t kGuard = 64;
  static constexpr std::uint32_t kSentinel = 0x7FA5A5A5u;  // a NaN payload no kernel produces
  std::vector<float> buf;
  std::size_t n;

  explicit Guarded(std::size_t size) : buf(size + 2 * kGuard, std::bit_cast<float>(kSentinel)), n(size) {
    std::fill(body().begin(), body().end(), std::numeric_limits<float>::quiet_NaN());
  }
  std::span<float> body() { return std::span<float>(buf).subspan(kGuard, n); }
  /// Offset (from the body's start) of the first clobbered guard, or 0 when all are intact.
  std::ptrdiff_t clobbered() const {
    for (std::size_t i = 0; i < buf.size(); ++i)
      if ((i < kGuard || i >= kGuard + n) && std::bit_cast<std::uint32_t>(buf[i]) != kSentinel)
        return static_cast<std::ptrdiff_t>(i) - static_cast<std::ptrdiff_t>(kGuard);
    return 0;
  }
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
    ASSERT_TRUE(representable(dt, body[i])) << "element " << i << " = " << body[i];
  }
}

// Sizes 1..17 cross the usual SIMD widths (4, 8, 16) and their tails.
TEST(ScalarKernels, WriteExactlyTheirOutputWithValuesOfTheDtype) {
  std::mt19937 rng(20261130);
  for (DType dt : kAllDTypes)
    for (int k = 1; k <= 17; ++k) {
      const std::size_t n = static_cast<std::size_t>(k), even = 2 * ((n + 1) / 2);
      const int ev = static_cast<int>(even);  // even head_dim for RoPE and the sinusoid
      Positions pos(n), nonneg(n);            // scattered (some negative); 0..n-1 for tables
      for (std::size_t t = 0; t < n; ++t) pos[t] = static_cast<std::int64_t>(t * 977 % 4099) - 5;
      std::iota(nonneg.begin(), nonneg.end(), std::int64_t{0});

      for (auto layout : {SinusoidalLayout::interleaved, SinusoidalLayout::concatenated}) {
        Guarded out(n * 2 * n);
        scalar::sinusoidal_table({2 * k, 10000.0, layout}, dt, nonneg, out.body());
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
        const int heads = 1 + k % 3;  // rotary_dim < head_dim for every k > 1: partial rotary
        const auto x = random_values(dt, n * static_cast<std::size_t>(heads) * 2 * n, rng);
        Guarded g(x.size());
        std::copy(x.begin(), x.end(), g.body().begin());
        scalar::rope_apply({2 * k, ev, 10000.0, layout}, dt, heads, pos, g.body());
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
      using enum AttentionPE;
      for (auto pe : {none, sinusoidal, rope, alibi, shaw}) {
        AttentionSpec s{.heads = 1 + k % 2, .head_dim = ev, .causal = k % 2 == 1, .pe = pe};
        s.shaw_max_distance = k % 4;
        const std::size_t w = n * static_cast<std::size_t>(s.width());
        const auto q = random_values(dt, w, rng), kk = random_values(dt, w, rng);
        const auto v = random_values(dt, w, rng);
        const auto table = random_values(dt, static_cast<std::size_t>(s.shaw().table_rows() * ev), rng);
        Guarded out(w);
        scalar::attention(s, dt, nonneg, q, kk, v, table, out.body());  // table read only for Shaw
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
  const Positions pos{(std::int64_t{1} << 24) - 1, (std::int64_t{1} << 24) - 2, 1000003, 4097, 0};
  for (auto layout : {SinusoidalLayout::interleaved, SinusoidalLayout::concatenated}) {
    std::vector<float> out(pos.size() * d);
    scalar::sinusoidal_table({d, 1e4, layout}, DType::f32, pos, out);
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
          ASSERT_LE(err, 0.5 * u + 0x1p-30) << "pos " << pos[t] << " slot " << slot;
          // Tighter: half an ulp of the value itself (the table is rounded once, from double).
          const float mag = std::max(std::fabs(static_cast<float>(ref)), 0x1p-126f);  // no ilogb(0)
          const double half_ulp = std::ldexp(1.0, std::ilogb(mag) - 24);
          ASSERT_LE(err, half_ulp + 0x1p-40) << "not correctly rounded: " << pos[t] << " " << slot;
        }
      }
  }
}

// Both layouts rotate the same pairs, only stored at different dims; with the same arithmetic
// per pair the results must be bit-identical after un-permuting, pass-through dims included.
TEST(ScalarKernels, RopeInterleavedAndHalfSplitAgreeUpToThePermutation) {
  std::mt19937 rng(7);
  for (auto [hd, rot] : {std::pair<std::size_t, std::size_t>{64, 64}, {16, 8}, {10, 6}, {2, 2}}) {
    const int heads = 3;
    const Positions pos{0, 1, 4097, 65535, (1 << 24) - 1, -12};
    const auto x = random_values(DType::f32, pos.size() * heads * hd, rng);
    // Interleaved dim c holds what half-split keeps at to_half[c]: (2p, 2p+1) -> (p, p + rot/2).
    std::vector<std::size_t> to_half(hd);
    std::iota(to_half.begin(), to_half.end(), std::size_t{0});
    for (std::size_t c = 0; c < rot; ++c) to_half[c] = c % 2 == 0 ? c / 2 : c / 2 + rot / 2;
    std::vector<float> inter = x, half(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) half[i - i % hd + to_half[i % hd]] = x[i];
    const int d = static_cast<int>(hd), r = static_cast<int>(rot);
    scalar::rope_apply({d, r, 1e4, RopeLayout::interleaved}, DType::f32, heads, pos, inter);
    scalar::rope_apply({d, r, 1e4, RopeLayout::half_split}, DType::f32, heads, pos, half);
    EXPECT_NE(inter, x) << "rotation did nothing: vacuous comparison";
    for (std::size_t i = 0; i < x.size(); ++i) {
      ASSERT_EQ(inter[i], half[i - i % hd + to_half[i % hd]]) << "hd " << hd << " at " << i;
      ASSERT_TRUE(i % hd < rot || inter[i] == x[i]) << "pass-through dim " << i % hd << " changed";
    }
  }
}

// The kernels' angle machinery: given the frequency it carries (hi + lo), sin and cos of
// pos * f to 2^-50 absolute for every position below 2^24; and that frequency is base^(-2i/dim)
// to ~2^-60 relative (checked against exp/log, an independent long double formula whose own
// error is ~|ln f| * 2^-64, hence the 2^-58 slack). Against exact math the angle also carries
// that frequency error times pos, ~2^-41 at pos 2^24: far below f32's 2^-25, not checked here.
TEST(ScalarKernels, AnglesSincosIsAccurateUpTo2To24) {
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<std::int64_t> any_pos(0, (std::int64_t{1} << 24) - 1);
  for (auto [dim, base] : {std::pair{128, 1e4L}, {64, 5e5L}, {96, 1e6L}, {2, 1e4L}})
    for (int i = 0; i < dim / 2; ++i) {
      const auto f = angles::frequency(i, dim, static_cast<double>(base));  // exact
      const long double fl = static_cast<long double>(f.hi) + f.lo;
      const long double indep = std::exp(-(2.0L * i / dim) * std::log(base));
      ASSERT_LE(static_cast<double>(std::fabs(fl - indep) / indep), 0x1p-58) << i << "/" << dim;
      std::vector<std::int64_t> ps{0, 1, 2, 3, 4095, 4096, 4097, (1 << 24) - 1, (1 << 24) - 2};
      for (int r = 0; r < 64; ++r) ps.push_back(any_pos(rng));
      for (std::int64_t p : ps) {
        const auto sc = angles::sincos(p, f);
        const double es = static_cast<double>(std::fabs(sc.s - sin_ld(p, fl, false)));
        const double ec = static_cast<double>(std::fabs(sc.c - sin_ld(p, fl, true)));
        ASSERT_LE(std::max(es, ec), 0x1p-50) << "pos " << p << " pair " << i << "/" << dim;
      }
    }
}

TEST(ScalarKernels, AlibiSlopesFollowTheClosedForm) {
  for (int heads : {1, 2, 4, 8, 16, 32, 64})
    for (int h = 0; h < heads; ++h) {
      const double want = static_cast<double>(std::exp2(-8.0L * (h + 1) / heads));
      EXPECT_NEAR(alibi::slope(h, heads), want, 0x1p-52 * want) << "H=" << heads << " h=" << h;
    }
  for (int h = 0; h < 8; ++h) EXPECT_EQ(alibi::slope(h, 8), std::ldexp(1.0, -(h + 1))) << "exact";
  // Not a power of two (H=12): the 8 slopes of H=8, then 2^(-4k/8) for k = 1, 3, 5, 7.
  for (int h = 0; h < 12; ++h) {
    const double want = h < 8 ? std::ldexp(1.0, -(h + 1)) : std::exp2(-0.5 * (2 * (h - 8) + 1));
    EXPECT_DOUBLE_EQ(alibi::slope(h, 12), want) << "H=12 h=" << h;
  }
}

}  // namespace
