// AVX2 score biases: ALiBi (four lanes of exact double distances), Shaw relative scores (fp32
// dot products, the relative term as a lookup of q_i . r_t), T5 buckets (vector compares against
// precomputed bucket boundaries, then a gather of the bias table).
#include <limits>

#include "impl/avx2/simd.hpp"

namespace pecheck::avx2::detail {

namespace {

using isa::Io;

template <Storage S>
using Elem = typename Io<S>::T;

/// int64 lanes below 2^51 in magnitude -> double, exactly (the 1.5 * 2^52 bias trick).
inline __m256d to_double(__m256i v) {
  const __m256i biased = _mm256_add_epi64(v, _mm256_castpd_si256(_mm256_set1_pd(0x1.8p52)));
  return _mm256_sub_pd(_mm256_castsi256_pd(biased), _mm256_set1_pd(0x1.8p52));
}

template <Storage S>
void alibi_impl(const double* slopes, int heads, bool causal, const std::int64_t* positions, std::size_t n, void* out) {
  const __m256d abs_mask = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffff));
  const __m256d neg_inf = _mm256_set1_pd(-std::numeric_limits<double>::infinity());
  for (int h = 0; h < heads; ++h) {
    const __m256d m = _mm256_set1_pd(-slopes[h]);
    for (std::size_t i = 0; i < n; ++i) {
      Elem<S>* row = static_cast<Elem<S>*>(out) + (static_cast<std::size_t>(h) * n + i) * n;
      const __m256i pi = _mm256_set1_epi64x(positions[i]);
      const __m256i ii = _mm256_set1_epi64x(static_cast<long long>(i));
      std::size_t j = 0;
      for (; j + 4 <= n; j += 4) {
        const __m256i pj = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(positions + j));
        __m256d dist = to_double(_mm256_sub_epi64(pi, pj));
        if (!causal) dist = _mm256_and_pd(dist, abs_mask);
        __m256d b = _mm256_mul_pd(m, dist);
        if (causal) {  // key j > query i is masked
          const __m256i jj =
              _mm256_add_epi64(_mm256_set1_epi64x(static_cast<long long>(j)), _mm256_setr_epi64x(0, 1, 2, 3));
          b = _mm256_blendv_pd(b, neg_inf, _mm256_castsi256_pd(_mm256_cmpgt_epi64(jj, ii)));
        }
        Io<S>::store4(row + j, _mm256_cvtpd_ps(b));
      }
      for (; j < n; ++j) {
        const double dist = static_cast<double>(positions[i] - positions[j]);
        const double b = causal ? (j > i ? -std::numeric_limits<double>::infinity() : -slopes[h] * dist)
                                : -slopes[h] * (dist < 0 ? -dist : dist);
        Io<S>::put(row + j, static_cast<float>(b));
      }
    }
  }
}

/// sum_c a[c] b[c] in fp32, eight lanes then a horizontal sum.
template <Storage S>
inline float dot(const Elem<S>* a, const Elem<S>* b, std::size_t d) {
  __m256 acc = _mm256_setzero_ps();
  std::size_t c = 0;
  for (; c + 8 <= d; c += 8) acc = _mm256_fmadd_ps(Io<S>::load(a + c), Io<S>::load(b + c), acc);
  if (c < d) acc = _mm256_fmadd_ps(isa::load_partial<S>(a + c, d - c), isa::load_partial<S>(b + c, d - c), acc);
  return isa::hsum(acc);
}

template <Storage S>
void shaw_impl(const ShawCall& c) {
  const auto* q = static_cast<const Elem<S>*>(c.q);
  const auto* k = static_cast<const Elem<S>*>(c.k);
  const auto* table = static_cast<const Elem<S>*>(c.table);
  auto* out = static_cast<Elem<S>*>(c.out);
  const std::size_t d = static_cast<std::size_t>(c.head_dim);
  const std::int64_t K = c.max_distance;
  for (std::size_t i = 0; i < c.n; ++i) {
    for (std::int64_t t = 0; t <= 2 * K; ++t)
      c.scratch[t] = dot<S>(q + i * d, table + static_cast<std::size_t>(t) * d, d);
    for (std::size_t j = 0; j < c.n; ++j) {
      std::int64_t rel = c.positions[j] - c.positions[i];
      rel = rel < -K ? -K : (rel > K ? K : rel);
      Io<S>::put(out + i * c.n + j, dot<S>(q + i * d, k + j * d, d) + c.scratch[rel + K]);
    }
  }
}

template <Storage S>
void t5_impl(const T5Call& c) {
  const auto* table = static_cast<const Elem<S>*>(c.table);
  auto* out = static_cast<Elem<S>*>(c.out);
  const std::size_t H = static_cast<std::size_t>(c.heads);
  const __m256i max_exact = _mm256_set1_epi64x(c.max_exact), zero = _mm256_setzero_si256();
  for (std::size_t i = 0; i < c.n; ++i) {
    const __m256i pi = _mm256_set1_epi64x(c.positions[i]);
    std::size_t j = 0;
    for (; j + 4 <= c.n; j += 4) {
      const __m256i rel = _mm256_sub_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(c.positions + j)), pi);
      const __m256i neg = _mm256_sub_epi64(zero, rel);
      __m256i offset = zero, dist;
      if (c.bidirectional) {  // keys after the query take the upper half of the buckets
        const __m256i after = _mm256_cmpgt_epi64(rel, zero);
        offset = _mm256_and_si256(after, _mm256_set1_epi64x(c.half));
        dist = _mm256_blendv_epi8(neg, rel, after);
      } else {
        dist = _mm256_andnot_si256(_mm256_cmpgt_epi64(zero, neg), neg);  // max(-rel, 0)
      }
      __m256i log_bucket = max_exact;
      for (int b = 0; b < c.boundary_count; ++b)  // a true compare is all ones (-1): subtract it
        log_bucket = _mm256_sub_epi64(log_bucket, _mm256_cmpgt_epi64(dist, _mm256_set1_epi64x(c.boundaries[b] - 1)));
      const __m256i bucket = _mm256_blendv_epi8(log_bucket, dist, _mm256_cmpgt_epi64(max_exact, dist));
      alignas(32) std::int64_t lanes[4];
      _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), _mm256_add_epi64(bucket, offset));
      for (int l = 0; l < 4; ++l) c.scratch[j + static_cast<std::size_t>(l)] = static_cast<std::int32_t>(lanes[l]);
    }
    for (; j < c.n; ++j) {
      const std::int64_t rel = c.positions[j] - c.positions[i];
      const std::int64_t offset = c.bidirectional && rel > 0 ? c.half : 0;
      const std::int64_t dist = c.bidirectional ? (rel < 0 ? -rel : rel) : (rel < 0 ? -rel : 0);
      std::int64_t bucket = dist;
      if (dist >= c.max_exact) {
        bucket = c.max_exact;
        for (int b = 0; b < c.boundary_count; ++b) bucket += dist >= c.boundaries[b];
      }
      c.scratch[j] = static_cast<std::int32_t>(bucket + offset);
    }
    for (std::size_t h = 0; h < H; ++h) {  // a gather: the table's values are copied bit for bit
      Elem<S>* row = out + (h * c.n + i) * c.n;
      for (std::size_t jj = 0; jj < c.n; ++jj) row[jj] = table[static_cast<std::size_t>(c.scratch[jj]) * H + h];
    }
  }
}

}  // namespace

void alibi(Storage s, const double* slopes, int heads, bool causal, const std::int64_t* positions, std::size_t n,
           void* out) {
  PECHECK_AVX2_DISPATCH(s, alibi_impl, slopes, heads, causal, positions, n, out)
}
void shaw(Storage s, const ShawCall& c) { PECHECK_AVX2_DISPATCH(s, shaw_impl, c) }
void t5(Storage s, const T5Call& c) { PECHECK_AVX2_DISPATCH(s, t5_impl, c) }

}  // namespace pecheck::avx2::detail
