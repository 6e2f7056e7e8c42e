#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
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
    for (const std::vector<Property>* list : {&property_registry(), &opt_in_registry()})
      for (const Property& p : *list) {
        nlohmann::json dtypes = nlohmann::json::array();
        for (DType d : p.dtypes) dtypes.push_back(dtype_name(d));
        props.push_back({{"id", p.id},
                         {"statement", p.statement},
                         {"doc", p.doc},
                         {"source", p.source},
                         {"family", family_name(p.family)},
                         {"dtypes", dtypes},
                         {"convention_free", p.convention_free},
                         {"opt_in", p.opt_in},
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
  std::cout << "\nOpt-in properties (run only when --property names one exactly; reproducibility, not "
               "correctness):\n";
  for (const Property& p : opt_in_registry())
    std::cout << fmt::format("  {:<36} {}\n  {:<36} {}\n", p.id, p.statement, "", p.doc);
  std::cout << "\nBackends:\n";
  for (const Backend& b : encoders_under_test()) {
    const Availability a = b.probe();
    std::cout << fmt::format("  {:<17} {}{}\n", b.name,
                             a.available ? "available" : "unavailable: ", a.available ? "" : a.reason);
  }
  std::cout << "\nTolerances (docs/error-model.md):\n";
  std::size_t id_width = 0, metric_width = 0;  // the longest id and metric set the columns
  for (const auto& e : tol::table())
    id_width = std::max(id_width, e.id.size()), metric_width = std::max(metric_width, e.metric.size());
  for (const auto& e : tol::table())
    std::cout << fmt::format("  {:<{}} {:<{}} {}\n", e.id, id_width, e.metric, metric_width, e.formula);
  return 0;
}

}  // namespace pecheck::cli
