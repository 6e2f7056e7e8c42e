// Every encoder under test that pecheck itself ships: the backend table, then the reference
// instantiated with double. Tests and the CLI iterate over this one list.
#pragma once

#include <vector>

#include "impl/backend_table.hpp"

namespace pecheck {

/// backend_table() followed by "reference-double".
const std::vector<Backend>& encoders_under_test();

}  // namespace pecheck
