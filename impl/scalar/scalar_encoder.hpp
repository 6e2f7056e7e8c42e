// The scalar backend as an encoder under test.
#pragma once

#include <memory>

#include "interface/encoder.hpp"

namespace pecheck {

/// Every operation, every dtype; the portable fallback and the baseline of the other backends.
std::unique_ptr<Encoder> make_scalar_encoder();

}  // namespace pecheck
