// Shaw et al. (2018) clipped relative position embeddings and the scores q.k + q.r(j-i).
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "spec/conventions.hpp"

namespace pecheck::ref {

/// Row of the relative table for query position pi and key position pj: clamp(pj-pi, -K, K) + K.
inline std::size_t shaw_row(const ShawSpec& s, std::int64_t pi, std::int64_t pj) {
  const std::int64_t k = s.max_distance;
  return static_cast<std::size_t>(std::clamp<std::int64_t>(pj - pi, -k, k) + k);
}

/// Scores (n x n): q_i . k_j + q_i . r[shaw_row(p_i, p_j)]; q, k are (n x head_dim), table is
/// (2K+1 x head_dim). Unscaled: the attention layer multiplies by its scale.
template <class Real>
std::vector<Real> shaw_scores(const ShawSpec& s, std::span<const Real> q, std::span<const Real> k,
                              std::span<const Real> table, std::span<const std::int64_t> positions) {
  s.validate();
  const std::size_t n = positions.size(), d = static_cast<std::size_t>(s.head_dim);
  std::vector<Real> out(n * n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t r = shaw_row(s, positions[i], positions[j]) * d;
      Real acc = 0;
      for (std::size_t c = 0; c < d; ++c) acc += q[i * d + c] * (k[j * d + c] + table[r + c]);
      out[i * n + j] = acc;
    }
  return out;
}

}  // namespace pecheck::ref
