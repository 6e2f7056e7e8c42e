#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "harness/encoders.hpp"
#include "harness/tolerance.hpp"
#include "properties/registry.hpp"

namespace pecheck::cli {

int list(bool json) {
  if (json) {
    nlohmann::json props = nlohmann::json::array(), backends = nlohmann::json::array();
    for (const Property& p : property_registry()) {
      nlohmann::json dtypes = nlohmann::json::array();
      for (DType d : p.dtypes) dtypes.push_back(dtype_name(d));
      props.push_back({{"id", p.id},
                       {"statement", p.statement},
                       {"doc", p.doc},
                       {"source", p.source},
                       {"family", family_name(p.family)},
                       {"dtypes", dtypes},
                       {"convention_free", p.convention_free},
                       {"aliases", p.aliases}});
    }
    for (const Backend& b : encoders_under_test()) {
      const Availability a = b.probe();
      backends.push_back(
          {{"name", b.name}, {"available", a.available}, {"reason", a.reason}, {"description", b.description}});
    }
    std::cout << nlohmann::json{{"properties", props}, {"backends", backends}}.dump(2) << "\n";
    return 0;
  }
  std::cout << "Properties:\n";
  for (const Property& p : property_registry())
    std::cout << fmt::format("  {:<36} {}\n  {:<36} {}{}{}\n", p.id, p.statement, "", p.doc,
                             p.convention_free ? "  (convention-free: checks opaque plugins too)" : "",
                             p.aliases.empty() ? "" : fmt::format("  (formerly {})", fmt::join(p.aliases, ", ")));
  std::cout << "\nBackends:\n";
  for (const Backend& b : encoders_under_test()) {
    const Availability a = b.probe();
    std::cout << fmt::format("  {:<17} {}{}\n", b.name,
                             a.available ? "available" : "unavailable: ", a.available ? "" : a.reason);
  }
  std::cout << "\nTolerances (docs/error-model.md):\n";
  for (const auto& e : tol::table()) std::cout << fmt::format("  {:<18} {:<48} {}\n", e.id, e.metric, e.formula);
  return 0;
}

}  // namespace pecheck::cli
