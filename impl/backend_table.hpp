// The one backend table: tests and the CLI iterate over it; an unavailable backend stays listed
// with the reason, so it is reported as skipped and never silently dropped.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "impl/encoder.hpp"

namespace pecheck {

struct Availability {
  bool available = false;
  std::string reason;  ///< why not, when unavailable
};

struct Backend {
  std::string name;
  std::string description;
  std::function<Availability()> probe;
  std::function<std::unique_ptr<Encoder>()> make;
};

/// pecheck's own optimized implementations, in the order reports list them.
const std::vector<Backend>& backend_table();

}  // namespace pecheck
