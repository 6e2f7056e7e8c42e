// Exact multi-head scaled dot-product attention (Eigen matrices of Real), optional causal mask,
// with each encoder family plugged in: added to the inputs, applied to Q/K, or added to scores.
#pragma once

#include <Eigen/Dense>
#include <boost/multiprecision/eigen.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "reference/alibi.hpp"
#include "reference/rope.hpp"
#include "reference/shaw.hpp"
#include "reference/sinusoidal.hpp"
#include "reference/t5.hpp"
#include "spec/conventions.hpp"

namespace pecheck::ref {

template <class Real>
using Matrix = Eigen::Matrix<Real, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// Q of shape (seq, heads, head_dim), K and V (seq, kv_heads, head_dim), flattened row-major.
template <class Real>
struct AttentionInputs {
  std::vector<Real> q, k, v;
};

/// The position transforms that act on the inputs: PE added to Q, K, V (sinusoidal) or RoPE on
/// Q and K. Score-side encodings (ALiBi, Shaw) leave the inputs as they are.
template <class Real>
AttentionInputs<Real> attention_transform_inputs(const AttentionSpec& s, std::span<const std::int64_t> positions,
                                                 AttentionInputs<Real> in) {
  const std::size_t w = static_cast<std::size_t>(s.width());
  // Q holds the last query_count(n) tokens: each encoded at its own token's position.
  const std::size_t off = s.query_offset(positions.size());
  if (s.pe == AttentionPE::sinusoidal) {
    const std::vector<Real> freqs = sinusoidal_frequencies<Real>(s.sinusoidal());
    for (std::size_t t = 0; t < positions.size(); ++t) {
      const auto pe = sinusoidal_row<Real>(s.sinusoidal(), positions[t], freqs);
      for (std::size_t c = 0; c < w; ++c) {
        if (t >= off) in.q[(t - off) * w + c] += pe[c];
        in.k[t * w + c] += pe[c];
        in.v[t * w + c] += pe[c];
      }
    }
  } else if (s.pe == AttentionPE::rope) {
    rope_apply<Real>(s.rope(), s.heads, positions.subspan(off), std::span<Real>(in.q));
    rope_apply<Real>(s.rope(), s.kv_count(), positions, std::span<Real>(in.k));
  }
  return in;
}

/// Rows [t*heads + h] of a (seq, heads, head_dim) tensor as a (seq x head_dim) matrix.
template <class Real>
Matrix<Real> head_matrix(const std::vector<Real>& x, std::size_t n, int heads, int head_dim, int h) {
  Matrix<Real> m(static_cast<Eigen::Index>(n), head_dim);
  for (std::size_t t = 0; t < n; ++t)
    for (int c = 0; c < head_dim; ++c)
      m(static_cast<Eigen::Index>(t), c) =
          x[(t * static_cast<std::size_t>(heads) + static_cast<std::size_t>(h)) * static_cast<std::size_t>(head_dim) +
            static_cast<std::size_t>(c)];
  return m;
}

/// Pre-softmax logits of head h (queries x n): scale * (q.k [+ q.r]) [+ alibi or T5's bias], -inf where
/// masked; row i is token off + i (off = n - queries: the mask aligned bottom-right).
template <class Real>
Matrix<Real> attention_logits(const AttentionSpec& s, std::span<const std::int64_t> positions,
                              const AttentionInputs<Real>& x, std::span<const Real> pe_table, int h) {
  const std::size_t n = positions.size(), nq = s.query_count(n), off = s.query_offset(n);
  const Matrix<Real> qh = head_matrix(x.q, nq, s.heads, s.head_dim, h);
  const Matrix<Real> kh = head_matrix(x.k, n, s.kv_count(), s.head_dim, s.kv_head_of(h));
  Matrix<Real> logits = qh * kh.transpose();
  if (s.pe == AttentionPE::shaw) {
    const auto shaw = s.shaw();
    for (std::size_t i = 0; i < nq; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        const std::size_t r = shaw_row(shaw, positions[off + i], positions[j]) * static_cast<std::size_t>(s.head_dim);
        Real acc = 0;
        for (int c = 0; c < s.head_dim; ++c)
          acc += qh(static_cast<Eigen::Index>(i), c) * pe_table[r + static_cast<std::size_t>(c)];
        logits(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) += acc;
      }
  }
  using std::sqrt;  // the default scale 1/sqrt(d) in Real: a double would carry only 53 bits
  logits *= s.scale ? Real(*s.scale) : Real(1) / sqrt(Real(s.head_dim));
  const Real slope = s.pe == AttentionPE::alibi ? alibi_slopes<Real>(s.heads)[static_cast<std::size_t>(h)] : Real(0);
  for (std::size_t i = 0; i < nq; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t t = off + i;
      auto& l = logits(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j));
      if ((s.causal && j > t) || j < s.first_key(t)) {
        l = -std::numeric_limits<Real>::infinity();
      } else if (s.pe == AttentionPE::alibi) {
        l += *alibi_bias<Real>(s.alibi(), slope, t, j, positions[t], positions[j]);
      } else if (s.pe == AttentionPE::t5) {
        const auto b = static_cast<std::size_t>(t5_bucket<Real>(s.t5(), positions[j] - positions[t], 0.0).bucket);
        l += pe_table[b * static_cast<std::size_t>(s.heads) + static_cast<std::size_t>(h)];
      }
    }
  return logits;
}

/// Row-wise softmax; masked (-inf) entries get weight exactly 0.
template <class Real>
Matrix<Real> softmax_rows(const Matrix<Real>& logits) {
  using std::exp;
  Matrix<Real> p = logits;
  for (Eigen::Index i = 0; i < p.rows(); ++i) {
    const Real m = logits.row(i).maxCoeff();
    Real sum = 0;
    for (Eigen::Index j = 0; j < p.cols(); ++j) {
      p(i, j) = logits(i, j) == -std::numeric_limits<Real>::infinity() ? Real(0) : exp(logits(i, j) - m);
      sum += p(i, j);
    }
    p.row(i) /= sum;
  }
  return p;
}

/// O = softmax(logits) V for every head, from inputs already transformed; (seq, heads, head_dim).
template <class Real>
std::vector<Real> attention_core(const AttentionSpec& s, std::span<const std::int64_t> positions,
                                 const AttentionInputs<Real>& x, std::span<const Real> pe_table) {
  const std::size_t n = positions.size(), nq = s.query_count(n), off = s.query_offset(n);
  const std::size_t hd = static_cast<std::size_t>(s.head_dim), H = static_cast<std::size_t>(s.heads);
  std::vector<Real> out(nq * H * hd);
  for (int h = 0; h < s.heads; ++h) {
    const Matrix<Real> p = softmax_rows(attention_logits(s, positions, x, pe_table, h));
    const Matrix<Real> v = head_matrix(x.v, n, s.kv_count(), s.head_dim, s.kv_head_of(h));
    Matrix<Real> o(p.rows(), v.cols());
    // Row i sums over the keys it attends to only: a masked key contributes nothing, not 0 * v_j
    // (which is NaN when v_j is; attention.nan_parity checks exactly this).
    for (Eigen::Index i = 0; i < p.rows(); ++i) {
      const auto t = static_cast<Eigen::Index>(off) + i;
      const auto first = static_cast<Eigen::Index>(s.first_key(static_cast<std::size_t>(t)));
      const Eigen::Index keys = (s.causal ? t + 1 : p.cols()) - first;
      o.row(i) = p.row(i).segment(first, keys) * v.middleRows(first, keys);
    }
    for (std::size_t t = 0; t < nq; ++t)
      for (std::size_t c = 0; c < hd; ++c)
        out[(t * H + static_cast<std::size_t>(h)) * hd + c] =
            o(static_cast<Eigen::Index>(t), static_cast<Eigen::Index>(c));
  }
  return out;
}

/// Attention with its position encoding, from raw Q, K, V.
template <class Real>
std::vector<Real> attention(const AttentionSpec& s, std::span<const std::int64_t> positions, AttentionInputs<Real> in,
                            std::span<const Real> pe_table) {
  s.validate();
  return attention_core(s, positions, attention_transform_inputs(s, positions, std::move(in)), pe_table);
}

}  // namespace pecheck::ref
