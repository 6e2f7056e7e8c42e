// 2-D RoPE's whole_head pairing on a backend's per-half kernel: in the half_split layout it is
// per_half once a head's middle quarters are exchanged (exchange_middle_quarters, spec/), so x is
// permuted, rotated per half, and permuted back. A permutation rounds nothing, so the
// backend's rounding is that of its per-half kernel.
#pragma once

#include <algorithm>
#include <span>
#include <vector>

#include "interface/operations.hpp"

namespace pecheck {

/// per_half(spec, x) rotates c.x in place by per_half 2-D RoPE (spec.pairing is per_half).
template <class PerHalf>
void rope2d_by_halves(const Rope2dApply& c, PerHalf per_half) {
  c.check();
  Rope2dSpec s = c.spec;
  const bool permute = s.pairs_whole_head();
  s.pairing = Rope2dPairing::per_half;  // the same rotation in the interleaved layout
  if (permute) exchange_middle_quarters(c.x, s.head_dim);
  per_half(s, c.x);
  if (permute) exchange_middle_quarters(c.x, s.head_dim);
}

/// Per-half 2-D RoPE (spec.pairing per_half) as two 1-D RoPE calls of width d/2: each axis's
/// half-heads gathered into an (n, heads, d/2) tensor, turned by one_d(RopeApply) at that axis's
/// positions and frequencies (Rope2dSpec::axis: Pixtral's column its own), and scattered back. A
/// gather rounds nothing, so the rounding is one_d's.
template <class OneD>
void rope2d_as_two_ropes(const Rope2dSpec& s, DType dt, int heads, std::span<const std::int64_t> rows,
                         std::span<const std::int64_t> cols, std::span<float> x, OneD one_d) {
  const std::size_t half = static_cast<std::size_t>(s.head_dim / 2), blocks = x.size() / (2 * half);
  for (const bool by_column : {false, true}) {
    const std::size_t which = by_column ? half : 0;
    std::vector<float> part(blocks * half);
    for (std::size_t b = 0; b < blocks; ++b)
      std::copy_n(x.begin() + static_cast<std::ptrdiff_t>(b * 2 * half + which), half,
                  part.begin() + static_cast<std::ptrdiff_t>(b * half));
    one_d(RopeApply{s.axis(by_column), dt, heads, by_column ? cols : rows, part});
    for (std::size_t b = 0; b < blocks; ++b)
      std::copy_n(part.begin() + static_cast<std::ptrdiff_t>(b * half), half,
                  x.begin() + static_cast<std::ptrdiff_t>(b * 2 * half + which));
  }
}

}  // namespace pecheck
