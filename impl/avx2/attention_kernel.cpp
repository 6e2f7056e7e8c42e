// AVX2 attention forward in fp32: per head, blocks of 4 queries against blocks of 8 keys, with an
// online softmax (running max m, sum l, and accumulator rescaled by e^(m_old - m_new)), so no
// (n, n) matrix is ever formed. Masked keys are skipped, never multiplied by a zero weight: a NaN
// or infinity in a value a query cannot see must not reach it.
#include <cmath>
#include <limits>

#include "impl/avx2/simd.hpp"

namespace pecheck::avx2::detail {

namespace {

using simd::Io;

constexpr std::size_t Bq = kQueryBlock, Bk = kKeyBlock;

struct HeadView {
  const AttentionCall& c;
  std::size_t H, d, keys;  // keys: n rounded up to a multiple of Bk
  std::size_t h;
  const float* q(std::size_t i) const { return c.q + (i * H + h) * d; }
  const float* v(std::size_t j) const { return c.v + (j * H + h) * d; }
};

/// KT[col * keys + j] = k_j[col] for head h; columns past n are zero.
void transpose_keys(const HeadView& hv, float* KT) {
  for (std::size_t j = 0; j < hv.keys; ++j)
    for (std::size_t col = 0; col < hv.d; ++col)
      KT[col * hv.keys + j] = j < hv.c.n ? hv.c.k[(j * hv.H + hv.h) * hv.d + col] : 0.0f;
}

/// The logits of `rows` queries from i0 against keys kb..kb+7, scaled, biased and masked.
void block_logits(const HeadView& hv, const float* KT, const float* proj, std::size_t i0, std::size_t rows,
                  std::size_t kb, __m256* s) {
  const AttentionCall& c = hv.c;
  const float* qr[Bq];
  for (std::size_t r = 0; r < Bq; ++r) qr[r] = hv.q(i0 + (r < rows ? r : rows - 1));
  __m256 acc[Bq] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
  for (std::size_t col = 0; col < hv.d; ++col) {
    const __m256 kt = _mm256_loadu_ps(KT + col * hv.keys + kb);
    for (std::size_t r = 0; r < Bq; ++r) acc[r] = _mm256_fmadd_ps(_mm256_broadcast_ss(qr[r] + col), kt, acc[r]);
  }
  const __m256 scale = _mm256_set1_ps(c.scale);
  const float slope = c.bias == Bias::alibi ? static_cast<float>(c.slopes[hv.h]) : 0.0f;
  const std::int64_t K = c.max_distance;
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t i = i0 + r;
    alignas(32) float l[Bk];
    _mm256_store_ps(l, _mm256_mul_ps(scale, acc[r]));
    for (std::size_t u = 0; u < Bk; ++u) {
      const std::size_t j = kb + u;
      if (j >= c.n || (c.causal && j > i)) {
        l[u] = -std::numeric_limits<float>::infinity();
        continue;
      }
      const std::int64_t rel = c.positions[j] - c.positions[i];
      if (c.bias == Bias::shaw)
        l[u] += c.scale * proj[i * static_cast<std::size_t>(2 * K + 1) +
                               static_cast<std::size_t>((rel < -K ? -K : (rel > K ? K : rel)) + K)];
      if (c.bias == Bias::alibi) l[u] += -slope * static_cast<float>(c.causal ? -rel : (rel < 0 ? -rel : rel));
    }
    s[r] = _mm256_load_ps(l);
  }
}

struct RowState {
  float m = -std::numeric_limits<float>::infinity();
  float l = 0;
};

/// Folds one block of (at most Bk) logits into a row: rescale, add the weighted values.
void fold(const HeadView& hv, std::size_t i, std::size_t kb, __m256 s, RowState& st, float* acc) {
  const std::size_t limit = hv.c.causal ? (i + 1 < hv.c.n ? i + 1 : hv.c.n) : hv.c.n;
  if (kb >= limit) return;  // every key of the block is masked for this row
  const std::size_t last = kb + Bk < limit ? kb + Bk : limit;
  const float m_new = std::fmax(st.m, simd::hmax(s));
  const float alpha = st.m == -std::numeric_limits<float>::infinity() ? 0.0f : std::exp(st.m - m_new);
  alignas(32) float p[Bk];
  _mm256_store_ps(p, simd::exp8(_mm256_sub_ps(s, _mm256_set1_ps(m_new))));
  float block_sum = 0;
  for (std::size_t j = kb; j < last; ++j) block_sum += p[j - kb];
  st.l = alpha * st.l + block_sum;
  st.m = m_new;
  const __m256 a = _mm256_set1_ps(alpha);
  std::size_t col = 0;
  for (; col + 8 <= hv.d; col += 8) {
    __m256 o = _mm256_mul_ps(_mm256_loadu_ps(acc + col), a);
    for (std::size_t j = kb; j < last; ++j)
      o = _mm256_fmadd_ps(_mm256_set1_ps(p[j - kb]), _mm256_loadu_ps(hv.v(j) + col), o);
    _mm256_storeu_ps(acc + col, o);
  }
  for (; col < hv.d; ++col) {
    float o = acc[col] * alpha;
    for (std::size_t j = kb; j < last; ++j) o = std::fma(p[j - kb], hv.v(j)[col], o);
    acc[col] = o;
  }
}

template <Storage S>
void attention_impl(const AttentionCall& c) {
  const std::size_t H = static_cast<std::size_t>(c.heads), d = static_cast<std::size_t>(c.head_dim);
  const std::size_t keys = (c.n + Bk - 1) / Bk * Bk, R = 2 * static_cast<std::size_t>(c.max_distance) + 1;
  float* KT = c.scratch;
  float* proj = KT + d * keys;
  float* acc = proj + c.n * R;
  auto* out = static_cast<typename Io<S>::T*>(c.out);
  for (std::size_t h = 0; h < H; ++h) {
    const HeadView hv{c, H, d, keys, h};
    transpose_keys(hv, KT);
    if (c.bias == Bias::shaw)  // q_i . r_t once per (query, distance), looked up per key
      for (std::size_t i = 0; i < c.n; ++i)
        for (std::size_t t = 0; t < R; ++t) {
          float sum = 0;
          for (std::size_t col = 0; col < d; ++col) sum = std::fma(hv.q(i)[col], c.shaw_table[t * d + col], sum);
          proj[i * R + t] = sum;
        }
    for (std::size_t i0 = 0; i0 < c.n; i0 += Bq) {
      const std::size_t rows = c.n - i0 < Bq ? c.n - i0 : Bq;
      RowState st[Bq];
      for (std::size_t x = 0; x < Bq * d; ++x) acc[x] = 0;
      const std::size_t kend = c.causal ? i0 + rows : c.n;
      for (std::size_t kb = 0; kb < kend; kb += Bk) {
        __m256 s[Bq];
        block_logits(hv, KT, proj, i0, rows, kb, s);
        for (std::size_t r = 0; r < rows; ++r) fold(hv, i0 + r, kb, s[r], st[r], acc + r * d);
      }
      for (std::size_t r = 0; r < rows; ++r) {
        auto* o = out + ((i0 + r) * H + h) * d;
        const __m256 l = _mm256_set1_ps(st[r].l);
        std::size_t col = 0;
        for (; col + 8 <= d; col += 8) Io<S>::store8(o + col, _mm256_div_ps(_mm256_loadu_ps(acc + r * d + col), l));
        for (; col < d; ++col) Io<S>::put(o + col, acc[r * d + col] / st[r].l);
      }
    }
  }
}

}  // namespace

void attention(Storage s, const AttentionCall& c) { PECHECK_AVX2_DISPATCH(s, attention_impl, c) }

}  // namespace pecheck::avx2::detail
