// Exact rotary position embedding: interleaved and half-split pairs, partial rotary, any base.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "reference/rope_scaling.hpp"
#include "spec/conventions.hpp"

namespace pecheck::ref {

/// The two dims of a head that pair p (0 <= p < rotary_dim/2) rotates together.
inline std::pair<int, int> rope_pair(const RopeSpec& s, int p) {
  if (s.layout == RopeLayout::interleaved) return {2 * p, 2 * p + 1};
  return {p, p + s.rotary_dim / 2};
}

/// A spec's rotation with its frequencies and magnitude formed once (the reference's costly
/// part at 50 digits, with each pair's cos and sin): pair p at position pos turns by the angle
/// pos * inv_freq(p), and the rotated dims are scaled by the magnitude (YaRN's attention factor,
/// else 1).
template <class Real>
class RopeRotation {
 public:
  explicit RopeRotation(const RopeSpec& s) : s_(s), m_(rope_magnitude<Real>(s)) {
    for (int p = 0; p < s.rotary_dim / 2; ++p) inv_freq_.push_back(rope_inv_freq<Real>(s, p));
  }

  /// (m cos, m sin) of pair p's angle at pos.
  std::pair<Real, Real> cos_sin(std::int64_t pos, int p) const {
    using std::cos;
    using std::sin;
    const Real angle = Real(pos) * inv_freq_[static_cast<std::size_t>(p)];
    return {m_ * cos(angle), m_ * sin(angle)};
  }

  /// Turns pair p of one head (head_dim values) by (c, sn) from cos_sin.
  void turn(std::span<Real> head, int p, const std::pair<Real, Real>& cs) const {
    const auto [a, b] = rope_pair(s_, p);
    const Real x1 = head[static_cast<std::size_t>(a)], x2 = head[static_cast<std::size_t>(b)];
    head[static_cast<std::size_t>(a)] = x1 * cs.first - x2 * cs.second;
    head[static_cast<std::size_t>(b)] = x2 * cs.first + x1 * cs.second;
  }

  /// Rotates every pair of one head to position pos.
  void rotate(std::int64_t pos, std::span<Real> head) const {
    for (int p = 0; p < s_.rotary_dim / 2; ++p) turn(head, p, cos_sin(pos, p));
  }

 private:
  RopeSpec s_;
  Real m_;
  std::vector<Real> inv_freq_;
};

/// Rotates one head (head_dim values) to position pos: pair p by angle pos * inv_freq(p), then
/// scales the rotated dims by the magnitude (YaRN's attention factor, else 1).
template <class Real>
void rope_rotate(const RopeSpec& s, std::int64_t pos, std::span<Real> head) {
  RopeRotation<Real>(s).rotate(pos, head);
}

/// Applies RoPE in place to x of shape (tokens, heads, head_dim), token t at positions[t]: each
/// pair's cos and sin once per token, shared by the heads.
template <class Real>
void rope_apply(const RopeSpec& s, int heads, std::span<const std::int64_t> positions, std::span<Real> x) {
  s.validate();
  const RopeRotation<Real> rotation(s);
  const std::size_t hd = static_cast<std::size_t>(s.head_dim), hs = static_cast<std::size_t>(heads);
  for (std::size_t t = 0; t < positions.size(); ++t)
    for (int p = 0; p < s.rotary_dim / 2; ++p) {
      const auto cs = rotation.cos_sin(positions[t], p);
      for (std::size_t h = 0; h < hs; ++h) rotation.turn(x.subspan((t * hs + h) * hd, hd), p, cs);
    }
}

}  // namespace pecheck::ref
