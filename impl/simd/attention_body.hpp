// The blocked attention forward, written once over a width trait V (impl/avx2/simd.hpp's Avx2:
// V::R holds V::W = 8 floats; impl/avx512/simd.hpp's Avx512: 16) and included by each width's
// attention unit (impl/avx2/attention_kernel.cpp, impl/avx512/attention_kernel.cpp), which
// supplies V and its own compile flags. Everything here is in an unnamed namespace, so each unit has its own
// copy, built for its own ISA (a shared inline copy could run AVX-512 code on an AVX2-only CPU).
//
// Per head, blocks of 8 queries against blocks of 64 keys, with an online softmax (running max m,
// sum l, and accumulator rescaled by e^(m_old - m_new) once per block), so no (n, n) matrix is
// ever formed; a group of query heads shares one K/V head, whose transposed K and V are laid out
// once per group. Q K^T runs 8 query rows against W keys of the transposed K per step (8
// accumulators, one K load per 8 FMAs); P V keeps 8 queries' W output columns in registers per
// key. Masked keys are skipped, never multiplied by a zero weight: a NaN or infinity in a value a
// query cannot see must not reach it. Each logit and each output column sums its terms in the
// same order whatever W is.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "impl/simd/calls.hpp"
#include "impl/simd/math.hpp"

namespace pecheck::simd {

namespace {

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

/// KT[col * keys + j] = k_j[col] for the head; columns past n are zero. By tiles of 16 keys: the
/// 16 rows read stay in L1 while each KT row gets 16 consecutive floats (a key at a time wrote
/// every float to a different cache line).
void transpose_keys(const Head& hd, float* KT) {
  constexpr std::size_t kTile = 16;
  for (std::size_t j0 = 0; j0 < hd.keys; j0 += kTile) {  // (the stride's pad columns included: zero too)
    const std::size_t j1 = j0 + kTile < hd.keys ? j0 + kTile : hd.keys;
    for (std::size_t col = 0; col < hd.d; ++col)
      for (std::size_t j = j0; j < j1; ++j) KT[col * hd.keys + j] = j < hd.c.n ? hd.k(j)[col] : 0.0f;
  }
}

/// L[r * Bk + u] = scale q_(i0+r) . k_(kb+u) for the block, then the bias and the mask (-inf).
template <class V>
void block_logits(const Head& hd, const float* KT, const float* proj, std::size_t i0, std::size_t rows, std::size_t kb,
                  float* L) {
  const AttentionCall& c = hd.c;
  const float* qr[Bq];
  for (std::size_t r = 0; r < Bq; ++r) qr[r] = hd.q(i0 + (r < rows ? r : rows - 1));
  const std::size_t visible = hd.limit(i0 + rows - 1);  // the widest row's limit
  const typename V::R scale = V::set1(c.scale);
  // V::kChains chunks of W keys per step: 8 x kChains independent accumulator chains, enough to
  // cover the FMA latency (8 are just enough at two FMAs a cycle of latency 4: any stall shows).
  constexpr std::size_t C = V::kChains, step = V::W * C;
  for (std::size_t kc = 0; kc < Bk; kc += step) {
    // Masked for every row of the block (past the widest row's limit, or before the first row's
    // window): skip the dot products. (A chunk of the step masked for every row is computed and
    // then masked below: the block is not whole then.)
    if (kb + kc >= visible || kb + kc + step <= hd.first(i0)) {
      for (std::size_t r = 0; r < Bq; ++r)
        for (std::size_t x = 0; x < C; ++x) V::store(L + r * Bk + kc + x * V::W, V::set1(kNegInf));
      continue;
    }
    // Fixed-trip loops fully unrolled, so the accumulators live in registers (GCC's -O2 keeps
    // the arrays on the stack otherwise: a load and a store around every FMA).
    typename V::R acc[Bq][C];
#pragma GCC unroll 8
    for (std::size_t r = 0; r < Bq; ++r)
#pragma GCC unroll 2
      for (std::size_t x = 0; x < C; ++x) acc[r][x] = V::zero();
    const float* kt = KT + kb + kc;
    for (std::size_t col = 0; col < hd.d; ++col) {
      typename V::R kw[C];
#pragma GCC unroll 2
      for (std::size_t x = 0; x < C; ++x) kw[x] = V::load(kt + col * hd.keys + x * V::W);
#pragma GCC unroll 8
      for (std::size_t r = 0; r < Bq; ++r) {
        const typename V::R qv = V::broadcast(qr[r] + col);
#pragma GCC unroll 2
        for (std::size_t x = 0; x < C; ++x) acc[r][x] = V::fmadd(qv, kw[x], acc[r][x]);
      }
    }
#pragma GCC unroll 8
    for (std::size_t r = 0; r < Bq; ++r)
#pragma GCC unroll 2
      for (std::size_t x = 0; x < C; ++x) V::store(L + r * Bk + kc + x * V::W, V::mul(scale, acc[r][x]));
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
      if (c.bias == Bias::t5)
        l += c.pe_table[static_cast<std::size_t>(t5::bucket(rel, c.buckets)) * static_cast<std::size_t>(c.heads) +
                        static_cast<std::size_t>(hd.h)];
    }
  }
}

struct RowState {
  float m = kNegInf;
  float l = 0;
};

/// Softmax step of one query for one block: its weights p[0..Bk) (0 where masked) and the factor
/// e^(m_old - m_new) its accumulator must be rescaled by; the keys it sees are [begin, returned).
template <class V>
std::size_t weights(const Head& hd, std::size_t i, std::size_t kb, const float* L, float* p, RowState& st, float& alpha,
                    std::size_t& begin) {
  alpha = 1;
  begin = 0;
  const std::size_t last = hd.limit(i) < kb + Bk ? hd.limit(i) : kb + Bk;
  if (last <= kb || hd.first(i) >= last) {  // every key of the block is masked for this query
    for (std::size_t u = 0; u < Bk; u += V::W) V::store(p + u, V::zero());
    return 0;
  }
  typename V::R mx = V::load(L);
  for (std::size_t u = V::W; u < Bk; u += V::W) mx = V::max(mx, V::load(L + u));
  const float m_new = std::fmax(st.m, V::hmax(mx));
  // Only -inf logits so far: no weight yet (a masked lane's logit is -inf, its weight 0).
  const typename V::R shift = V::set1(m_new == kNegInf ? 0.0f : m_new);
  alpha = st.m == kNegInf ? 0.0f : std::exp(st.m - m_new);
  typename V::R sum = V::zero();
  for (std::size_t u = 0; u < Bk; u += V::W) {
    const typename V::R e = exp<V>(V::sub(V::load(L + u), shift));
    V::store(p + u, e);
    sum = V::add(sum, e);
  }
  st.l = alpha * st.l + V::hsum(sum);
  st.m = m_new;
  begin = hd.first(i) > kb ? hd.first(i) - kb : 0;
  return last - kb;
}

/// acc[r][col..] += sum_u p[r][u] v_(kb+u)[col..] over keys [from, common), C chunks of W columns
/// at a time from `col` while they fit (8 x C accumulators in registers, each V load serving 8
/// queries); returns the first column left.
template <class V, std::size_t C>
std::size_t pv_columns(const float* Vt, std::size_t kb, const float* P, std::size_t from, std::size_t common,
                       std::size_t d, std::size_t col, float* acc) {
  for (; col + V::W * C <= d; col += V::W * C) {
    typename V::R o[Bq][C];
#pragma GCC unroll 8
    for (std::size_t r = 0; r < Bq; ++r)
#pragma GCC unroll 2
      for (std::size_t x = 0; x < C; ++x) o[r][x] = V::load(acc + r * d + col + x * V::W);
    for (std::size_t u = from; u < common; ++u) {
      typename V::R vw[C];
#pragma GCC unroll 2
      for (std::size_t x = 0; x < C; ++x) vw[x] = V::load(Vt + (kb + u) * d + col + x * V::W);
#pragma GCC unroll 8
      for (std::size_t r = 0; r < Bq; ++r) {
        const typename V::R p = V::broadcast(P + r * Bk + u);
#pragma GCC unroll 2
        for (std::size_t x = 0; x < C; ++x) o[r][x] = V::fmadd(p, vw[x], o[r][x]);
      }
    }
#pragma GCC unroll 8
    for (std::size_t r = 0; r < Bq; ++r)
#pragma GCC unroll 2
      for (std::size_t x = 0; x < C; ++x) V::store(acc + r * d + col + x * V::W, o[r][x]);
  }
  return col;
}

/// acc[r] = acc[r] alpha[r] + sum_u p[r][u] v_(kb+u) for the block's 8 queries: keys [from, common)
/// (seen by every query) with all 8 accumulators of one 8-column chunk in registers, so each V
/// load serves 8 queries; then each query's own remaining keys (causal diagonal blocks, window
/// edges): row r sees [begin[r], count[r]).
template <class V>
void accumulate(const Head& hd, const float* Vt, std::size_t kb, const float* P, const float* alpha,
                const std::size_t* begin, const std::size_t* count, std::size_t rows, float* acc) {
  const std::size_t d = hd.d;
  std::size_t from = 0, common = Bk;
  for (std::size_t r = 0; r < rows; ++r) {
    common = count[r] < common ? count[r] : common;
    from = begin[r] > from ? begin[r] : from;
  }
  if (common < from) common = from;       // no key every row sees: all of it per row below
  for (std::size_t r = 0; r < Bq; ++r) {  // rescale: a vector loop (GCC's -O2 leaves this one scalar)
    const typename V::R a = V::set1(alpha[r]);
    std::size_t col = 0;
    for (; col + V::W <= d; col += V::W) V::store(acc + r * d + col, V::mul(V::load(acc + r * d + col), a));
    for (; col < d; ++col) acc[r * d + col] *= alpha[r];
  }
  std::size_t col = pv_columns<V, V::kChains>(Vt, kb, P, from, common, d, 0, acc);
  col = pv_columns<V, 1>(Vt, kb, P, from, common, d, col, acc);
  for (std::size_t r = 0; r < Bq; ++r)  // odd widths: the last columns one at a time
    for (std::size_t c = col; c < d; ++c)
      for (std::size_t u = from; u < common; ++u)
        acc[r * d + c] = std::fma(P[r * Bk + u], Vt[(kb + u) * d + c], acc[r * d + c]);
  for (std::size_t r = 0; r < rows; ++r) {  // keys only some queries see: never weigh a masked one
    const auto mine = [&](std::size_t u0, std::size_t u1) {
      for (std::size_t u = u0; u < u1; ++u)
        for (std::size_t c = 0; c < d; ++c)
          acc[r * d + c] = std::fma(P[r * Bk + u], Vt[(kb + u) * d + c], acc[r * d + c]);
    };
    mine(begin[r], from < count[r] ? from : count[r]);
    mine(common > begin[r] ? common : begin[r], count[r]);
  }
}

template <class V, Storage S>
void attention(const AttentionCall& c) {
  const std::size_t H = static_cast<std::size_t>(c.heads), d = static_cast<std::size_t>(c.head_dim);
  const std::size_t keys = kt_stride(c.n), R = 2 * static_cast<std::size_t>(c.max_distance) + 1;
  // Each array starts on a 64-byte boundary (attention_scratch_floats counts the padding), so no
  // 512-bit load of K, V, the accumulators, logits or weights straddles two cache lines.
  const auto aligned = [](float* p) {
    return p + (64 - reinterpret_cast<std::uintptr_t>(p) % 64) % 64 / sizeof(float);
  };
  float* KT = aligned(c.scratch);
  float* Vt = KT + d * keys;
  float* proj = Vt + d * c.n;
  float* acc = aligned(proj + c.n * R);
  float* L = aligned(acc + Bq * d);
  float* P = L + Bq * Bk;
  auto* out = static_cast<typename V::template Elem<S>*>(c.out);
  const std::size_t KV = c.kv_heads > 0 ? static_cast<std::size_t>(c.kv_heads) : H, group = H / KV;
  const std::size_t nq = c.queries > 0 ? c.queries : c.n;
  const std::size_t first_head = c.head_begin, end_head = c.head_end > 0 ? c.head_end : H;
  for (std::size_t h = first_head; h < end_head; ++h) {
    const Head hd{c, H, d, keys, h, KV, h / group, c.n - nq};
    // A group's query heads share its K and V: transposed once per group (and for a range that
    // starts inside one).
    if (h % group == 0 || h == first_head) {
      transpose_keys(hd, KT);
      for (std::size_t j = 0; j < c.n; ++j)  // this K/V head's values, contiguous
        for (std::size_t col = 0; col < d; ++col) Vt[j * d + col] = hd.v(j)[col];
    }
    if (c.bias == Bias::shaw)  // q_i . r_t once per (query, distance), looked up per key
      for (std::size_t i = 0; i < nq; ++i)
        for (std::size_t t = 0; t < R; ++t) {
          float sum = 0;
          for (std::size_t col = 0; col < d; ++col) sum = std::fma(hd.q(i)[col], c.pe_table[t * d + col], sum);
          proj[i * R + t] = sum;
        }
    for (std::size_t i0 = 0; i0 < nq; i0 += Bq) {
      const std::size_t rows = nq - i0 < Bq ? nq - i0 : Bq;
      RowState st[Bq];
      for (std::size_t x = 0; x < Bq * d; ++x) acc[x] = 0;
      const std::size_t kend = hd.limit(i0 + rows - 1);
      // Blocks before the first row's window are masked for every row.
      for (std::size_t kb = hd.first(i0) / Bk * Bk; kb < kend; kb += Bk) {
        block_logits<V>(hd, KT, proj, i0, rows, kb, L);
        float alpha[Bq];
        std::size_t begin[Bq], count[Bq];
        for (std::size_t r = 0; r < Bq; ++r) {
          if (r < rows) {
            count[r] = weights<V>(hd, i0 + r, kb, L + r * Bk, P + r * Bk, st[r], alpha[r], begin[r]);
            continue;
          }
          begin[r] = count[r] = 0;  // padding rows: zero weights, never stored
          alpha[r] = 0;
          for (std::size_t u = 0; u < Bk; ++u) P[r * Bk + u] = 0;
        }
        accumulate<V>(hd, Vt, kb, P, alpha, begin, count, rows, acc);
      }
      for (std::size_t r = 0; r < rows; ++r) {
        auto* o = out + ((i0 + r) * H + h) * d;
        const typename V::R l = V::set1(st[r].l);
        std::size_t col = 0;
        for (; col + V::W <= d; col += V::W) V::template Io<S>::store(o + col, V::div(V::load(acc + r * d + col), l));
        for (; col < d; ++col) V::template Io<S>::put(o + col, acc[r * d + col] / st[r].l);
      }
    }
  }
}

}  // namespace

}  // namespace pecheck::simd
