// A JSON value as the Python objects it names (dict, list, str, int, float, bool, None): the
// results, the catalogue and a call's spec cross into Python as objects, not as text to parse.
// The rows keep the JSON report's shape (docs/json-schema.md), null standing for an infinite
// measurement as there; pecheck/__init__.py builds its typed Result and Report from them.
#pragma once

#include <nanobind/nanobind.h>

#include <nlohmann/json.hpp>

namespace pecheck::python {

namespace nb = nanobind;

inline nb::object to_python(const nlohmann::json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::object: {
      nb::dict d;
      for (const auto& [key, value] : j.items()) d[key.c_str()] = to_python(value);
      return d;
    }
    case nlohmann::json::value_t::array: {
      nb::list l;
      for (const auto& value : j) l.append(to_python(value));
      return l;
    }
    case nlohmann::json::value_t::string:
      return nb::str(j.get_ref<const std::string&>().c_str());
    case nlohmann::json::value_t::boolean:
      return nb::bool_(j.get<bool>());
    case nlohmann::json::value_t::number_integer:
      return nb::int_(j.get<std::int64_t>());
    case nlohmann::json::value_t::number_unsigned:
      return nb::int_(j.get<std::uint64_t>());
    case nlohmann::json::value_t::number_float:
      return nb::float_(j.get<double>());
    default:
      return nb::none();
  }
}

}  // namespace pecheck::python
