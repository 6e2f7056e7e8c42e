// The AVX2 backend's encoder (impl/avx2/kernels.hpp behind the encoder-under-test interface).
#pragma once

#include <memory>

#include "interface/encoder.hpp"

namespace pecheck {

/// Call only when avx2::availability() says the CPU runs it.
std::unique_ptr<Encoder> make_avx2_encoder();

}  // namespace pecheck
