// Identities the oracle must satisfy whatever its inputs, checked with RapidCheck for Real =
// double and Real = DefaultReal (MPFR, 50 digits): rotations invert and compose, keep norms,
// sinusoid rows have constant energy, softmax rows are distributions, causal row 0 is V row 0,
// ALiBi slopes are ordered. The crosscheck test pins a few values; these pin the structure over
// random specs, positions (negative and large included) and inputs.

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <ostream>
#include <span>
#include <type_traits>
#include <vector>

#include "reference/alibi.hpp"
#include "reference/attention.hpp"
#include "reference/real.hpp"
#include "reference/rope.hpp"
#include "reference/sinusoidal.hpp"
#include "tests/test_seed.hpp"

// RapidCheck finds these by ADL to print the enums of a counterexample instead of <???>.
namespace pecheck {
void showValue(SinusoidalLayout l, std::ostream& os) { os << layout_name(l); }
void showValue(RopeLayout l, std::ostream& os) { os << layout_name(l); }
void showValue(AttentionPE p, std::ostream& os) { os << pe_name(p); }
}  // namespace pecheck

namespace {

// RapidCheck reads RC_PARAMS on first use; default it to the suite's fixed seed so CI runs are
// reproducible (PECHECK_SEED varies it, an RC_PARAMS already set wins and is left alone).
[[maybe_unused]] const bool kSeeded = [] {
  const auto params = "seed=" + std::to_string(pecheck::testing::test_seed());
  return setenv("RC_PARAMS", params.c_str(), /*overwrite=*/0) == 0;
}();

using namespace pecheck;
using Mp = ref::DefaultReal;

/// Unit roundoff of Real: every tolerance below is a small multiple of it, so an identity that
/// only holds to double precision fails loudly under MPFR.
template <class Real>
constexpr double kEps = std::is_same_v<Real, double> ? 0x1p-53 : 0x1p-167;

/// Whether the MPFR instantiation should draw smaller cases to keep the file at a few seconds.
template <class Real>
constexpr bool kSmall = !std::is_same_v<Real, double>;

template <class Real>
double dbl(const Real& x) {
  return ref::to_double(x);
}

/// n nonzero values k/64, |k| <= 4096: exact in both Reals, so both see the same inputs.
template <class Real>
std::vector<Real> draw_values(std::size_t n) {
  const auto ks = *rc::gen::container<std::vector<int>>(n, rc::gen::inRange(-4096, 4096));
  std::vector<Real> x;
  for (int k : ks) x.push_back(Real(k <= 0 ? k - 1 : k) / 64);
  return x;
}

/// Positions: mostly moderate, often negative, sometimes near 2^24 or far beyond it.
std::int64_t draw_position() {
  return *rc::gen::oneOf(rc::gen::inRange<std::int64_t>(-5000, 5000),
                         rc::gen::inRange<std::int64_t>(-(std::int64_t{1} << 24), std::int64_t{1} << 24),
                         rc::gen::element<std::int64_t>(0, 1, -1, (1 << 24) - 1, -(std::int64_t{1} << 40)));
}

template <class Real>
RopeSpec draw_rope_spec() {
  const int half = *rc::gen::inRange(1, kSmall<Real> ? 5 : 17);
  const int rot_half = *rc::gen::inRange(1, half + 1);
  const RopeSpec s{2 * half, 2 * rot_half, *rc::gen::element(1e4, 5e5, 1e6, 3.0),
                   *rc::gen::element(RopeLayout::interleaved, RopeLayout::half_split)};
  RC_CLASSIFY(s.rotary_dim < s.head_dim, "partial rotary");
  return s;
}

/// |x|^2 in Real: a norm taken in double would hide any error below 1e-16 under MPFR.
template <class Real>
Real sumsq(const std::vector<Real>& x) {
  Real acc = 0;
  for (const Real& v : x) acc += v * v;
  return acc;
}

template <class Real>
double norm(const std::vector<Real>& x) {
  return std::sqrt(dbl(sumsq(x)));
}

template <class Real>
double max_diff(const std::vector<Real>& a, const std::vector<Real>& b) {
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(dbl(Real(a[i] - b[i]))));
  return m;
}

template <class Real>
std::vector<Real> rotated(const RopeSpec& s, std::int64_t pos, std::vector<Real> x) {
  ref::rope_rotate<Real>(s, pos, std::span<Real>(x));
  return x;
}

// R(-m) R(m) = I: sin(-a) = -sin(a) exactly, so only c^2 + s^2 - 1 and the products round.
template <class Real>
void rope_inverse() {
  const auto s = draw_rope_spec<Real>();
  const std::int64_t m = draw_position();
  RC_CLASSIFY(m < 0, "negative position");
  const auto x = draw_values<Real>(static_cast<std::size_t>(s.head_dim));
  const auto back = rotated(s, -m, rotated(s, m, x));
  RC_ASSERT(max_diff(back, x) <= 16 * kEps<Real> * norm(x));
}

// R(a) R(b) = R(a + b): the angles a f, b f and (a + b) f each round once, an error that grows
// with |a| + |b| in radians, so the bound does too.
template <class Real>
void rope_composition() {
  const auto s = draw_rope_spec<Real>();
  const std::int64_t a = *rc::gen::inRange(-100000, 100000), b = *rc::gen::inRange(-100000, 100000);
  const auto x = draw_values<Real>(static_cast<std::size_t>(s.head_dim));
  const double tol = kEps<Real> * (8 + 4 * double(std::abs(a) + std::abs(b))) * norm(x);
  RC_ASSERT(max_diff(rotated(s, a, rotated(s, b, x)), rotated(s, a + b, x)) <= tol);
}

// |R(m) x| = |x| for every position, including the dims that partial rotary passes through.
template <class Real>
void rope_norm() {
  const auto s = draw_rope_spec<Real>();
  const auto x = draw_values<Real>(static_cast<std::size_t>(s.head_dim));
  const auto y = rotated(s, draw_position(), x);
  RC_ASSERT(std::fabs(dbl(Real(sumsq(y) - sumsq(x)))) <= 16 * kEps<Real> * dbl(sumsq(x)));
  for (std::size_t c = static_cast<std::size_t>(s.rotary_dim); c < x.size(); ++c) RC_ASSERT(y[c] == x[c]);
}

// sin^2 + cos^2 = 1 per pair, whatever the angle's own error: |PE(pos)|^2 = d/2 up to ~3 eps
// per pair and the d-term summation (d eps relative to d/2).
template <class Real>
void sinusoid_energy() {
  const int d = 2 * *rc::gen::inRange(1, kSmall<Real> ? 17 : 129);
  const SinusoidalSpec s{d, *rc::gen::element(1e4, 5e5, 1e6, 3.0),
                         *rc::gen::element(SinusoidalLayout::interleaved, SinusoidalLayout::concatenated)};
  const auto row = ref::sinusoidal_row<Real>(s, draw_position());
  Real energy = 0;
  for (const Real& v : row) energy += v * v;
  RC_ASSERT(std::fabs(dbl(Real(energy - Real(d) / 2))) <= (4 + d) * (d / 2) * kEps<Real>);
}

// Each row of softmax_rows is a probability distribution; masked (-inf) logits get exactly 0.
template <class Real>
void softmax_distribution() {
  const int rows = *rc::gen::inRange(1, 7), cols = *rc::gen::inRange(1, 7);
  ref::Matrix<Real> l(rows, cols);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      const bool masked = j != i % cols && *rc::gen::arbitrary<bool>();  // one finite per row
      l(i, j) = masked ? -std::numeric_limits<Real>::infinity() : Real(*rc::gen::inRange(-160, 160)) / 4;
    }
  const ref::Matrix<Real> p = ref::softmax_rows<Real>(l);
  for (int i = 0; i < rows; ++i) {
    Real sum = 0;
    for (int j = 0; j < cols; ++j) {
      if (l(i, j) == -std::numeric_limits<Real>::infinity()) RC_ASSERT(p(i, j) == Real(0));
      RC_ASSERT(p(i, j) >= Real(0) && p(i, j) <= Real(1));
      sum += p(i, j);
    }
    RC_ASSERT(std::fabs(dbl(Real(sum - 1))) <= 4 * cols * kEps<Real>);
  }
}

// Causal: query 0 sees only key 0, weight exp(0) / 1 = 1 exactly, so output row 0 is V row 0
// bit for bit, for every PE that leaves V alone (none, RoPE on Q/K, ALiBi, Shaw).
template <class Real>
void causal_first_row() {
  const std::size_t n = static_cast<std::size_t>(*rc::gen::inRange(1, kSmall<Real> ? 4 : 7));
  const AttentionSpec s{
      .heads = *rc::gen::inRange(1, 3),
      .head_dim = 2 * *rc::gen::inRange(1, 3),
      .causal = true,
      .pe = *rc::gen::element(AttentionPE::none, AttentionPE::rope, AttentionPE::alibi, AttentionPE::shaw),
      .shaw_max_distance = *rc::gen::inRange(0, 4)};
  std::vector<std::int64_t> pos(n);
  for (auto& p : pos) p = *rc::gen::inRange(-1000, 1000);
  const std::size_t w = n * static_cast<std::size_t>(s.width());
  const auto q = draw_values<Real>(w), k = draw_values<Real>(w), v = draw_values<Real>(w);
  const auto table = draw_values<Real>(static_cast<std::size_t>(s.shaw().table_rows() * s.head_dim));
  const auto o = ref::attention<Real>(s, pos, {q, k, v}, table);
  RC_ASSERT(o.size() == w);
  for (std::size_t c = 0; c < static_cast<std::size_t>(s.width()); ++c) RC_ASSERT(o[c] == v[c]);
}

// Slopes lie in (0, 1); the power-of-two block 2^(-8k/P) strictly decreases from 2^(-8/P); the
// extra block (H not a power of two) strictly decreases too and interleaves the first block.
template <class Real>
void alibi_slopes_ordered() {
  const int heads = *rc::gen::inRange(1, kSmall<Real> ? 65 : 257);
  int p = 1;
  while (2 * p <= heads) p *= 2;
  RC_CLASSIFY(p == heads, "power of two");
  const auto m = ref::alibi_slopes<Real>(heads);
  RC_ASSERT(m.size() == static_cast<std::size_t>(heads));
  for (const Real& x : m) RC_ASSERT(x > Real(0) && x < Real(1));
  RC_ASSERT(std::fabs(dbl(m[0]) - std::exp2(-8.0 / p)) <= 4 * 0x1p-53);
  for (int h = 1; h < p; ++h) RC_ASSERT(m[static_cast<std::size_t>(h)] < m[static_cast<std::size_t>(h - 1)]);
  for (int h = p + 1; h < heads; ++h) RC_ASSERT(m[static_cast<std::size_t>(h)] < m[static_cast<std::size_t>(h - 1)]);
  // Extra slope j is 2^(-4(2j+1)/P), strictly between block slopes j and j+1 (0-based: j-1, j).
  for (int j = 0; p + j < heads; ++j) {
    const Real& e = m[static_cast<std::size_t>(p + j)];
    RC_ASSERT(e < (j == 0 ? Real(1) : m[static_cast<std::size_t>(j - 1)]));
    RC_ASSERT(e > m[static_cast<std::size_t>(j)]);
  }
}

}  // namespace

RC_GTEST_PROP(ReferenceIdentities, ropeInverseDouble, ()) { rope_inverse<double>(); }
RC_GTEST_PROP(ReferenceIdentities, ropeInverseMpfr, ()) { rope_inverse<Mp>(); }
RC_GTEST_PROP(ReferenceIdentities, ropeCompositionDouble, ()) { rope_composition<double>(); }
RC_GTEST_PROP(ReferenceIdentities, ropeCompositionMpfr, ()) { rope_composition<Mp>(); }
RC_GTEST_PROP(ReferenceIdentities, ropeKeepsNormDouble, ()) { rope_norm<double>(); }
RC_GTEST_PROP(ReferenceIdentities, ropeKeepsNormMpfr, ()) { rope_norm<Mp>(); }
RC_GTEST_PROP(ReferenceIdentities, sinusoidEnergyIsHalfWidthDouble, ()) { sinusoid_energy<double>(); }
RC_GTEST_PROP(ReferenceIdentities, sinusoidEnergyIsHalfWidthMpfr, ()) { sinusoid_energy<Mp>(); }
RC_GTEST_PROP(ReferenceIdentities, softmaxRowsSumToOneDouble, ()) { softmax_distribution<double>(); }
RC_GTEST_PROP(ReferenceIdentities, softmaxRowsSumToOneMpfr, ()) { softmax_distribution<Mp>(); }
RC_GTEST_PROP(ReferenceIdentities, causalRowZeroIsValueRowZeroDouble, ()) { causal_first_row<double>(); }
RC_GTEST_PROP(ReferenceIdentities, causalRowZeroIsValueRowZeroMpfr, ()) { causal_first_row<Mp>(); }
RC_GTEST_PROP(ReferenceIdentities, alibiSlopesAreOrderedDouble, ()) { alibi_slopes_ordered<double>(); }
RC_GTEST_PROP(ReferenceIdentities, alibiSlopesAreOrderedMpfr, ()) { alibi_slopes_ordered<Mp>(); }

// Not a property but the same two instantiations: with Real = double the reference is an
// ordinary double implementation, and long double computations of the same formulas must agree
// to a few double ulps (the MPFR instantiation is pinned by reference_crosscheck_test).
TEST(ReferenceIdentities, DoubleInstantiationAgreesWithLongDouble) {
  const SinusoidalSpec s{64, 1e4, SinusoidalLayout::interleaved};
  for (std::int64_t pos : {0, 1, 17, 100}) {
    const auto row = ref::sinusoidal_row<double>(s, pos);
    for (std::size_t i = 0; i < 32; ++i) {
      const long double a = static_cast<long double>(pos) * std::pow(1e4L, -2.0L * i / 64);
      // The double frequency is off by ~|ln f| ulps, which the angle carries into sin/cos.
      const double tol = 1e-15 * std::max(1.0L, a);
      EXPECT_NEAR(row[2 * i], static_cast<double>(std::sin(a)), tol) << pos << " " << i;
      EXPECT_NEAR(row[2 * i + 1], static_cast<double>(std::cos(a)), tol) << pos << " " << i;
    }
  }
  const auto slopes = ref::alibi_slopes<double>(12);
  for (std::size_t h = 8; h < 12; ++h)  // the non-dyadic ones: 2^-0.5, 2^-1.5, ...
    EXPECT_NEAR(slopes[h], static_cast<double>(std::exp2(0.5L - (h - 7.0L))), 1e-15) << h;
  std::vector<double> x{0.3, -1.25, 2.0, 0.5};
  ref::rope_rotate<double>({4, 4, 1e4, RopeLayout::interleaved}, 3, std::span<double>(x));
  const long double a0 = 3, a1 = 3 * std::pow(1e4L, -0.5L);
  EXPECT_NEAR(x[0], static_cast<double>(0.3L * std::cos(a0) + 1.25L * std::sin(a0)), 1e-15);
  EXPECT_NEAR(x[1], static_cast<double>(-1.25L * std::cos(a0) + 0.3L * std::sin(a0)), 1e-15);
  EXPECT_NEAR(x[2], static_cast<double>(2.0L * std::cos(a1) - 0.5L * std::sin(a1)), 1e-15);
  EXPECT_NEAR(x[3], static_cast<double>(0.5L * std::cos(a1) + 2.0L * std::sin(a1)), 1e-15);
}
