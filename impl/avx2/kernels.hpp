// pecheck's AVX2+FMA kernels on native storage (fp32, bf16, fp16), callable directly: strided and
// unaligned tensors, any size. Angles are formed and reduced in double (impl/angles.hpp's scheme,
// four lanes at a time), so outputs stay within the error model at every position below 2^24.
// This header carries no intrinsics: the vector code lives in translation units built with
// -mavx2 -mfma -mf16c and is entered only after availability() said yes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "spec/conventions.hpp"

namespace pecheck::avx2 {

/// Storage element types: the bit patterns of bfloat16 and IEEE binary16.
struct bf16 {
  std::uint16_t bits;
};
struct f16 {
  std::uint16_t bits;
};

/// Whether this CPU runs the kernels (AVX2, FMA and F16C); the reason when it does not.
struct Cpu {
  bool ok = false;
  std::string reason;
};
Cpu availability();

/// A row-major matrix: `rows` rows of `cols` elements, row r at data + r * stride (stride >= cols).
template <class T>
struct Rows {
  T* data = nullptr;
  std::size_t rows = 0, cols = 0;
  std::ptrdiff_t stride = 0;
};

/// A (tokens, heads, head_dim) tensor: token t, head h at data + t * token_stride + h * head_stride,
/// so Q and K may be views into a fused QKV buffer.
template <class T>
struct Heads {
  T* data = nullptr;
  std::size_t tokens = 0;
  int heads = 0;
  std::ptrdiff_t token_stride = 0, head_stride = 0;
};

// Every function checks its shapes and spec first and throws std::invalid_argument (or
// std::out_of_range for a learned position outside the table) before writing anything.

/// out[t] = PE(positions[t]); out.cols == spec.d_model.
template <class T>
void sinusoidal_table(const SinusoidalSpec&, std::span<const std::int64_t> positions, Rows<T> out);

/// x[t] += PE(positions[t]) in place, the sum formed in double and rounded once.
template <class T>
void sinusoidal_add(const SinusoidalSpec&, std::span<const std::int64_t> positions, Rows<T> x);

/// x[t] += table[positions[t]] in place.
template <class T>
void learned_add(const LearnedSpec&, Rows<const T> table, std::span<const std::int64_t> positions, Rows<T> x);

/// Rotates every tensor in place (Q and K, say), token t to positions[t]. The cos/sin of each
/// (position, frequency) is computed once per token and shared by every head of every tensor;
/// dimensions past rotary_dim are never touched.
template <class T>
void rope_apply(const RopeSpec&, std::span<const std::int64_t> positions, std::span<const Heads<T>> tensors);

/// out (heads, n, n), dense: ALiBi bias, -inf where causally masked.
template <class T>
void alibi_bias(const AlibiSpec&, std::span<const std::int64_t> positions, T* out);

/// out (n, n) = q_i.k_j + q_i.r[clamp(p_j - p_i)]; q, k (n, head_dim), table (2K+1, head_dim), dense.
template <class T>
void shaw_scores(const ShawSpec&, const T* q, const T* k, const T* table, std::span<const std::int64_t> positions,
                 T* out);

/// out (heads, n, n) = table[bucket(p_j - p_i), h]; table (num_buckets, heads), dense.
template <class T>
void t5_bias(const T5Spec&, const T* table, std::span<const std::int64_t> positions, T* out);

/// out = attention(q, k, v) with its PE, all (n, heads, head_dim) dense; pe_table (2K+1,
/// head_dim) read only for the Shaw PE. Blocked, with an online softmax: besides fp32 copies of
/// the inputs it keeps O(n * head_dim) memory, never an (n, n) score matrix.
template <class T>
void attention(const AttentionSpec&, std::span<const std::int64_t> positions, const T* q, const T* k, const T* v,
               const T* pe_table, T* out);

}  // namespace pecheck::avx2
