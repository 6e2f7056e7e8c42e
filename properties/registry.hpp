// The catalogue: every theorem of properties/, in catalogue order (registry.cpp lists them).
#pragma once

#include <string>
#include <vector>

#include "harness/property.hpp"

namespace pecheck {

/// Every registered property, in catalogue order.
const std::vector<Property>& property_registry();

/// The opt-in properties (Property::opt_in): laws that correct encoders may lack (reproducibility,
/// not correctness), run only when `--property` names one by its exact id, never by a pattern.
const std::vector<Property>& opt_in_registry();

/// The registered property with this id (catalogue or opt-in); std::invalid_argument if none.
const Property& registered_property(const std::string& id);

}  // namespace pecheck
