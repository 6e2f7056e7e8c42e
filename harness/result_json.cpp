#include "harness/result_json.hpp"

#include <cmath>

namespace pecheck {

nlohmann::json result_json(const PropertyResult& r, Direction direction) {
  nlohmann::json j = {{"property", r.property},
                      {"encoder", r.encoder},
                      {"dtype", dtype_name(r.dtype)},
                      {"cases", r.cases},
                      {"nontrivial_cases", r.nontrivial_cases},
                      {"max_error_u", r.max_error_u},
                      {"bound_u", r.bound_u},
                      {"verdict", verdict_name(r.verdict)},
                      {"direction", direction == Direction::at_least ? "at_least" : "at_most"},
                      {"property_seed", r.seed}};
  if (r.verdict == Verdict::skip) j["max_error_u"] = nullptr, j["bound_u"] = nullptr;
  if (r.vacuous) j["vacuous"] = true;
  if (!r.message.empty()) j["message"] = r.message;
  if (!r.counterexample.empty()) j["counterexample"] = r.counterexample;
  if (r.verdict == Verdict::fail && !std::isnan(r.counterexample_error_u))
    j["counterexample_error_u"] = r.counterexample_error_u;
  if (r.verdict == Verdict::fail && !std::isnan(r.counterexample_bound_u))
    j["counterexample_bound_u"] = r.counterexample_bound_u;
  for (const auto& other : r.other_rules) {
    nlohmann::json e = {{"rule", other.rule}, {"counterexample", other.counterexample}, {"message", other.message}};
    if (!std::isnan(other.counterexample_error_u)) e["counterexample_error_u"] = other.counterexample_error_u;
    j["other_rules"].push_back(e);
  }
  nlohmann::json dist = nlohmann::json::object();
  for (const auto& [tag, count] : r.distribution) dist[tag] = count;
  if (!dist.empty()) j["distribution"] = dist;
  return j;
}

}  // namespace pecheck
