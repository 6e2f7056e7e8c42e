// Exact 2-D encodings: the per-axis sinusoid and 2-D RoPE, built from the 1-D references.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "reference/rope.hpp"
#include "reference/sinusoidal.hpp"
#include "spec/conventions_2d.hpp"

namespace pecheck::ref {

/// PE(row, col): the row's 1-D sinusoid of width d/2, then the column's; freqs are the axis's
/// (sinusoidal_frequencies(s.axis())), formed once for many tokens.
template <class Real>
std::vector<Real> sinusoidal2d_row(const Sinusoidal2dSpec& s, std::int64_t row, std::int64_t col,
                                   const std::vector<Real>& freqs) {
  s.validate();
  std::vector<Real> out = sinusoidal_row<Real>(s.axis(), row, freqs);
  const std::vector<Real> c = sinusoidal_row<Real>(s.axis(), col, freqs);
  out.insert(out.end(), c.begin(), c.end());
  return out;
}

/// PE(row, col): the row's 1-D sinusoid of width d/2, then the column's.
template <class Real>
std::vector<Real> sinusoidal2d_row(const Sinusoidal2dSpec& s, std::int64_t row, std::int64_t col) {
  return sinusoidal2d_row<Real>(s, row, col, sinusoidal_frequencies<Real>(s.axis()));
}

/// The dims of a head that pair p (p < d/4) of the row's (by_column false) or the column's axis
/// rotates: within the half-head in per_half, pair p or d/4 + p of the whole head in whole_head.
inline std::pair<int, int> rope2d_pair(const Rope2dSpec& s, bool by_column, int p) {
  const int quarter = s.head_dim / 4;
  if (s.pairing == Rope2dPairing::whole_head)
    return rope_pair(RopeSpec{s.head_dim, s.head_dim, s.base, s.layout}, by_column ? quarter + p : p);
  const auto [i, j] = rope_pair(s.axis(), p);
  const int offset = by_column ? 2 * quarter : 0;
  return {offset + i, offset + j};
}

/// Applies 2-D RoPE in place to x (tokens, heads, head_dim), token t at (rows[t], cols[t]): pair p
/// of the axis (p < d/4) turns by the row at the row axis's frequency and by the column at the
/// column axis's (the same, or Pixtral's odd-indexed ones: Rope2dFrequencies), in the half-heads (per_half) or as
/// pairs p and p + d/4 of one RoPE over the whole head (whole_head), straight from the definition.
template <class Real>
void rope2d_apply(const Rope2dSpec& s, int heads, std::span<const std::int64_t> rows,
                  std::span<const std::int64_t> cols, std::span<Real> x) {
  s.validate();
  const RopeRotation<Real> row_axis(s.axis(false)), col_axis(s.axis(true));
  // whole_head turns pairs of one RoPE over the head (its own frequencies unused: the axis's are).
  const std::optional<RopeRotation<Real>> whole =
      s.pairing == Rope2dPairing::whole_head
          ? std::optional<RopeRotation<Real>>(RopeSpec{s.head_dim, s.head_dim, s.base, s.layout})
          : std::nullopt;
  const int quarter = s.head_dim / 4;
  const std::size_t hd = static_cast<std::size_t>(s.head_dim), half = hd / 2, hs = static_cast<std::size_t>(heads);
  for (std::size_t t = 0; t < rows.size(); ++t)
    for (int p = 0; p < quarter; ++p) {
      const auto by_row = row_axis.cos_sin(rows[t], p), by_col = col_axis.cos_sin(cols[t], p);
      for (std::size_t h = 0; h < hs; ++h) {
        const std::span<Real> head = x.subspan((t * hs + h) * hd, hd);
        if (whole) {
          whole->turn(head, p, by_row);
          whole->turn(head, quarter + p, by_col);
        } else {
          row_axis.turn(head.first(half), p, by_row);
          col_axis.turn(head.last(half), p, by_col);
        }
      }
    }
}

}  // namespace pecheck::ref
