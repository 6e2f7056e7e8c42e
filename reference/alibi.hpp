// ALiBi (Press et al. 2021): per-head slopes and the symmetric and causal linear score biases.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "spec/conventions.hpp"

namespace pecheck::ref {

/// Slopes of H heads: 2^(-8k/H) for k = 1..H when H is a power of two; otherwise, with P the
/// largest power of two below H, the P slopes 2^(-8k/P) followed by the first H-P of the odd
/// powers 2^(-4k/P), k = 1, 3, 5, ... (the paper's rule, HF build_alibi_tensor).
template <class Real>
std::vector<Real> alibi_slopes(int heads) {
  using std::pow;
  int p = 1;
  while (2 * p <= heads) p *= 2;
  std::vector<Real> slopes;
  for (int k = 1; k <= p; ++k) slopes.push_back(pow(Real(2), -Real(8 * k) / Real(p)));
  for (int k = 1; slopes.size() < static_cast<std::size_t>(heads); k += 2)
    slopes.push_back(pow(Real(2), -Real(4 * k) / Real(p)));
  return slopes;
}

/// Bias of query i (position pi) for key j (position pj), or nullopt when causally masked.
template <class Real>
std::optional<Real> alibi_bias(const AlibiSpec& s, const Real& slope, std::size_t i, std::size_t j, std::int64_t pi,
                               std::int64_t pj) {
  using std::abs;
  if (s.causal && j > i) return std::nullopt;
  const Real distance = s.causal ? Real(pi - pj) : abs(Real(pi - pj));
  return -slope * distance;
}

/// Bias tensor (heads, n, n) with -inf where masked.
template <class Real>
std::vector<Real> alibi_bias_tensor(const AlibiSpec& s, std::span<const std::int64_t> positions) {
  s.validate();
  const std::size_t n = positions.size();
  const auto slopes = alibi_slopes<Real>(s.heads);
  std::vector<Real> out(static_cast<std::size_t>(s.heads) * n * n);
  for (std::size_t h = 0; h < slopes.size(); ++h)
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        const auto b = alibi_bias<Real>(s, slopes[h], i, j, positions[i], positions[j]);
        out[(h * n + i) * n + j] = b ? *b : -std::numeric_limits<Real>::infinity();
      }
  return out;
}

}  // namespace pecheck::ref
