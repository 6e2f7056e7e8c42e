// The CUDA backend's host API: plain C++17 (no CUDA headers, no spec structs, fmt or spans), so
// that the encoder and the backend table compile with the host compiler and nvcc, which CMake
// 3.25 can drive only up to C++17, sees only what it runs; the encoder (cuda_encoder.cpp) checks
// specs and shapes and computes the frequency tables. Tensors are floats carrying values of the
// dtype, as in impl/encoder.hpp; each call packs them into native storage (fp32, bf16 or fp16
// bits), runs the kernels on its target, checks every call and launch, and unpacks. Every check
// that can fail does so before anything is written back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "impl/angles.hpp"
#include "impl/t5_bucket.hpp"

namespace pecheck::cuda {

struct Device {
  bool ok = false;
  std::string reason;  ///< why not, when not ok; the device's name when ok
};

/// Whether a device can run this build's code (sm_90 SASS, compute_90 PTX). Probed once, in a
/// child process: a parent that initialises CUDA and then forks leaves its children unable to
/// use it, and pecheck runs every property in a forked child.
const Device& availability();

/// Storage dtype, numbered as pecheck::DType.
enum class Storage { f32, bf16, f16 };

struct RopeLaunch {
  int heads = 1, head_dim = 2, rotary_dim = 2;
  bool interleaved = true;
  double magnitude = 1;  ///< YaRN's attention factor on cos and sin, else 1
};

struct T5Launch {
  int heads = 1, num_buckets = 32, max_distance = 128;
  bool bidirectional = true;
  t5::Buckets buckets() const {
    const int half = bidirectional ? num_buckets / 2 : num_buckets;
    return t5::buckets(half, half / 2, bidirectional, max_distance);
  }
};

/// Attention forward; pe numbered as pecheck::AttentionPE (none, sinusoidal, rope, alibi, shaw, t5).
struct AttentionLaunch {
  int heads = 1, head_dim = 1;
  bool causal = false;
  double scale = 1;
  int pe = 0;
  bool rope_interleaved = false;
  int shaw_max_distance = 0;
  int kv_heads = 0;      ///< K/V heads (0: heads); query head h reads K/V head h / (heads / kv_heads)
  int window = 0;        ///< sliding window (causal): token i sees keys (i - window, i]; 0 none
  int queries = 0;       ///< q and out rows, the last tokens (0: all n); the mask aligned bottom-right
  int rotary_dim = 0;    ///< RoPE's rotated dims (0: head_dim); the rest pass through
  double magnitude = 1;  ///< RoPE's factor on cos and sin (YaRN, LongRoPE), else 1
  T5Launch t5{};         ///< T5's bucketing, for pe == t5 (its heads unread: the attention's)
  int rotary_pairs() const { return (rotary_dim > 0 ? rotary_dim : head_dim) / 2; }
  int kv_count() const { return kv_heads > 0 ? kv_heads : heads; }
  std::size_t query_count(std::size_t n) const { return queries > 0 ? static_cast<std::size_t>(queries) : n; }
};
constexpr int kMaxAttentionHeadDim = 256;  ///< the per-thread accumulator's size

/// The kernels behind the encoder, on one target: the GPU (device()), or the CPU running the same
/// thread bodies one by one (emulator()). Every call packs the float host values into native
/// storage, fences the buffers (sentinels after each, outputs poisoned), runs, checks, unpacks.
class Launcher {
 public:
  virtual ~Launcher() = default;

  /// x (positions, heads, head_dim) rotated in place; freqs holds rotary_dim / 2 frequencies.
  virtual void rope_apply(Storage dt, const RopeLaunch& r, const std::int64_t* positions, std::size_t tokens,
                          const angles::Frequency* freqs, float* x) const = 0;

  /// Axial RoPE: x (n, heads, head_dim), dims [0, head_dim/2) rotated by rows and the rest by
  /// cols, each half a RoPE of width head_dim/2; freqs holds head_dim / 4 frequencies.
  virtual void rope2d_apply(Storage dt, int heads, int head_dim, bool interleaved, const std::int64_t* rows,
                            const std::int64_t* cols, std::size_t n, const angles::Frequency* freqs,
                            float* x) const = 0;

  /// out (positions, d_model) = PE(positions); freqs holds d_model / 2 frequencies.
  virtual void sinusoidal_table(Storage dt, int d_model, bool interleaved, std::int64_t padding_idx,
                                const std::int64_t* positions, std::size_t rows, const angles::Frequency* freqs,
                                float* out) const = 0;

  /// out (n, d_model): the sinusoid of width d_model/2 of rows, then that of cols; freqs holds
  /// d_model / 4 frequencies.
  virtual void sinusoidal2d_table(Storage dt, int d_model, bool interleaved, const std::int64_t* rows,
                                  const std::int64_t* cols, std::size_t n, const angles::Frequency* freqs,
                                  float* out) const = 0;

  /// out (heads, n, n): ALiBi, -slopes[h] |p_i - p_j|, or causal -slopes[h] (p_i - p_j) with -inf
  /// for j > i.
  virtual void alibi_bias(Storage dt, int heads, bool causal, const double* slopes, const std::int64_t* positions,
                          std::size_t n, float* out) const = 0;

  /// out (heads, n, n) = table[bucket(p_j - p_i), h]; table (num_buckets, heads) of dtype values.
  virtual void t5_bias(Storage dt, const T5Launch& t, const float* table, const std::int64_t* positions, std::size_t n,
                       float* out) const = 0;

  /// x (n, d) += table[positions] (table (max_len, d)); positions already checked in range.
  virtual void learned_add(Storage dt, int d, int max_len, const float* table, const std::int64_t* positions,
                           std::size_t n, float* x) const = 0;

  /// out (n, n) = q_i.k_j + q_i.r[clamp(p_j - p_i, -K, K) + K]; q, k (n, d), r (2K+1, d).
  virtual void shaw_scores(Storage dt, int d, int max_distance, const float* q, const float* k, const float* table,
                           const std::int64_t* positions, std::size_t n, float* out) const = 0;

  /// out (n, heads, head_dim) = softmax(scale S + B) V per head with the PE plugged in; q, k, v of
  /// that shape; pe_table Shaw's (2K+1, head_dim) for pe == shaw, T5's (num_buckets, heads) for t5;
  /// slopes (heads) for alibi; freqs:
  /// the sinusoid's (heads*head_dim / 2) or RoPE's (head_dim / 2) frequencies.
  virtual void attention(Storage dt, const AttentionLaunch& a, const std::int64_t* positions, std::size_t n,
                         const float* q, const float* k, const float* v, const float* pe_table, std::size_t table_size,
                         const double* slopes, const angles::Frequency* freqs, std::size_t freq_count,
                         float* out) const = 0;
};

/// The GPU; only in builds with CUDA, and only usable when availability() says so.
const Launcher& device();

/// The CPU, one thread body after another: slow, and the same code (impl/cuda/kernel_bodies.hpp).
const Launcher& emulator();

/// The kernels alone, for the benchmarks: every pointer is device memory, the launch is queued
/// on the default stream and checked (cudaGetLastError), nothing is copied or synchronised.
void rope_apply_on_device(Storage dt, const RopeLaunch& r, const std::int64_t* positions, std::size_t tokens,
                          const angles::Frequency* freqs, void* x);
/// consecutive_positions: positions[t + 1] == positions[t] + 1 throughout (the caller knows; the
/// kernel then carries its angles down runs of rows).
void sinusoidal_table_on_device(Storage dt, int d_model, bool interleaved, bool consecutive_positions,
                                const std::int64_t* positions, std::size_t rows, const angles::Frequency* freqs,
                                void* out);

/// Attention with RoPE (or none, or ALiBi) on device tensors of storage dt: q, k, v and out
/// (n, heads, head_dim); scratch holds 3 n heads head_dim floats (the widened, rotated working
/// copies); freqs (head_dim / 2, for RoPE) and slopes (heads, for ALiBi) on the device. The whole
/// operation as the encoder runs it: widen, rotate, attend.
void attention_on_device(Storage dt, const AttentionLaunch& a, const std::int64_t* positions, std::size_t n,
                         const void* q, const void* k, const void* v, float* scratch, const angles::Frequency* freqs,
                         const double* slopes, void* out);

}  // namespace pecheck::cuda
