// The CUDA backend behind the encoder-under-test interface.
#pragma once

#include <memory>

#include "interface/encoder.hpp"

namespace pecheck {

/// Every operation on the GPU (builds with CUDA only; usable when cuda::availability() says so).
std::unique_ptr<Encoder> make_cuda_encoder();

/// The same kernels run thread by thread on the CPU (impl/cuda/emulator.cpp): in every build,
/// for checking the kernel code where there is no GPU. Slow.
std::unique_ptr<Encoder> make_cuda_emulated_encoder();

}  // namespace pecheck
