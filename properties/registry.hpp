// The catalogue: every theorem of properties/, in catalogue order (registry.cpp lists them).
#pragma once

#include <vector>

#include "harness/property.hpp"

namespace pecheck {

/// Every registered property, in catalogue order.
const std::vector<Property>& property_registry();

}  // namespace pecheck
