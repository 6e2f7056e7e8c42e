// Scalar multi-head attention: fp32 scores, max-subtracted softmax, fp32 accumulation; the
// position transforms are applied in fp32 (PE added to Q, K, V; RoPE on Q, K).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "impl/alibi_slopes.hpp"
#include "impl/scalar/kernels.hpp"
#include "impl/t5_bucket.hpp"
#include "interface/encoder.hpp"
#include "interface/operations.hpp"

namespace pecheck::scalar {

namespace {

struct Prepared {
  std::vector<float> q, k, v;
};

/// Q holds the last query_count(n) tokens, each encoded at its own token's position.
Prepared prepare_inputs(const AttentionSpec& s, std::span<const std::int64_t> positions, std::span<const float> q,
                        std::span<const float> k, std::span<const float> v) {
  Prepared p{{q.begin(), q.end()}, {k.begin(), k.end()}, {v.begin(), v.end()}};
  const std::size_t q_from = s.query_offset(positions.size()) * static_cast<std::size_t>(s.width());
  if (s.pe == AttentionPE::sinusoidal) {
    std::vector<float> pe(positions.size() * static_cast<std::size_t>(s.width()));
    sinusoidal_table(s.sinusoidal(), DType::f32, positions, pe);
    for (std::size_t i = 0; i < pe.size(); ++i) {
      if (i >= q_from) p.q[i - q_from] += pe[i];
      p.k[i] += pe[i];
      p.v[i] += pe[i];
    }
  } else if (s.pe == AttentionPE::rope) {
    rope_apply(s.rope(), DType::f32, s.heads, positions.subspan(s.query_offset(positions.size())), p.q);
    rope_apply(s.rope(), DType::f32, s.kv_count(), positions, p.k);
  }
  return p;
}

}  // namespace

void attention(const AttentionSpec& s, DType dt, std::span<const std::int64_t> positions, std::span<const float> q,
               std::span<const float> k, std::span<const float> v, std::span<const float> pe_table,
               std::span<float> out) {
  const std::size_t n = positions.size(), nq = s.query_count(n), off = s.query_offset(n);
  Attention{s, dt, positions, q, k, v, pe_table, out}.check();
  const Prepared x = prepare_inputs(s, positions, q, k, v);
  const std::size_t H = static_cast<std::size_t>(s.heads), d = static_cast<std::size_t>(s.head_dim);
  const float scale = static_cast<float>(s.effective_scale());
  const std::int64_t K = s.shaw_max_distance;
  const t5::Buckets buckets = t5::buckets_of(s.t5());
  std::vector<float> logits(n), acc(d);
  const std::size_t KV = static_cast<std::size_t>(s.kv_count());
  auto at = [&](std::size_t t, std::size_t h) { return (t * H + h) * d; };
  auto kv_at = [&](std::size_t t, std::size_t g) { return (t * KV + g) * d; };
  for (std::size_t h = 0; h < H; ++h) {
    const std::size_t g = static_cast<std::size_t>(s.kv_head_of(static_cast<int>(h)));
    const double slope = s.pe == AttentionPE::alibi ? alibi::slope(static_cast<int>(h), s.heads) : 0.0;
    for (std::size_t i = 0; i < nq; ++i) {
      const std::size_t t = off + i;  // the query's token: the mask and the biases read its index
      const std::size_t keys = s.causal ? t + 1 : n;
      float m = -std::numeric_limits<float>::infinity();
      const std::size_t first = s.first_key(t);
      for (std::size_t j = first; j < keys; ++j) {
        float dot = 0;
        for (std::size_t c = 0; c < d; ++c) dot += x.q[at(i, h) + c] * x.k[kv_at(j, g) + c];
        if (s.pe == AttentionPE::shaw) {
          const auto r = static_cast<std::size_t>(std::clamp(positions[j] - positions[t], -K, K) + K) * d;
          for (std::size_t c = 0; c < d; ++c) dot += x.q[at(i, h) + c] * pe_table[r + c];
        }
        float l = scale * dot;
        if (s.pe == AttentionPE::alibi) {
          const double dist = static_cast<double>(positions[t] - positions[j]);
          l += static_cast<float>(-slope * (s.causal ? dist : std::fabs(dist)));
        }
        if (s.pe == AttentionPE::t5)
          l += pe_table[static_cast<std::size_t>(t5::bucket(positions[j] - positions[t], buckets)) * H + h];
        logits[j] = l;
        m = std::max(m, l);
      }
      float sum = 0;
      std::fill(acc.begin(), acc.end(), 0.0f);
      for (std::size_t j = first; j < keys; ++j) {
        const float w = std::exp(logits[j] - m);
        sum += w;
        for (std::size_t c = 0; c < d; ++c) acc[c] += w * x.v[kv_at(j, g) + c];
      }
      for (std::size_t c = 0; c < d; ++c) out[at(i, h) + c] = round_to(dt, acc[c] / sum);
    }
  }
}

}  // namespace pecheck::scalar
