// One PropertyResult in the fields of docs/json-schema.md: what `pecheck verify --json` writes per
// row (the CLI adds its replay command) and what pecheck.check's Result is built from (Python adds
// the statement, the page and the time).
#pragma once

#include <nlohmann/json.hpp>

#include "harness/property.hpp"

namespace pecheck {

/// The row of r; `direction` is its property's. JSON has no infinity: an infinite measurement is
/// null, as is a skip's (it measured nothing). Empty fields are left out.
nlohmann::json result_json(const PropertyResult& r, Direction direction);

}  // namespace pecheck
