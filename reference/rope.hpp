// Exact rotary position embedding: interleaved and half-split pairs, partial rotary, any base.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <utility>

#include "reference/rope_scaling.hpp"
#include "spec/conventions.hpp"

namespace pecheck::ref {

/// The two dims of a head that pair p (0 <= p < rotary_dim/2) rotates together.
inline std::pair<int, int> rope_pair(const RopeSpec& s, int p) {
  if (s.layout == RopeLayout::interleaved) return {2 * p, 2 * p + 1};
  return {p, p + s.rotary_dim / 2};
}

/// Rotates one head (head_dim values) to position pos: pair p by angle pos * inv_freq(p), then
/// scales the rotated dims by the magnitude (YaRN's attention factor, else 1).
template <class Real>
void rope_rotate(const RopeSpec& s, std::int64_t pos, std::span<Real> head) {
  using std::cos;
  using std::sin;
  const Real m = rope_magnitude<Real>(s);
  for (int p = 0; p < s.rotary_dim / 2; ++p) {
    const Real angle = Real(pos) * rope_inv_freq<Real>(s, p);
    const Real c = m * cos(angle), sn = m * sin(angle);
    const auto [a, b] = rope_pair(s, p);
    const Real x1 = head[static_cast<std::size_t>(a)], x2 = head[static_cast<std::size_t>(b)];
    head[static_cast<std::size_t>(a)] = x1 * c - x2 * sn;
    head[static_cast<std::size_t>(b)] = x2 * c + x1 * sn;
  }
}

/// Applies RoPE in place to x of shape (tokens, heads, head_dim), token t at positions[t].
template <class Real>
void rope_apply(const RopeSpec& s, int heads, std::span<const std::int64_t> positions, std::span<Real> x) {
  s.validate();
  const std::size_t hd = static_cast<std::size_t>(s.head_dim);
  for (std::size_t t = 0; t < positions.size(); ++t)
    for (std::size_t h = 0; h < static_cast<std::size_t>(heads); ++h)
      rope_rotate<Real>(s, positions[t], x.subspan((t * static_cast<std::size_t>(heads) + h) * hd, hd));
}

}  // namespace pecheck::ref
