// The entry points of the vector translation units: plain structs and raw pointers only. Shape
// checks, frequency tables (long double) and scratch allocation happen in api.cpp, built without
// -mavx2: an inline or template function (std::vector's, fmt's) instantiated in a -mavx2 unit
// may be the copy the linker keeps for the whole program and would then run AVX2 instructions on
// a CPU that lacks them. So the vector units instantiate nothing from the standard library.
#pragma once

#include <cstddef>
#include <cstdint>

#include "impl/simd/calls.hpp"

namespace pecheck::avx2::detail {

using simd::attention_scratch_floats;
using simd::AttentionCall;
using simd::Bias;
using simd::Frequencies;
using simd::kKeyBlock;
using simd::kQueryBlock;
using simd::kt_stride;
using simd::padded8;
using simd::rope_lanes;
using simd::rope_scratch_doubles;
using simd::RopeCall;
using simd::RopeTensor;
using simd::sinusoidal_scratch_doubles;
using simd::SinusoidalCall;
using simd::Storage;

void sinusoidal_rows(Storage, const SinusoidalCall&);
void rope(Storage, const RopeCall&);
void attention(Storage, const AttentionCall&);

struct LearnedCall {
  const void* table = nullptr;
  std::ptrdiff_t table_stride = 0;
  const std::int64_t* positions = nullptr;
  std::size_t n = 0, cols = 0;
  void* x = nullptr;
  std::ptrdiff_t stride = 0;
};
void learned_add(Storage, const LearnedCall&);

void alibi(Storage, const double* slopes, int heads, bool causal, const std::int64_t* positions, std::size_t n,
           void* out);

struct ShawCall {
  const void *q = nullptr, *k = nullptr, *table = nullptr;
  const std::int64_t* positions = nullptr;
  std::size_t n = 0;
  int head_dim = 0, max_distance = 0;
  void* out = nullptr;
  float* scratch = nullptr;  ///< 2K+1 floats: q_i . r_t of one query
};
void shaw(Storage, const ShawCall&);

struct T5Call {
  const void* table = nullptr;
  int heads = 0;
  bool bidirectional = true;
  int half = 0, max_exact = 0;
  /// boundaries[b]: the least distance whose log bucket is max_exact + 1 + b, for b < count.
  const std::int64_t* boundaries = nullptr;
  int boundary_count = 0;
  const std::int64_t* positions = nullptr;
  std::size_t n = 0;
  void* out = nullptr;
  std::int32_t* scratch = nullptr;  ///< n entries
};
void t5(Storage, const T5Call&);

/// dst[i] = src[i] as float, and back (exact for values of the format; rounding to nearest even).
void to_float(Storage, const void* src, std::size_t n, float* dst);
void from_float(Storage, const float* src, std::size_t n, void* dst);

}  // namespace pecheck::avx2::detail
