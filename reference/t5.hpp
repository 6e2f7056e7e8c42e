// T5's bucketed relative attention bias (Raffel et al. 2020, HF _relative_position_bucket), with
// the log-spaced buckets evaluated exactly and their near-ties reported.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "spec/conventions.hpp"

namespace pecheck::ref {

/// The bucket of one relative position, and the neighbouring bucket an implementation evaluating
/// the logarithm in floating point may land in instead, when the exact log coordinate lies
/// within `tie_window` of an integer.
struct T5Bucket {
  int bucket = 0;
  std::optional<int> alternative;
};

/// relative = p_j - p_i (key minus query). Bidirectional: keys after the query use the upper
/// half of the buckets; causal: keys after the query all fall in bucket 0. Distances n below
/// max_exact get bucket n; larger ones max_exact + floor((half - max_exact) log(n / max_exact) /
/// log(max_distance / max_exact)), at most half - 1.
template <class Real>
T5Bucket t5_bucket(const T5Spec& s, std::int64_t relative, double tie_window) {
  using std::floor;
  using std::log;
  const int half = s.half(), me = s.max_exact();
  int offset = 0;
  std::int64_t n = 0;
  if (s.bidirectional) {
    offset = relative > 0 ? half : 0;
    n = relative < 0 ? -relative : relative;
  } else {
    n = relative < 0 ? -relative : 0;
  }
  if (n < me) return {offset + static_cast<int>(n), std::nullopt};
  const Real t = Real(half - me) * log(Real(n) / Real(me)) / log(Real(s.max_distance) / Real(me));
  const Real k = floor(t);
  const auto clamp = [&](Real v) { return offset + static_cast<int>(std::min<Real>(Real(me) + v, Real(half - 1))); };
  T5Bucket b{clamp(k), std::nullopt};
  if (t - k < Real(tie_window) && k >= 1 && clamp(k - 1) != b.bucket) b.alternative = clamp(k - 1);
  if (k + 1 - t < Real(tie_window) && clamp(k + 1) != b.bucket) b.alternative = clamp(k + 1);
  return b;
}

/// out (heads, n, n) = table[bucket(p_j - p_i), h] with table (num_buckets, heads).
template <class Real>
std::vector<Real> t5_bias_tensor(const T5Spec& s, std::span<const Real> table,
                                 std::span<const std::int64_t> positions) {
  s.validate();
  const std::size_t n = positions.size(), H = static_cast<std::size_t>(s.heads);
  std::vector<Real> out(H * n * n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const auto b = static_cast<std::size_t>(t5_bucket<Real>(s, positions[j] - positions[i], 0.0).bucket);
      for (std::size_t h = 0; h < H; ++h) out[(h * n + i) * n + j] = table[b * H + h];
    }
  return out;
}

}  // namespace pecheck::ref
