// Every encoder under test that pecheck itself ships: the backend table, then the reference
// instantiated with double. Tests and the CLI iterate over this one list.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "interface/backend.hpp"

namespace pecheck {

/// backend_table() followed by "reference-double" and "cuda-emulated".
const std::vector<Backend>& encoders_under_test();

/// A new encoder of the entry named `name` in that list, or null when there is none.
std::unique_ptr<Encoder> make_encoder(std::string_view name);

}  // namespace pecheck
