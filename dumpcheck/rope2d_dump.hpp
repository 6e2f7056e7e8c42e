// 2-D RoPE dumps (axial RoPE of vision transformers: Qwen2-VL's vision tower and the transformers
// towers built like it, EVA and ViT variants): a head's first half turned by the patch's row, its
// second half by its column, each half a 1-D RoPE of width d/2 (spec/conventions_2d.hpp). The
// dump is read as a RoPE dump of half-heads: token t's row half at rows[t], then its column half
// at cols[t], so RoPE's fit (layout, base, a scaling rule) and its agreement, contracts and norms
// apply unchanged; whole_head pairing (one RoPE over the head, HF's rotate_half) is that with the
// head's middle quarters exchanged. Pixtral's split frequencies (the column slower than the row by
// base^(2/d)) are read as the one RoPE of width d they are dealt out from, each pair at its axis's
// position, as M-RoPE's pairs are.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "dumpcheck/agreement.hpp"
#include "dumpcheck/dump_read.hpp"

namespace pecheck::dumpcheck {

/// Reads family "rope2d": x and y as a RoPE dump's (any axes, head_dim a multiple of 4), "rows" and
/// "cols" (n) or (b, n) positions; convention {layout, base or rope_theta, pairing: "per_half" |
/// "whole_head", frequencies: "shared" | "split"}, each optional (fitted).
void load_rope2d(const read::Json& manifest, read::ArrayReader& r, Dump& d);

/// Pixtral's split frequencies read as one RoPE of width d (its own construction): the dump with
/// each head's pairs reordered, slot 2k the row's k-th pair and 2k + 1 the column's, so that their
/// frequencies are base^(-2i/d) in order; axes[0] the rows, axes[1] the columns.
struct SplitReading {
  Dump whole;
  RopeSpec rope;              ///< width d, the fitted base and layout
  std::vector<double> exact;  ///< each pair turned by its axis (50-digit reference)
};

struct Rope2dFit {
  Rope2dSpec spec;
  Dump halves;    ///< shared frequencies: the dump as half-heads (the pairing's quarters exchanged into per_half)
  RopeSpec axis;  ///< the 1-D RoPE each half follows (width d/2), as fitted; split: the width-d one
  std::string text;
  std::optional<SplitReading> split;  ///< split frequencies: what agreement and norms read
};

/// The pairing, frequencies and axis RoPE that explain the dump (shared frequencies tried first);
/// FitError when none does (its message says whether the data fit with rows and columns exchanged,
/// or, stated shared, with split frequencies).
Rope2dFit fit_rope2d(const Dump& d);

/// rope2d.agrees_with_reference and rope.orthogonal on the fitted half-heads, under `judged`.
std::vector<Measurement> rope2d_measurements(const Rope2dFit& f, tol::Contract judged);

}  // namespace pecheck::dumpcheck
