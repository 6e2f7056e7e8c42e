// The reference itself, instantiated with a given Real, as an encoder under test: the check
// that the properties hold for a second, independent implementation (Real = double).
#pragma once

#include <memory>

#include "interface/encoder.hpp"

namespace pecheck {

/// reference/ with Real = double, outputs rounded once to the storage dtype.
std::unique_ptr<Encoder> make_reference_double_encoder();

}  // namespace pecheck
