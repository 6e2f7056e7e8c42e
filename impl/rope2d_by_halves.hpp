// 2-D RoPE's whole_head pairing on a backend's per-half kernel: in the half_split layout it is
// per_half once a head's middle quarters are exchanged (exchange_middle_quarters, spec/), so x is
// permuted, rotated per half, and permuted back. A permutation rounds nothing, so the
// backend's rounding is that of its per-half kernel.
#pragma once

#include <span>

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

}  // namespace pecheck
