// The operations only the scalar backend implements, and the reason the vector and CUDA backends
// give when they decline them (one place, so the report reads the same for each).
#pragma once

#include "interface/encoder.hpp"

namespace pecheck {

/// Whether a vector or CUDA backend offers `op`: the 2-D relative bias is a table read with no
/// arithmetic a wider register or a GPU changes, so the scalar backend's kernel is its one.
inline Support offered_beyond_scalar(Op op) {
  if (op == Op::relative_bias_2d) return {false, "relative_bias_2d is a table read, kept to the scalar backend"};
  return {};
}

}  // namespace pecheck
