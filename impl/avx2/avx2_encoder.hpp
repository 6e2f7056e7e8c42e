// The AVX2 and AVX-512 backends' encoders (impl/avx2/kernels.hpp, impl/avx512/kernels.hpp behind
// the encoder-under-test interface).
#pragma once

#include <memory>

#include "interface/encoder.hpp"

namespace pecheck {

/// Call only when avx2::availability() says the CPU runs it.
std::unique_ptr<Encoder> make_avx2_encoder();
/// Call only when avx512::availability() says the CPU runs it.
std::unique_ptr<Encoder> make_avx512_encoder();

}  // namespace pecheck
