// M-RoPE on a backend's own 1-D RoPE kernel. Rotary pairs are independent, so x rotated three
// times, once by each axis's positions, holds every pair's answer: each pair is then taken from
// the copy of its axis (mrope_axis). Three times the work of 1-D RoPE, exactly its rounding.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "interface/operations.hpp"

namespace pecheck {

/// rope(spec, positions, x) rotates x (n, heads, head_dim) in place by 1-D RoPE.
template <class Rope1d>
void mrope_by_axes(const MropeApply& c, Rope1d rope) {
  c.check();
  const RopeSpec s = c.spec.rope();
  const std::array<std::span<const std::int64_t>, 3> axes{c.temporal, c.height, c.width};
  std::array<std::vector<float>, 3> turned;
  for (std::size_t a = 0; a < 3; ++a) {
    turned[a].assign(c.x.begin(), c.x.end());
    rope(s, axes[a], std::span<float>(turned[a]));
  }
  const std::size_t hd = static_cast<std::size_t>(s.head_dim), pairs = hd / 2;
  for (std::size_t head = 0; head < c.x.size(); head += hd)
    for (std::size_t p = 0; p < pairs; ++p) {
      const std::vector<float>& from = turned[static_cast<std::size_t>(mrope_axis(c.spec, static_cast<int>(p)))];
      const std::size_t i = s.layout == RopeLayout::interleaved ? 2 * p : p;
      const std::size_t j = s.layout == RopeLayout::interleaved ? 2 * p + 1 : p + pairs;
      c.x[head + i] = from[head + i];
      c.x[head + j] = from[head + j];
    }
}

}  // namespace pecheck
