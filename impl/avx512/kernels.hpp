// pecheck's AVX-512 kernels for RoPE, the sinusoidal table and attention: the AVX2 API's calls
// (impl/avx2/kernels.hpp: the same types, checks and errors) with 16 fp32 lanes per vector, masked
// tails, and AVX512_BF16's rounding instruction where the CPU has it. The vector code lives
// in translation units built with -mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx512bf16 and is
// entered only after availability() said yes.
#pragma once

#include <cstdint>
#include <span>

#include "impl/avx2/kernels.hpp"

namespace pecheck::avx512 {

using avx2::bf16;
using avx2::Cpu;
using avx2::f16;
using avx2::Heads;
using avx2::Rows;

/// Whether this CPU runs the kernels: the AVX2 kernels' requirements, AVX-512 F, BW, VL and DQ,
/// and an OS that saves the opmask and ZMM registers; the reason when it does not.
/// PECHECK_DISABLE_AVX512=1 says no.
Cpu availability();

/// Whether the bf16 stores use AVX512_BF16's vcvtneps2bf16 (else the integer rounding).
bool has_bf16_instructions();

/// As avx2::sinusoidal_table, sinusoidal_add and rope_apply.
template <class T>
void sinusoidal_table(const SinusoidalSpec&, std::span<const std::int64_t> positions, Rows<T> out);
template <class T>
void sinusoidal_add(const SinusoidalSpec&, std::span<const std::int64_t> positions, Rows<T> x);
template <class T>
void rope_apply(const RopeSpec&, std::span<const std::int64_t> positions, std::span<const Heads<T>> tensors);

/// As avx2::attention: the same blocked online softmax on 16-lane vectors, its PE applied by the
/// AVX-512 sinusoid and RoPE kernels.
template <class T>
void attention(const AttentionSpec&, std::span<const std::int64_t> positions, const T* q, const T* k, const T* v,
               const T* pe_table, T* out);

}  // namespace pecheck::avx512
