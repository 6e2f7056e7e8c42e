// Exact 2-D encodings: the per-axis sinusoid and 2-D RoPE, built from the 1-D references.
#pragma once

#include <cstdint>
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

/// Applies 2-D RoPE in place to x (tokens, heads, head_dim), token t at (rows[t], cols[t]).
template <class Real>
void rope2d_apply(const Rope2dSpec& s, int heads, std::span<const std::int64_t> rows,
                  std::span<const std::int64_t> cols, std::span<Real> x) {
  s.validate();
  const RopeRotation<Real> axis(s.axis());
  const std::size_t hd = static_cast<std::size_t>(s.head_dim), half = hd / 2, hs = static_cast<std::size_t>(heads);
  for (std::size_t t = 0; t < rows.size(); ++t)
    for (int p = 0; p < s.head_dim / 4; ++p) {
      const auto by_row = axis.cos_sin(rows[t], p), by_col = axis.cos_sin(cols[t], p);
      for (std::size_t h = 0; h < hs; ++h) {
        const std::span<Real> head = x.subspan((t * hs + h) * hd, hd);
        axis.turn(head.first(half), p, by_row);
        axis.turn(head.last(half), p, by_col);
      }
    }
}

}  // namespace pecheck::ref
