// The calls of the vector kernels that every width implements (impl/avx2/, impl/avx512/): plain
// structs and raw pointers, read by the checked entry points (impl/avx2/checked_calls.hpp, built
// without vector flags) and by the kernel bodies of this folder. No standard-library template
// may be instantiated by a vector unit (impl/avx2/detail.hpp says why): data and size arithmetic only.
#pragma once

#include <cstddef>
#include <cstdint>

#include "impl/t5_bucket.hpp"

namespace pecheck::simd {

enum class Storage { f32, bf16, f16 };

/// Per-frequency hi + lo parts (impl/angles.hpp), padded with zeros to a multiple of 8 entries (the
/// AVX2 kernels read them by 4, the AVX-512 ones by 8).
struct Frequencies {
  const double* hi = nullptr;
  const double* lo = nullptr;
  std::size_t count = 0;  ///< real entries (before padding)
};

inline std::size_t padded8(std::size_t n) { return (n + 7) / 8 * 8; }

struct SinusoidalCall {
  Frequencies f;
  bool interleaved = true;
  std::int64_t padding_idx = -1;
  const std::int64_t* positions = nullptr;
  std::size_t n = 0;
  void* data = nullptr;
  std::ptrdiff_t stride = 0;
  bool add = false;           ///< x += PE instead of out = PE
  double* scratch = nullptr;  ///< sinusoidal_scratch_doubles(frequencies)
};
/// Large enough for both kernel sets (AVX2 lays its rows out by 4 doubles, AVX-512 by 8).
inline std::size_t sinusoidal_scratch_doubles(std::size_t frequencies) { return 34 * padded8(frequencies); }

struct RopeTensor {
  void* data = nullptr;
  int heads = 0;
  std::ptrdiff_t token_stride = 0, head_stride = 0;
};
struct RopeCall {
  Frequencies f;  ///< rotary_dim / 2 pairs
  double magnitude = 1;
  bool interleaved = true;
  const std::int64_t* positions = nullptr;
  std::size_t n = 0;
  const RopeTensor* tensors = nullptr;
  std::size_t count = 0;
  double* scratch = nullptr;  ///< rope_scratch_doubles(pairs)
};
/// Per token: cos and sin in double (pairs, padded to 8), then the fp32 coefficients of the output
/// lanes in blocks of 7 arrays (rope_kernel.cpp: blocks of 8 lanes; AVX-512's: of 16): 2 x pairs
/// lanes, padded to 16. The size serves both kernel sets; the scratch is 64-byte aligned.
inline std::size_t rope_lanes(std::size_t pairs) { return (2 * pairs + 15) / 16 * 16; }
inline std::size_t rope_scratch_doubles(std::size_t pairs) { return 2 * padded8(pairs) + 7 * rope_lanes(pairs) / 2; }

enum class Bias { none, alibi, shaw, t5 };

/// Attention on fp32 copies of q (queries, heads, head_dim), k and v (n, kv_heads, head_dim) with
/// the PE already applied.
struct AttentionCall {
  const float *q = nullptr, *k = nullptr, *v = nullptr;
  std::size_t n = 0;
  int heads = 0, head_dim = 0;
  bool causal = false;
  float scale = 1;
  Bias bias = Bias::none;
  const double* slopes = nullptr;   ///< ALiBi, one per head
  const float* pe_table = nullptr;  ///< fp32: Shaw's (2K+1, head_dim), T5's (num_buckets, heads)
  int max_distance = 0;
  const std::int64_t* positions = nullptr;
  void* out = nullptr;
  float* scratch = nullptr;  ///< attention_scratch_floats(...)
  /// K and V are (n, kv_heads, head_dim); query head h reads K/V head h / (heads / kv_heads).
  int kv_heads = 0;
  /// Sliding window (causal): token i sees keys (i - window, i]; 0 means none.
  int window = 0;
  /// Query rows (0: n): q and out hold tokens n - queries .. n - 1 (the mask aligned bottom-right).
  std::size_t queries = 0;
  /// The query heads this call computes, [head_begin, head_end) (head_end 0: all): one thread's
  /// range; a head's output does not depend on which range it is in.
  std::size_t head_begin = 0, head_end = 0;
  t5::Buckets buckets{};  ///< T5's bucketing (Bias::t5), its table in pe_table
};
inline constexpr std::size_t kQueryBlock = 8, kKeyBlock = 64;
/// Row stride of the transposed K: whole key blocks plus 16 floats, so that its rows (one per head
/// dimension) do not all fall into the same L1 set when n is a multiple of 1024.
inline std::size_t kt_stride(std::size_t n) { return (n + kKeyBlock - 1) / kKeyBlock * kKeyBlock + 16; }
inline std::size_t attention_scratch_floats(std::size_t n, int head_dim, int max_distance) {
  const std::size_t d = static_cast<std::size_t>(head_dim), R = 2 * static_cast<std::size_t>(max_distance) + 1;
  return d * kt_stride(n) + d * n             // one head's K (transposed) and V
         + n * R                              // Shaw: q_i . r_t of one head
         + kQueryBlock * (d + 2 * kKeyBlock)  // accumulators, logits, weights
         + 3 * 16;                            // the kernels start three arrays on 64-byte boundaries
}

}  // namespace pecheck::simd
