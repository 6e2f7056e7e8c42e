// Scalar ALiBi bias and Shaw relative scores.
#include <algorithm>
#include <cmath>
#include <limits>

#include "impl/alibi_slopes.hpp"
#include "impl/scalar/kernels.hpp"
#include "impl/t5_bucket.hpp"
#include "interface/encoder.hpp"
#include "interface/operations.hpp"

namespace pecheck::scalar {

void alibi_bias(const AlibiSpec& s, DType dt, std::span<const std::int64_t> positions, std::span<float> out) {
  AlibiBias{s, dt, positions, out}.check();
  const std::size_t n = positions.size();
  for (int h = 0; h < s.heads; ++h) {
    const double m = alibi::slope(h, s.heads);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        float& b = out[(static_cast<std::size_t>(h) * n + i) * n + j];
        if (s.causal && j > i) {
          b = -std::numeric_limits<float>::infinity();
          continue;
        }
        const double distance = static_cast<double>(positions[i] - positions[j]);
        b = round_to(dt, -m * (s.causal ? distance : std::fabs(distance)));
      }
  }
}

void shaw_scores(const ShawSpec& s, DType dt, std::span<const float> q, std::span<const float> k,
                 std::span<const float> table, std::span<const std::int64_t> positions, std::span<float> out) {
  const std::size_t n = positions.size(), d = static_cast<std::size_t>(s.head_dim);
  ShawScores{s, dt, q, k, table, positions, out}.check();
  const std::int64_t K = s.max_distance;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t r = static_cast<std::size_t>(std::clamp(positions[j] - positions[i], -K, K) + K) * d;
      float acc = 0;  // fp32 accumulation: the honest baseline of a float kernel
      for (std::size_t c = 0; c < d; ++c) acc += q[i * d + c] * k[j * d + c] + q[i * d + c] * table[r + c];
      out[i * n + j] = round_to(dt, acc);
    }
}

void t5_bias(const T5Spec& s, DType dt, std::span<const float> table, std::span<const std::int64_t> positions,
             std::span<float> out) {
  const std::size_t n = positions.size(), H = static_cast<std::size_t>(s.heads);
  T5Bias{s, dt, table, positions, out}.check();
  const t5::Buckets buckets = t5::buckets_of(s);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const auto b = static_cast<std::size_t>(t5::bucket(positions[j] - positions[i], buckets));
      for (std::size_t h = 0; h < H; ++h) out[(h * n + i) * n + j] = round_to(dt, table[b * H + h]);
    }
}

void relative_bias_2d(const RelativeBias2dSpec& s, DType dt, std::span<const float> table,
                      std::span<const std::int64_t> rows, std::span<const std::int64_t> cols, std::span<float> out) {
  RelativeBias2d{s, dt, table, rows, cols, out}.check();
  const std::size_t n = rows.size(), H = static_cast<std::size_t>(s.heads);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const auto row = static_cast<std::size_t>(s.table_row(rows, cols, i, j));
      for (std::size_t h = 0; h < H; ++h) out[(h * n + i) * n + j] = round_to(dt, table[row * H + h]);
    }
}

}  // namespace pecheck::scalar
