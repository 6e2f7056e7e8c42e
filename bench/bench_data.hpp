// Shapes and deterministic inputs shared by the benchmarks: every run times the same bytes, so
// medians from different runs (and the floors beside their kernels) compare like for like.
#pragma once

#include <cstddef>
#include <cstdint>
#include <numeric>
#include <type_traits>
#include <vector>

#include "spec/conventions.hpp"
#include "spec/dtype.hpp"

namespace pecheck::bench {

// RoPE on Q and K: a Llama-3-like prefill (4096 tokens, 32 heads of 128, theta 500000, HF layout).
inline constexpr std::size_t kRopeTokens = 4096;
inline constexpr int kRopeHeads = 32;
inline constexpr int kRopeHeadDim = 128;
inline constexpr std::size_t kRopeElements = kRopeTokens * kRopeHeads * kRopeHeadDim;  ///< per tensor
inline RopeSpec rope_spec() { return {kRopeHeadDim, kRopeHeadDim, 500000.0, RopeLayout::half_split}; }

/// Every rope and rmw-floor benchmark reads and writes Q and K once per iteration. Counting the
/// same bytes for all of them makes their bytes/s ratio exactly the inverse of their time ratio.
/// The scalar backend carries bf16 values in floats; it is still charged the bf16 bytes.
inline std::int64_t rope_bytes(std::size_t element_size) {
  return static_cast<std::int64_t>(2 * 2 * kRopeElements * element_size);
}

// Sinusoidal table: 32768 positions of d_model 1024, fp32 (128 MiB, far beyond any cache).
inline constexpr std::size_t kTablePositions = 32768;
inline constexpr int kTableWidth = 1024;
inline constexpr std::size_t kTableElements = kTablePositions * kTableWidth;
inline constexpr std::int64_t kTableBytes = kTableElements * sizeof(float);  ///< written per call
inline SinusoidalSpec table_spec() { return {kTableWidth, 10000.0, SinusoidalLayout::interleaved}; }

// Attention: 1024 tokens, 8 heads of 64, RoPE, full (non-causal) mask, fp32.
inline constexpr std::size_t kAttentionTokens = 1024;
inline AttentionSpec attention_spec() { return {.heads = 8, .head_dim = 64, .causal = false, .pe = AttentionPE::rope}; }
/// QK^T and PV: 2 n^2 d multiply-adds per head, 2 FLOP each; softmax and RoPE are not counted.
inline double attention_flops() {
  const AttentionSpec s = attention_spec();
  return 4.0 * static_cast<double>(kAttentionTokens * kAttentionTokens) * s.head_dim * s.heads;
}

/// n values in [-1, 1) from a 64-bit LCG (top bits only): fast enough for hundreds of MiB per
/// repetition, and never NaN, infinite or subnormal.
inline std::vector<float> uniform_floats(std::size_t n, std::uint64_t seed) {
  std::vector<float> x(n);
  std::uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
  for (float& v : x) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    v = static_cast<float>(static_cast<double>(s >> 40) * 0x1p-23 - 1.0);
  }
  return x;
}

/// The same values rounded to bf16, still as floats (how the scalar backend carries bf16).
inline std::vector<float> bf16_valued_floats(std::size_t n, std::uint64_t seed) {
  std::vector<float> x = uniform_floats(n, seed);
  for (float& v : x) v = round_to(DType::bf16, v);
  return x;
}

/// bf16 bit patterns (the AVX2 backend's native storage) of the same values.
template <class Bits>
std::vector<Bits> bf16_storage(std::size_t n, std::uint64_t seed) {
  const std::vector<float> x = bf16_valued_floats(n, seed);
  std::vector<Bits> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = Bits{bf16_bits(x[i])};
  return out;
}

/// n values in the AVX2 backend's native storage T: floats, or bf16 bit patterns of the same values.
template <class T>
std::vector<T> native_values(std::size_t n, std::uint64_t seed) {
  if constexpr (std::is_same_v<T, float>)
    return uniform_floats(n, seed);
  else
    return bf16_storage<T>(n, seed);
}

inline std::vector<std::int64_t> positions_from_zero(std::size_t n) {
  std::vector<std::int64_t> p(n);
  std::iota(p.begin(), p.end(), std::int64_t{0});
  return p;
}

}  // namespace pecheck::bench
