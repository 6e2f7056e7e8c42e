// The entry points of the AVX-512 vector units, on the calls every width implements
// (impl/simd/calls.hpp, whose scratch sizes serve every width). Plain structs and raw pointers
// only, for the reason impl/avx2/detail.hpp gives.
#pragma once

#include <cstddef>

#include "impl/simd/calls.hpp"

namespace pecheck::avx512::detail {

using simd::AttentionCall;
using simd::RopeCall;
using simd::SinusoidalCall;
using simd::Storage;

/// `bf16_instructions`: round bf16 stores with vcvtneps2bf16 (AVX512_BF16), else in integers.
void rope(Storage, const RopeCall&, bool bf16_instructions);
void sinusoidal_rows(Storage, const SinusoidalCall&, bool bf16_instructions);
void attention(Storage, const AttentionCall&, bool bf16_instructions);
/// dst[i] = src[i] rounded to the storage through the kernels' own stores (for the tests).
void from_float(Storage, const float* src, std::size_t n, void* dst, bool bf16_instructions);

}  // namespace pecheck::avx512::detail
