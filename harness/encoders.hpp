// Every encoder under test that pecheck itself ships: the backend table, then the reference
// instantiated with double. Tests and the CLI iterate over this one list.
#pragma once

#include <vector>

#include "interface/backend.hpp"

namespace pecheck {

/// backend_table() followed by "reference-double" and "cuda-emulated".
const std::vector<Backend>& encoders_under_test();

}  // namespace pecheck
