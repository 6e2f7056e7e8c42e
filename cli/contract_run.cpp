#include "cli/contract_run.hpp"

#include <fmt/format.h>

#include <iostream>

#include "properties/registry.hpp"

namespace pecheck::cli {

namespace {
const Property* find_property(const std::string& id) {
  for (const auto* registry : {&property_registry(), &opt_in_registry()})
    for (const Property& p : *registry)
      if (p.id == id) return &p;
  return nullptr;
}
}  // namespace

std::optional<PropertyResult> ContractLadder::ready(const Property& p, DType dt) const {
  const auto it = decided.find({p.op, dt});
  if (it == decided.end() || p.id != it->second.second.property) return std::nullopt;
  return it->second.second;
}

RunParams ContractLadder::params(const Property& p, DType dt, RunParams base) const {
  const auto it = decided.find({p.op, dt});
  if (it == decided.end()) return base;
  return params_under(p, it->second.first, base);
}

void ContractLadder::settle(const Backend& b, const VerifyOptions& o, VerifyRun& run) {
  const RunParams base = run_params(run, o);
  for (auto& [key, value] : decided) {
    std::vector<JudgedLaw> laws;
    for (PropertyResult& r : run.results) {
      const Property* p = find_property(r.property);
      if (p && p->op == key.first && r.dtype == key.second && r.verdict != Verdict::skip) laws.push_back({p, &r});
    }
    settle_contract(value.first, laws, base, [&, &key = key](const Property& p, const RunParams& params) {
      return run_timed(p, b, key.second, params, o);
    });
  }
}

void ContractLadder::print() const {
  for (const auto& [key, value] : decided)
    std::cout << fmt::format("contract {} {}: {}\n", op_name(key.first), dtype_name(key.second),
                             value.first.describe());
}

nlohmann::json ContractLadder::json() const {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [key, value] : decided) {
    nlohmann::json j = value.first.json();
    j["op"] = op_name(key.first);
    out.push_back(std::move(j));
  }
  return out;
}

ContractLadder climb_ladder(const Backend& b, const std::vector<const Property*>& properties,
                            const std::vector<DType>& dtypes, const VerifyOptions& o, const VerifyRun& run,
                            std::optional<tol::Contract> asked, const SkipRule& skip) {
  ContractLadder ladder;
  for (const Property& agreement : property_registry()) {
    if (agreement.id != contract_agreement_id(agreement.op)) continue;
    const bool wanted =
        std::any_of(properties.begin(), properties.end(), [&](const Property* p) { return p->op == agreement.op; });
    if (!wanted) continue;
    for (DType dt : dtypes) {
      if (!agreement.applies(dt) || (skip && skip(agreement, dt))) continue;
      PropertyResult decided;
      // --contract names one contract: an operation it does not govern climbs its own ladder.
      const ContractVerdict v = climb_contracts(
          agreement.op, dt, asked && governs(*asked, agreement.op) ? asked : std::nullopt,
          [&](tol::Contract c) {
            return run_timed(agreement, b, dt, under_contract(agreement.op, c, run_params(run, o)), o);
          },
          decided);
      ladder.decided.emplace(std::pair{agreement.op, dt}, std::pair{v, decided});
    }
  }
  return ladder;
}

}  // namespace pecheck::cli
