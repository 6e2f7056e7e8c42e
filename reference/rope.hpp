// Exact rotary position embedding: interleaved and half-split pairs, partial rotary, any base.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <utility>

#include "reference/sinusoidal.hpp"
#include "spec/conventions.hpp"

namespace pecheck::ref {

/// The two dims of a head that pair p (0 <= p < rotary_dim/2) rotates together.
inline std::pair<int, int> rope_pair(const RopeSpec& s, int p) {
  if (s.layout == RopeLayout::interleaved) return {2 * p, 2 * p + 1};
  return {p, p + s.rotary_dim / 2};
}

/// Rotates one head (head_dim values) to position pos: pair p by angle pos * base^(-2p/rotary_dim).
template <class Real>
void rope_rotate(const RopeSpec& s, std::int64_t pos, std::span<Real> head) {
  using std::cos;
  using std::sin;
  for (int p = 0; p < s.rotary_dim / 2; ++p) {
    const Real angle = Real(pos) * frequency<Real>(p, s.rotary_dim, s.base);
    const Real c = cos(angle), sn = sin(angle);
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
