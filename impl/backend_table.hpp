// The one backend table: pecheck's own optimized implementations. The harness's list of encoders
// under test (harness/encoders.hpp) starts with it.
#pragma once

#include <vector>

#include "interface/backend.hpp"

namespace pecheck {

/// pecheck's own optimized implementations, in the order reports list them.
const std::vector<Backend>& backend_table();

}  // namespace pecheck
