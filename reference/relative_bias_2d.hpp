// The 2-D relative position bias table (Swin, BEiT): each score's bias read from the table at its
// patches' offset, as HF's relative_position_index builds it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "spec/conventions_2d.hpp"

namespace pecheck::ref {

/// out (heads, n, n) = table[s.table_row(i, j), h] with table (table_rows, heads).
template <class Real>
std::vector<Real> relative_bias_2d_tensor(const RelativeBias2dSpec& s, std::span<const Real> table,
                                          std::span<const std::int64_t> rows, std::span<const std::int64_t> cols) {
  s.validate();
  const std::size_t n = rows.size(), H = static_cast<std::size_t>(s.heads);
  std::vector<Real> out(H * n * n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const auto r = static_cast<std::size_t>(s.table_row(rows, cols, i, j));
      for (std::size_t h = 0; h < H; ++h) out[(h * n + i) * n + j] = table[r * H + h];
    }
  return out;
}

}  // namespace pecheck::ref
