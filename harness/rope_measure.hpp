// The one measurement of RoPE agreement, shared by the catalogue's theorems, `validate --dump`,
// the HTML report and the AVX2 accuracy test: per rotated pair, the normwise error in units u of
// the dtype; per pass-through dim, one rule everywhere: it must come back bitwise unchanged
// (docs/properties/rope.agrees_with_reference.md, docs/dumps.md). Errors are grouped by octave of
// position where a report needs the curve.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "harness/flush_to_zero.hpp"
#include "harness/tolerance.hpp"
#include "reference/rope.hpp"
#include "spec/conventions.hpp"
#include "spec/dtype.hpp"

namespace pecheck::measure {

/// Octave k >= 1 holds positions [2^(k-1), 2^k); position 0 (and below) is octave 0.
inline int octave_of(std::int64_t pos) { return pos <= 0 ? 0 : std::bit_width(static_cast<std::uint64_t>(pos)); }

/// The smallest position of octave k (0 for octave 0) and one past its largest.
inline std::int64_t octave_lo(int k) { return k == 0 ? 0 : std::int64_t{1} << (k - 1); }
inline std::int64_t octave_hi(int k) { return std::int64_t{1} << k; }

/// The largest value seen in each octave of position.
class OctaveMax {
 public:
  void offer(std::int64_t pos, double v) {
    const std::size_t k = static_cast<std::size_t>(octave_of(pos));
    if (max_.size() <= k) max_.resize(k + 1, -std::numeric_limits<double>::infinity());
    if (std::isnan(v)) v = std::numeric_limits<double>::infinity();
    max_[k] = std::max(max_[k], v);
  }
  /// Per octave, -inf where nothing was offered.
  const std::vector<double>& values() const { return max_; }

 private:
  std::vector<double> max_;
};

/// The bound each accuracy contract sets on the pairs of one spec (tol::rope_pair_contract): a
/// pair's bound depends on the angle it turns at the position and on the weight |2p/d ln base| of
/// its fp32 exponent's rounding (NTK's scaled base: ref::rope_log_base), both fixed per pair once.
class ContractBounds {
 public:
  ContractBounds(DType dt, const RopeSpec& s) : dt_(dt) {
    // The base the fp32 power is taken of: NTK's b s^(d/(d-2)), whose larger log weighs more.
    const double log_base = ref::rope_log_base<double>(s);
    for (int p = 0; p < s.rotary_dim / 2; ++p) {
      freq_.push_back(ref::rope_inv_freq<double>(s, p));
      exponent_.push_back(std::fabs(2.0 * p / s.rotary_dim * log_base));
    }
  }
  /// The bound of contract c on pair p at position pos, in u.
  double at(tol::Contract c, int p, std::int64_t pos) const {
    const std::size_t i = static_cast<std::size_t>(p);
    return tol::rope_pair_contract(c, dt_, std::fabs(static_cast<double>(pos) * freq_[i]), exponent_[i]);
  }

 private:
  DType dt_;
  std::vector<double> freq_, exponent_;  // per pair: its frequency and the fp32 exponent's weight
};

/// One rotated pair of one head of one token.
struct PairError {
  std::size_t token, head;
  int pair, i, j;    ///< the pair and its two dims
  double error_u;    ///< (|y_p - exact_p| - flushed_pair_slack)+ / (u max(gain |x_p|, min_normal)); NaN: +inf
  double abs_error;  ///< |y_p - exact_p|
};

/// A pass-through dim (k >= rotary_dim) whose value is not bitwise the expected one (x itself, or
/// the other output compared with): nothing is computed there, so nothing may change, not even the
/// sign of a zero; only a NaN may stand for a NaN (its payload is not compared).
struct ChangedPassThrough {
  std::size_t token, head, dim;
  double expected, got;
};

/// Visits every rotated pair of x, y, exact (tokens, heads, head_dim) with its error, and every
/// pass-through dim where y differs from exact (which holds x there when exact is the reference).
/// x is any indexable sequence of the inputs (float or double). gain is the magnitude the rotated pairs carry (YaRN's
/// attention factor per rotation, else 1). y and exact are double so that callers compare an
/// encoder's output, a second encoder output or the reference rounded to double alike.
template <class X, class OnPair, class OnChanged>
void rope_errors(const RopeSpec& s, int heads, DType dt, const X& x, std::span<const double> y,
                 std::span<const double> exact, double gain, OnPair on_pair, OnChanged on_changed) {
  const std::size_t hd = static_cast<std::size_t>(s.head_dim), rot = static_cast<std::size_t>(s.rotary_dim);
  const std::size_t hs = static_cast<std::size_t>(heads);
  const double u = unit_roundoff(dt), flushed = gen::flushed_pair_slack();
  for (std::size_t base = 0; base + hd <= x.size(); base += hd) {
    const std::size_t token = base / hd / hs, head = base / hd % hs;
    for (int p = 0; p < s.rotary_dim / 2; ++p) {
      const auto [i, j] = ref::rope_pair(s, p);
      const std::size_t a = base + static_cast<std::size_t>(i), b = base + static_cast<std::size_t>(j);
      const double diff = std::hypot(y[a] - exact[a], y[b] - exact[b]);
      double err =
          std::max(diff - flushed, 0.0) /
          (u * std::max(gain * std::hypot(static_cast<double>(x[a]), static_cast<double>(x[b])), min_normal(dt)));
      if (std::isnan(err)) err = std::numeric_limits<double>::infinity();
      on_pair(PairError{token, head, p, i, j, err, diff});
    }
    for (std::size_t k = rot; k < hd; ++k) {
      const double want = exact[base + k], got = y[base + k];
      const bool same = std::bit_cast<std::uint64_t>(got) == std::bit_cast<std::uint64_t>(want);
      if (!same && !(std::isnan(got) && std::isnan(want))) on_changed(ChangedPassThrough{token, head, k, want, got});
    }
  }
}

}  // namespace pecheck::measure
