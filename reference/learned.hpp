// Learned absolute position embedding: y = x + E[pos]; a position outside the table is an error.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

#include "spec/conventions.hpp"

namespace pecheck::ref {

/// Throws std::out_of_range for a position outside [0, max_len): a table never wraps.
inline void check_learned_position(const LearnedSpec& s, std::int64_t pos) {
  if (pos < 0 || pos >= s.max_len)
    throw std::out_of_range(fmt::format("learned position {} is outside the table [0, {})", pos, s.max_len));
}

/// x (positions.size() x d_model) plus rows of table (max_len x d_model).
template <class Real>
std::vector<Real> learned_add(const LearnedSpec& s, std::span<const Real> table,
                              std::span<const std::int64_t> positions, std::span<const Real> x) {
  s.validate();
  const std::size_t d = static_cast<std::size_t>(s.d_model);
  std::vector<Real> y(x.begin(), x.end());
  for (std::size_t t = 0; t < positions.size(); ++t) {
    check_learned_position(s, positions[t]);
    const std::size_t row = static_cast<std::size_t>(positions[t]) * d;
    for (std::size_t c = 0; c < d; ++c) y[t * d + c] += table[row + c];
  }
  return y;
}

}  // namespace pecheck::ref
