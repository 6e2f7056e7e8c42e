// The detail::Storage of a native element type: for the baseline-ISA code that calls into the
// vector units (api.cpp, the encoder adapter) and for tests. Not for the vector units themselves,
// which must not include the specs' fmt templates (see detail.hpp).
#pragma once

#include <type_traits>

#include "impl/avx2/detail.hpp"
#include "impl/avx2/kernels.hpp"

namespace pecheck::avx2 {

template <class T>
constexpr detail::Storage storage_of() {
  using U = std::remove_const_t<T>;
  static_assert(std::is_same_v<U, float> || std::is_same_v<U, bf16> || std::is_same_v<U, f16>,
                "native storage is float, avx2::bf16 or avx2::f16");
  if constexpr (std::is_same_v<U, float>) return detail::Storage::f32;
  if constexpr (std::is_same_v<U, bf16>) return detail::Storage::bf16;
  return detail::Storage::f16;
}

}  // namespace pecheck::avx2
