// The checked RoPE and sinusoid entry points shared by the AVX2 API and the AVX-512 one
// (impl/avx512/api.cpp): spec and shape checks, the cached frequency tables and the thread's
// scratch, then one call into whichever vector unit is given. Built without -mavx2, like api.cpp.
#pragma once

#include <cstdint>
#include <span>

#include "impl/avx2/detail.hpp"
#include "impl/avx2/kernels.hpp"

namespace pecheck::avx2::detail {

/// The vector units behind the checked calls: AVX2's (rope_kernel.cpp, position_kernels.cpp) or
/// AVX-512's (impl/avx512/). Both read the same call structs and scratch layout sizes.
struct VectorUnits {
  void (*rope)(Storage, const RopeCall&);
  void (*sinusoidal_rows)(Storage, const SinusoidalCall&);
};

const VectorUnits& avx2_units();

template <class T>
void checked_rope(const VectorUnits&, const RopeSpec&, std::span<const std::int64_t> positions,
                  std::span<const Heads<T>> tensors);

template <class T>
void checked_sinusoidal(const VectorUnits&, const SinusoidalSpec&, std::span<const std::int64_t> positions, Rows<T> x,
                        bool add);

}  // namespace pecheck::avx2::detail
