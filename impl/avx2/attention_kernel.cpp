// AVX2 attention forward in fp32 (grouped-query: a group of query heads shares one K/V head, whose
// transposed K and V are laid out once per group): per head, blocks of 8 queries against blocks of 64 keys, with an
// online softmax (running max m, sum l, and accumulator rescaled by e^(m_old - m_new) once per
// block), so no (n, n) matrix is ever formed. Q K^T runs 8 query rows against 8 keys of the
// transposed K per step (8 accumulators, one K load per 8 FMAs); P V keeps 32 output columns in
// registers per key. Masked keys are skipped, never multiplied by a zero weight: a NaN or
// infinity in a value a query cannot see must not reach it.
#include <cmath>
#include <limits>

#include "impl/avx2/simd.hpp"

namespace pecheck::avx2::detail {

namespace {

using simd::Io;

constexpr std::size_t Bq = kQueryBlock, Bk = kKeyBlock;
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

struct Head {
  const AttentionCall& c;
  std::size_t H, d, keys;  // keys: KT's row stride (see kt_stride)
  std::size_t h;
  std::size_t KV, g;  // K/V heads, and the one query head h reads
  std::size_t off;    // query row i is token off + i (n - queries: bottom-right)
  const float* q(std::size_t i) const { return c.q + (i * H + h) * d; }
  const float* k(std::size_t j) const { return c.k + (j * KV + g) * d; }
  const float* v(std::size_t j) const { return c.v + (j * KV + g) * d; }
  /// Keys query row i may see: [first(i), limit(i)).
  std::size_t limit(std::size_t i) const { return c.causal && off + i + 1 < c.n ? off + i + 1 : c.n; }
  std::size_t first(std::size_t i) const {
    const auto w = static_cast<std::size_t>(c.window), t = off + i;
    return w > 0 && t + 1 > w ? t + 1 - w : 0;
  }
  std::int64_t position(std::size_t i) const { return c.positions[off + i]; }
};

/// KT[col * keys + j] = k_j[col] for the head; columns past n are zero.
void transpose_keys(const Head& hd, float* KT) {
  for (std::size_t j = 0; j < hd.keys; ++j)  // (the stride's pad columns included: zero too)
    for (std::size_t col = 0; col < hd.d; ++col) KT[col * hd.keys + j] = j < hd.c.n ? hd.k(j)[col] : 0.0f;
}

/// L[r * Bk + u] = scale q_(i0+r) . k_(kb+u) for the block, then the bias and the mask (-inf).
void block_logits(const Head& hd, const float* KT, const float* proj, std::size_t i0, std::size_t rows, std::size_t kb,
                  float* L) {
  const AttentionCall& c = hd.c;
  const float* qr[Bq];
  for (std::size_t r = 0; r < Bq; ++r) qr[r] = hd.q(i0 + (r < rows ? r : rows - 1));
  const std::size_t visible = hd.limit(i0 + rows - 1);  // the widest row's limit
  const __m256 scale = _mm256_set1_ps(c.scale);
  for (std::size_t kc = 0; kc < Bk; kc += 8) {
    // Masked for every row of the block (past the widest row's limit, or before the first row's
    // window): skip the dot products.
    if (kb + kc >= visible || kb + kc + 8 <= hd.first(i0)) {
      for (std::size_t r = 0; r < Bq; ++r) _mm256_storeu_ps(L + r * Bk + kc, _mm256_set1_ps(kNegInf));
      continue;
    }
    // Fixed-trip loops fully unrolled, so the accumulators live in registers (GCC's -O2 keeps
    // the arrays on the stack otherwise: a load and a store around every FMA).
    __m256 acc[Bq];
#pragma GCC unroll 8
    for (std::size_t r = 0; r < Bq; ++r) acc[r] = _mm256_setzero_ps();
    const float* kt = KT + kb + kc;
    for (std::size_t col = 0; col < hd.d; ++col) {
      const __m256 k8 = _mm256_loadu_ps(kt + col * hd.keys);
#pragma GCC unroll 8
      for (std::size_t r = 0; r < Bq; ++r) acc[r] = _mm256_fmadd_ps(_mm256_broadcast_ss(qr[r] + col), k8, acc[r]);
    }
#pragma GCC unroll 8
    for (std::size_t r = 0; r < Bq; ++r) _mm256_storeu_ps(L + r * Bk + kc, _mm256_mul_ps(scale, acc[r]));
  }
  // Every key of the block visible to every row (the last row's window starts latest).
  const bool whole = kb + Bk <= hd.limit(i0) && kb >= hd.first(i0 + rows - 1);
  if (whole && c.bias == Bias::none) return;
  const std::int64_t K = c.max_distance;
  const float slope = c.bias == Bias::alibi ? static_cast<float>(c.slopes[hd.h]) : 0.0f;
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t i = i0 + r, last = hd.limit(i), first = hd.first(i);
    for (std::size_t u = 0; u < Bk; ++u) {
      const std::size_t j = kb + u;
      float& l = L[r * Bk + u];
      if (j >= last || j < first) {
        l = kNegInf;
        continue;
      }
      const std::int64_t rel = c.positions[j] - hd.position(i);
      if (c.bias == Bias::shaw)
        l += c.scale * proj[i * static_cast<std::size_t>(2 * K + 1) +
                            static_cast<std::size_t>((rel < -K ? -K : (rel > K ? K : rel)) + K)];
      if (c.bias == Bias::alibi) l += -slope * static_cast<float>(c.causal ? -rel : (rel < 0 ? -rel : rel));
    }
  }
}

struct RowState {
  float m = kNegInf;
  float l = 0;
};

/// Softmax step of one query for one block: its weights p[0..Bk) (0 where masked) and the factor
/// e^(m_old - m_new) its accumulator must be rescaled by; the keys it sees are [begin, returned).
std::size_t weights(const Head& hd, std::size_t i, std::size_t kb, const float* L, float* p, RowState& st, float& alpha,
                    std::size_t& begin) {
  alpha = 1;
  begin = 0;
  const std::size_t last = hd.limit(i) < kb + Bk ? hd.limit(i) : kb + Bk;
  if (last <= kb || hd.first(i) >= last) {  // every key of the block is masked for this query
    for (std::size_t u = 0; u < Bk; u += 8) _mm256_storeu_ps(p + u, _mm256_setzero_ps());
    return 0;
  }
  __m256 mx = _mm256_loadu_ps(L);
  for (std::size_t u = 8; u < Bk; u += 8) mx = _mm256_max_ps(mx, _mm256_loadu_ps(L + u));
  const float m_new = std::fmax(st.m, simd::hmax(mx));
  // Only -inf logits so far: no weight yet (a masked lane's logit is -inf, its weight 0).
  const __m256 shift = _mm256_set1_ps(m_new == kNegInf ? 0.0f : m_new);
  alpha = st.m == kNegInf ? 0.0f : std::exp(st.m - m_new);
  __m256 sum = _mm256_setzero_ps();
  for (std::size_t u = 0; u < Bk; u += 8) {
    const __m256 e = simd::exp8(_mm256_sub_ps(_mm256_loadu_ps(L + u), shift));
    _mm256_storeu_ps(p + u, e);
    sum = _mm256_add_ps(sum, e);
  }
  st.l = alpha * st.l + simd::hsum(sum);
  st.m = m_new;
  begin = hd.first(i) > kb ? hd.first(i) - kb : 0;
  return last - kb;
}

/// acc[r] = acc[r] alpha[r] + sum_u p[r][u] v_(kb+u) for the block's 8 queries: keys [from, common)
/// (seen by every query) with all 8 accumulators of one 8-column chunk in registers, so each V
/// load serves 8 queries; then each query's own remaining keys (causal diagonal blocks, window
/// edges): row r sees [begin[r], count[r]).
void accumulate(const Head& hd, const float* V, std::size_t kb, const float* P, const float* alpha,
                const std::size_t* begin, const std::size_t* count, std::size_t rows, float* acc) {
  const std::size_t d = hd.d;
  std::size_t from = 0, common = Bk;
  for (std::size_t r = 0; r < rows; ++r) {
    common = count[r] < common ? count[r] : common;
    from = begin[r] > from ? begin[r] : from;
  }
  if (common < from) common = from;  // no key every row sees: all of it per row below
  for (std::size_t r = 0; r < Bq; ++r)
    for (std::size_t col = 0; col < d; ++col) acc[r * d + col] *= alpha[r];
  std::size_t col = 0;
  for (; col + 8 <= d; col += 8) {
    __m256 o[Bq];
#pragma GCC unroll 8
    for (std::size_t r = 0; r < Bq; ++r) o[r] = _mm256_loadu_ps(acc + r * d + col);
    for (std::size_t u = from; u < common; ++u) {
      const __m256 v8 = _mm256_loadu_ps(V + (kb + u) * d + col);
#pragma GCC unroll 8
      for (std::size_t r = 0; r < Bq; ++r) o[r] = _mm256_fmadd_ps(_mm256_broadcast_ss(P + r * Bk + u), v8, o[r]);
    }
#pragma GCC unroll 8
    for (std::size_t r = 0; r < Bq; ++r) _mm256_storeu_ps(acc + r * d + col, o[r]);
  }
  for (std::size_t r = 0; r < Bq; ++r)  // odd widths: the last columns one at a time
    for (std::size_t c = col; c < d; ++c)
      for (std::size_t u = from; u < common; ++u)
        acc[r * d + c] = std::fma(P[r * Bk + u], V[(kb + u) * d + c], acc[r * d + c]);
  for (std::size_t r = 0; r < rows; ++r) {  // keys only some queries see: never weigh a masked one
    const auto mine = [&](std::size_t u0, std::size_t u1) {
      for (std::size_t u = u0; u < u1; ++u)
        for (std::size_t c = 0; c < d; ++c)
          acc[r * d + c] = std::fma(P[r * Bk + u], V[(kb + u) * d + c], acc[r * d + c]);
    };
    mine(begin[r], from < count[r] ? from : count[r]);
    mine(common > begin[r] ? common : begin[r], count[r]);
  }
}

template <Storage S>
void attention_impl(const AttentionCall& c) {
  const std::size_t H = static_cast<std::size_t>(c.heads), d = static_cast<std::size_t>(c.head_dim);
  const std::size_t keys = kt_stride(c.n), R = 2 * static_cast<std::size_t>(c.max_distance) + 1;
  float* KT = c.scratch;
  float* V = KT + d * keys;
  float* proj = V + d * c.n;
  float* acc = proj + c.n * R;
  float* L = acc + Bq * d;
  float* P = L + Bq * Bk;
  auto* out = static_cast<typename Io<S>::T*>(c.out);
  const std::size_t KV = c.kv_heads > 0 ? static_cast<std::size_t>(c.kv_heads) : H, group = H / KV;
  const std::size_t nq = c.queries > 0 ? c.queries : c.n;
  for (std::size_t h = 0; h < H; ++h) {
    const Head hd{c, H, d, keys, h, KV, h / group, c.n - nq};
    if (h % group == 0) {  // a group's query heads share its K and V: transposed once per group
      transpose_keys(hd, KT);
      for (std::size_t j = 0; j < c.n; ++j)  // this K/V head's values, contiguous
        for (std::size_t col = 0; col < d; ++col) V[j * d + col] = hd.v(j)[col];
    }
    if (c.bias == Bias::shaw)  // q_i . r_t once per (query, distance), looked up per key
      for (std::size_t i = 0; i < nq; ++i)
        for (std::size_t t = 0; t < R; ++t) {
          float sum = 0;
          for (std::size_t col = 0; col < d; ++col) sum = std::fma(hd.q(i)[col], c.shaw_table[t * d + col], sum);
          proj[i * R + t] = sum;
        }
    for (std::size_t i0 = 0; i0 < nq; i0 += Bq) {
      const std::size_t rows = nq - i0 < Bq ? nq - i0 : Bq;
      RowState st[Bq];
      for (std::size_t x = 0; x < Bq * d; ++x) acc[x] = 0;
      const std::size_t kend = hd.limit(i0 + rows - 1);
      // Blocks before the first row's window are masked for every row.
      for (std::size_t kb = hd.first(i0) / Bk * Bk; kb < kend; kb += Bk) {
        block_logits(hd, KT, proj, i0, rows, kb, L);
        float alpha[Bq];
        std::size_t begin[Bq], count[Bq];
        for (std::size_t r = 0; r < Bq; ++r) {
          if (r < rows) {
            count[r] = weights(hd, i0 + r, kb, L + r * Bk, P + r * Bk, st[r], alpha[r], begin[r]);
            continue;
          }
          begin[r] = count[r] = 0;  // padding rows: zero weights, never stored
          alpha[r] = 0;
          for (std::size_t u = 0; u < Bk; ++u) P[r * Bk + u] = 0;
        }
        accumulate(hd, V, kb, P, alpha, begin, count, rows, acc);
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
