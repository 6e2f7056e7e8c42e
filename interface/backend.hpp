// An entry of a list of encoders under test: a name, an availability probe with its reason, and a
// factory. The backend table (impl/), the list the harness iterates over (harness/encoders.hpp)
// and a loaded plugin are all lists of these; an unavailable entry stays listed with its reason,
// so it is reported as skipped and never silently dropped.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "interface/encoder.hpp"

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

}  // namespace pecheck
