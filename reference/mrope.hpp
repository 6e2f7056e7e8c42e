// Exact multimodal RoPE (M-RoPE): 1-D RoPE's rotation with each pair's position taken from the
// temporal, height or width stream that mrope_axis assigns it (Qwen2-VL sections, Qwen3-VL
// interleaved).
#pragma once

#include <fmt/format.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>

#include "reference/rope.hpp"
#include "spec/mrope.hpp"

namespace pecheck::ref {

/// Applies M-RoPE in place to x of shape (n, heads, head_dim), token i at (t[i], h[i], w[i]):
/// pair p turns by pos_axis(p) * inv_freq_p. It runs rope_apply's loop over RopeRotation of
/// s.rope(), so with t == h == w it computes rope_apply's result bit for bit.
template <class Real>
void mrope_apply(const MropeSpec& s, int heads, std::span<const std::int64_t> t, std::span<const std::int64_t> h,
                 std::span<const std::int64_t> w, std::span<Real> x) {
  s.validate();
  const std::size_t n = t.size(), hd = static_cast<std::size_t>(s.head_dim);
  if (heads <= 0) throw std::invalid_argument(fmt::format("M-RoPE needs heads > 0, got {}", heads));
  if (h.size() != n || w.size() != n)
    throw std::invalid_argument(
        fmt::format("M-RoPE needs one position per token on each axis, got t/h/w of {}/{}/{}", n, h.size(), w.size()));
  const std::size_t hs = static_cast<std::size_t>(heads);
  if (x.size() != n * hs * hd)
    throw std::invalid_argument(fmt::format("M-RoPE input must hold {} tokens x {} heads x {} dims = {} values, got {}",
                                            n, hs, hd, n * hs * hd, x.size()));
  const RopeRotation<Real> rotation(s.rope());
  const std::array<std::span<const std::int64_t>, 3> axes{t, h, w};
  for (std::size_t i = 0; i < n; ++i)
    for (int p = 0; p < s.pairs(); ++p) {
      const auto cs = rotation.cos_sin(axes[static_cast<std::size_t>(mrope_axis(s, p))][i], p);
      for (std::size_t head = 0; head < hs; ++head) rotation.turn(x.subspan((i * hs + head) * hd, hd), p, cs);
    }
}

}  // namespace pecheck::ref
