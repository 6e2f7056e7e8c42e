// The oracle checked by an independent one: raw MPFR at 256 bits (mpfr_pow, mpfr_sin, ...
// called directly, no Boost, different formulas where the reference has a choice) must agree
// with reference/ at mpfr_float_50 to the 50 digits it claims. Everything else in pecheck is
// judged against reference/, so its own errors must be measured against something else.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

#include "reference/alibi.hpp"
#include "reference/attention.hpp"
#include "reference/learned.hpp"
#include "reference/real.hpp"
#include "reference/rope.hpp"
#include "reference/shaw.hpp"
#include "reference/sinusoidal.hpp"

namespace {

using namespace pecheck;
using R = ref::DefaultReal;

/// A 256-bit MPFR number with just the operations these checks need; round to nearest always.
struct M {
  mpfr_t v;
  M(double d = 0) : M(nullptr) { mpfr_set_d(v, d, MPFR_RNDN); }               // NOLINT: implicit on purpose
  M(const R& r) : M(nullptr) { mpfr_set(v, r.backend().data(), MPFR_RNDN); }  // NOLINT
  M(const M& o) : M(nullptr) { mpfr_set(v, o.v, MPFR_RNDN); }
  explicit M(std::nullptr_t) { mpfr_init2(v, 256); }
  M& operator=(const M& o) { return mpfr_set(v, o.v, MPFR_RNDN), *this; }
  ~M() { mpfr_clear(v); }

  /// r = f(args..., round to nearest) for an mpfr_* function f.
  template <class F, class... A>
  static M call(F f, const A&... a) {
    M r;
    f(r.v, a.v..., MPFR_RNDN);
    return r;
  }
  friend M operator+(const M& a, const M& b) { return call(mpfr_add, a, b); }
  friend M operator-(const M& a, const M& b) { return call(mpfr_sub, a, b); }
  friend M operator*(const M& a, const M& b) { return call(mpfr_mul, a, b); }
  friend M operator/(const M& a, const M& b) { return call(mpfr_div, a, b); }
  double to_double() const { return mpfr_get_d(v, MPFR_RNDN); }
};
M msin(const M& a) { return M::call(mpfr_sin, a); }
M mcos(const M& a) { return M::call(mpfr_cos, a); }
M mexp(const M& a) { return M::call(mpfr_exp, a); }
M mpow(const M& a, const M& b) { return M::call(mpfr_pow, a, b); }
M mabs(const M& a) { return M::call(mpfr_abs, a); }
M mint(std::int64_t i) { return M(static_cast<double>(i)); }  // exact: |i| < 2^53 here

/// |got - want| / max(1, |want|): absolute below 1, relative above.
double err(const R& got, const M& want) {
  const M w = mabs(want);
  return (mabs(M(got) - want) / (mpfr_cmp_d(w.v, 1.0) < 0 ? M(1.0) : w)).to_double();
}

// 50 decimal digits = 168 bits, so one rounding is ~3e-51; 1e-45 leaves room for a chain of a
// few operations while still failing for anything that passed through a double (~1e-16).
constexpr double kDigits50 = 1e-45;

/// base^(-2i/dim) by mpfr_pow; the reference uses exp(-(2i/dim) log base).
M mfreq(int i, int dim, double base) { return mpow(M(base), M(-2.0 * i) / M(double(dim))); }

/// A reference angle pos * f carries ~1e-50 *relative* error (measured <= 5e-50 here), so its
/// sin/cos carry that times |angle| absolute (3e-44 at pos 2^24): the bound grows with the
/// angle at 1e-48 per radian, still 1e32 times tighter than a double angle would give.
double angle_tol(const M& angle) { return std::max(kDigits50, 1e-48 * std::fabs(angle.to_double())); }

TEST(ReferenceCrosscheck, SinusoidalRowMatchesIndependentMpfr) {
  const std::int64_t positions[] = {0, 1, 4097, 131071, (std::int64_t{1} << 24) - 1};
  for (auto layout : {SinusoidalLayout::interleaved, SinusoidalLayout::concatenated})
    for (double base : {1e4, 5e5, 1e6})
      for (int d : {2, 6, 64, 130})
        for (std::int64_t pos : positions) {
          const SinusoidalSpec s{d, base, layout};
          const auto row = ref::sinusoidal_row<R>(s, pos);
          ASSERT_EQ(row.size(), static_cast<std::size_t>(d));
          for (std::size_t i = 0; i < row.size() / 2; ++i) {
            const M angle = mint(pos) * mfreq(static_cast<int>(i), d, base);
            const bool inter = layout == SinusoidalLayout::interleaved;
            const std::size_t si = inter ? 2 * i : i, ci = inter ? 2 * i + 1 : row.size() / 2 + i;
            ASSERT_LE(std::max(err(row[si], msin(angle)), err(row[ci], mcos(angle))), angle_tol(angle))
                << s.describe() << " pos " << pos << " pair " << i;
          }
        }
}

/// n head values (c + 1)/7 - 1/3 from c = skip: not dyadic, so every product rounds.
std::vector<R> head_values(std::size_t n, int skip = 0) {
  std::vector<R> x(n);
  for (std::size_t c = 0; c < n; ++c) x[c] = R(static_cast<int>(c) + skip + 1) / 7 - R(1) / 3;
  return x;
}

/// The independent rotation of one head; pass-through dims are copied.
std::vector<M> mrotate(const RopeSpec& s, std::int64_t pos, const std::vector<R>& x, std::vector<double>& tol) {
  std::vector<M> y(x.begin(), x.end());
  tol.assign(x.size(), 0.0);
  const std::size_t half = static_cast<std::size_t>(s.rotary_dim / 2);
  for (std::size_t p = 0; p < half; ++p) {
    const bool inter = s.layout == RopeLayout::interleaved;
    const std::size_t a = inter ? 2 * p : p, b = inter ? 2 * p + 1 : p + half;
    const M angle = mint(pos) * mfreq(static_cast<int>(p), s.rotary_dim, s.base);
    const M c = mcos(angle), sn = msin(angle), xa(x[a]), xb(x[b]);
    y[a] = xa * c - xb * sn;
    y[b] = xb * c + xa * sn;
    tol[a] = tol[b] = angle_tol(angle);
  }
  return y;
}

TEST(ReferenceCrosscheck, RopeRotateAndApplyMatchIndependentMpfr) {
  using enum RopeLayout;
  const RopeSpec specs[] = {{8, 8, 1e4, interleaved},
                            {8, 8, 5e5, half_split},
                            {10, 6, 1e4, interleaved},
                            {10, 6, 1e6, half_split},
                            {64, 32, 1e4, half_split}};
  for (const RopeSpec& s : specs)
    for (std::int64_t pos : std::vector<std::int64_t>{0, 1, -3, 4097, (1 << 24) - 1}) {
      const auto x = head_values(static_cast<std::size_t>(s.head_dim));
      auto y = x;
      ref::rope_rotate<R>(s, pos, std::span<R>(y));
      std::vector<double> tol;
      const auto want = mrotate(s, pos, x, tol);
      for (std::size_t c = 0; c < y.size(); ++c) {
        // Partial rotary: the tail is not rounded through any arithmetic, it is the input.
        const bool tail = c >= static_cast<std::size_t>(s.rotary_dim);
        ASSERT_TRUE(tail ? y[c] == x[c] : err(y[c], want[c]) <= tol[c])
            << s.describe() << " pos " << pos << " dim " << c << " err " << err(y[c], want[c]);
      }
    }
  // rope_apply: each (token, head) block of a (tokens, heads, dim) tensor is rotated exactly as
  // rope_rotate (checked above) rotates it alone, to its token's position.
  const RopeSpec s{10, 6, 1e4, RopeLayout::half_split};
  const std::vector<std::int64_t> positions{7, -2, 131071};
  auto x = head_values(positions.size() * 2 * 10), want = x;
  ref::rope_apply<R>(s, 2, positions, std::span<R>(x));
  for (std::size_t blk = 0; blk < positions.size() * 2; ++blk)
    ref::rope_rotate<R>(s, positions[blk / 2], std::span<R>(want).subspan(blk * 10, 10));
  for (std::size_t i = 0; i < x.size(); ++i) ASSERT_TRUE(x[i] == want[i]) << "element " << i;
}

/// Closed form: with P the largest power of two <= H, 2^(-8k/P) for k = 1..P, then 2^(-4k/P)
/// for k = 1, 3, 5, ... until H slopes.
std::vector<M> mslopes(int heads) {
  int p = 1;
  while (p * 2 <= heads) p *= 2;
  std::vector<M> s;
  for (int k = 1; k <= p; ++k) s.push_back(mpow(M(2.0), M(-8.0 * k) / M(double(p))));
  for (int k = 1; static_cast<int>(s.size()) < heads; k += 2) s.push_back(mpow(M(2.0), M(-4.0 * k) / M(double(p))));
  return s;
}

TEST(ReferenceCrosscheck, AlibiSlopesMatchTheClosedFormAndHuggingFace) {
  for (int heads = 1; heads <= 64; ++heads) {
    const auto got = ref::alibi_slopes<R>(heads);
    const auto want = mslopes(heads);
    ASSERT_EQ(got.size(), static_cast<std::size_t>(heads));
    for (std::size_t h = 0; h < got.size(); ++h)
      ASSERT_LE(err(got[h], want[h]) / want[h].to_double(), kDigits50) << "H=" << heads << " h=" << h;
  }
  // HF build_alibi_tensor, as exponents e of 2^-e: H=8 gives 1..8; H=12 the same then
  // extra_base 2^-0.5 to the odd powers 1, 3, 5, 7; H=16 gives 0.5, 1, ..., 8.
  const std::pair<int, std::vector<double>> hf[] = {
      {8, {1, 2, 3, 4, 5, 6, 7, 8}},
      {12, {1, 2, 3, 4, 5, 6, 7, 8, 0.5, 1.5, 2.5, 3.5}},
      {16, {0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 5.5, 6, 6.5, 7, 7.5, 8}}};
  for (const auto& [heads, exps] : hf) {
    const auto got = ref::alibi_slopes<R>(heads);
    for (std::size_t h = 0; h < exps.size(); ++h) {
      EXPECT_LE(err(got[h], M::call(mpfr_exp2, M(-exps[h]))), kDigits50) << "H=" << heads << " " << h;
      const bool integral = exps[h] == std::floor(exps[h]);  // then 2^-e must come out exact
      EXPECT_TRUE(!integral || got[h] == R(std::ldexp(1.0, -int(exps[h])))) << "H=" << heads;
    }
  }
}

TEST(ReferenceCrosscheck, ShawRowClampsKeyMinusQuery) {
  const ShawSpec s{2, 3};
  EXPECT_EQ(ref::shaw_row(s, 5, 0), 0u) << "key far before the query: -K";
  EXPECT_EQ(ref::shaw_row(s, 0, 5), 4u) << "key far after the query: +K";
  EXPECT_EQ(ref::shaw_row(s, 3, 4), 3u) << "p_j - p_i = +1, not p_i - p_j";
  EXPECT_EQ(ref::shaw_row(s, 4, 3), 1u);
  EXPECT_EQ(ref::shaw_row(s, 9, 9), 2u);
  EXPECT_EQ(ref::shaw_row({0, 3}, -100, 100), 0u) << "K = 0: a single row";
  EXPECT_EQ(ref::shaw_row(s, -(std::int64_t{1} << 40), std::int64_t{1} << 40), 4u) << "far apart";

  const std::vector<std::int64_t> positions{0, 3, 1, 10};
  const std::size_t n = positions.size(), d = 3;
  const auto q = head_values(n * d), kk = head_values(n * d, 1);
  std::vector<R> table(static_cast<std::size_t>(s.table_rows()) * d);
  for (std::size_t i = 0; i < table.size(); ++i) table[i] = R(static_cast<int>(i * i) + 1) / 11;
  const auto got = ref::shaw_scores<R>(s, q, kk, table, positions);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const auto row = static_cast<std::size_t>(std::clamp<std::int64_t>(positions[j] - positions[i], -2, 2) + 2);
      M want;
      for (std::size_t c = 0; c < d; ++c) want = want + M(q[i * d + c]) * (M(kk[j * d + c]) + M(table[row * d + c]));
      ASSERT_LE(err(got[i * n + j], want), kDigits50) << "score " << i << "," << j;
    }
}

TEST(ReferenceCrosscheck, LearnedAddRejectsPositionsOutsideTheTable) {
  const LearnedSpec s{4, 2};
  const auto table = head_values(8), x = head_values(2);
  for (std::int64_t bad : {std::int64_t{-1}, std::int64_t{4}}) {
    const std::vector<std::int64_t> pos{bad};
    EXPECT_THROW(ref::learned_add<R>(s, table, pos, x), std::out_of_range) << bad;
  }
  const std::vector<std::int64_t> pos{3};
  const auto y = ref::learned_add<R>(s, table, pos, x);
  for (std::size_t c = 0; c < 2; ++c) EXPECT_LE(err(y[c], M(x[c]) + M(table[6 + c])), kDigits50);
}

/// softmax(scale q.k + bias) v by hand, per head, j > i masked when causal.
using Vec = std::vector<R>;
std::vector<M> mattention(const AttentionSpec& s, const std::vector<std::int64_t>& pos, const Vec& q, const Vec& k,
                          const Vec& v, const M& scale) {
  const std::size_t n = pos.size(), H = static_cast<std::size_t>(s.heads), d = static_cast<std::size_t>(s.head_dim);
  const auto slopes = mslopes(s.heads);
  std::vector<M> out(n * H * d);
  auto at = [&](std::size_t t, std::size_t h, std::size_t c) { return (t * H + h) * d + c; };
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t keys = s.causal ? i + 1 : n;
      std::vector<M> l(keys);
      for (std::size_t j = 0; j < keys; ++j) {
        for (std::size_t c = 0; c < d; ++c) l[j] = l[j] + M(q[at(i, h, c)]) * M(k[at(j, h, c)]);
        l[j] = l[j] * scale;
        const M dist = mint(pos[i] - pos[j]);
        if (s.pe == AttentionPE::alibi) l[j] = l[j] - slopes[h] * (s.causal ? dist : mabs(dist));
      }
      M sum;
      std::vector<M> w(keys);
      for (std::size_t j = 0; j < keys; ++j) sum = sum + (w[j] = mexp(l[j]));  // no max shift: small logits
      for (std::size_t c = 0; c < d; ++c) {
        M acc;
        for (std::size_t j = 0; j < keys; ++j) acc = acc + w[j] * M(v[at(j, h, c)]);
        out[at(i, h, c)] = acc / sum;
      }
    }
  return out;
}

TEST(ReferenceCrosscheck, AttentionMatchesAHandWrittenSoftmax) {
  const std::vector<std::int64_t> pos{0, 5, 2};
  for (AttentionPE pe : {AttentionPE::none, AttentionPE::alibi})
    for (bool causal : {false, true}) {
      const AttentionSpec s{.heads = 2, .head_dim = 4, .causal = causal, .pe = pe};
      const std::size_t w = pos.size() * 8;
      const auto q = head_values(w), k = head_values(w, 3), v = head_values(w, 5);
      const auto got = ref::attention<R>(s, pos, {q, k, v}, {});
      const auto want = mattention(s, pos, q, k, v, M(0.5));  // 1/sqrt(4), exact
      for (std::size_t i = 0; i < w; ++i) ASSERT_LE(err(got[i], want[i]), kDigits50) << s.describe() << " out " << i;
      if (causal) {  // row 0 sees only key 0: its output is V row 0 exactly
        for (std::size_t c = 0; c < 8; ++c) EXPECT_TRUE(got[c] == v[c]) << c;
      }
    }
}

// The default scale 1/sqrt(head_dim) for a head_dim that is not a power of 4 (here 2).
TEST(ReferenceCrosscheck, AttentionDefaultScaleCarriesFiftyDigits) {
  const std::vector<std::int64_t> pos{0, 1, 2};
  const AttentionSpec s{.heads = 1, .head_dim = 2};
  const auto q = head_values(6), k = head_values(6, 1), v = head_values(6, 2);
  const auto got = ref::attention<R>(s, pos, {q, k, v}, {});
  const auto want = mattention(s, pos, q, k, v, M(1.0) / M::call(mpfr_sqrt, M(2.0)));
  double worst = 0;
  for (std::size_t i = 0; i < 6; ++i) worst = std::max(worst, err(got[i], want[i]));
  // A scale formed in double (53 bits) is off by ~3e-18 here.
  EXPECT_LE(worst, kDigits50) << "the default scale 1/sqrt(head_dim) must carry the reference's digits";
}

}  // namespace
