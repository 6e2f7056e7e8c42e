// The CUDA backend behind the encoder-under-test interface.
#pragma once

#include <memory>

#include "impl/encoder.hpp"

namespace pecheck {

/// RoPE and the sinusoidal table on the GPU; the other operations are not on it yet (a skip).
std::unique_ptr<Encoder> make_cuda_encoder();

}  // namespace pecheck
