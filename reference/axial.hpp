// Exact 2-D encodings: the per-axis sinusoid and axial RoPE, built from the 1-D references.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "reference/rope.hpp"
#include "reference/sinusoidal.hpp"
#include "spec/conventions_2d.hpp"

namespace pecheck::ref {

/// PE(row, col): the row's 1-D sinusoid of width d/2, then the column's.
template <class Real>
std::vector<Real> sinusoidal2d_row(const Sinusoidal2dSpec& s, std::int64_t row, std::int64_t col) {
  s.validate();
  std::vector<Real> out = sinusoidal_row<Real>(s.axis(), row);
  const std::vector<Real> c = sinusoidal_row<Real>(s.axis(), col);
  out.insert(out.end(), c.begin(), c.end());
  return out;
}

/// Applies axial RoPE in place to x (tokens, heads, head_dim), token t at (rows[t], cols[t]).
template <class Real>
void rope2d_apply(const AxialRopeSpec& s, int heads, std::span<const std::int64_t> rows,
                  std::span<const std::int64_t> cols, std::span<Real> x) {
  s.validate();
  const RopeSpec axis = s.axis();
  const std::size_t hd = static_cast<std::size_t>(s.head_dim), half = hd / 2;
  for (std::size_t t = 0; t < rows.size(); ++t)
    for (std::size_t h = 0; h < static_cast<std::size_t>(heads); ++h) {
      const std::span<Real> head = x.subspan((t * static_cast<std::size_t>(heads) + h) * hd, hd);
      rope_rotate<Real>(axis, rows[t], head.first(half));
      rope_rotate<Real>(axis, cols[t], head.last(half));
    }
}

}  // namespace pecheck::ref
