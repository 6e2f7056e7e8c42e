// The checked RoPE, sinusoid and attention entry points shared by the AVX2 API and the AVX-512 one
// (impl/avx512/api.cpp): spec and shape checks, the cached frequency tables and the scratch, then
// calls into whichever vector units are given. Built without -mavx2, like api.cpp.
#pragma once

#include <cstdint>
#include <span>

#include "impl/avx2/detail.hpp"
#include "impl/avx2/kernels.hpp"

namespace pecheck::avx2::detail {

/// The vector units behind the checked calls: AVX2's (rope_kernel.cpp, position_kernels.cpp,
/// attention_kernel.cpp) or AVX-512's (impl/avx512/). Both read the same call structs and scratch
/// sizes.
struct VectorUnits {
  void (*rope)(Storage, const RopeCall&);
  void (*sinusoidal_rows)(Storage, const SinusoidalCall&);
  void (*attention)(Storage, const AttentionCall&);
};

const VectorUnits& avx2_units();

template <class T>
void checked_rope(const VectorUnits&, const RopeSpec&, std::span<const std::int64_t> positions,
                  std::span<const Heads<T>> tensors);

template <class T>
void checked_sinusoidal(const VectorUnits&, const SinusoidalSpec&, std::span<const std::int64_t> positions, Rows<T> x,
                        bool add);

/// Attention with its PE (applied to fp32 copies by the same units' sinusoid and RoPE kernels).
template <class T>
void checked_attention(const VectorUnits&, const AttentionSpec&, std::span<const std::int64_t> positions, const T* q,
                       const T* k, const T* v, const T* pe_table, T* out);

}  // namespace pecheck::avx2::detail
