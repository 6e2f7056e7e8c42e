// The contract ladder in a CLI run (harness/contract_ladder.hpp): for each operation a contract
// governs whose convention the encoder honours, per dtype, agreement under each of its contracts
// until one holds (exact, dtype-trig, fp32-angles for a position encoding; exact, rounded-p for
// attention), or only the contract --contract names where it governs the operation;
// run_catalogue then judges every other law under the contract met. validate --plugin uses it
// (docs/plugins.md).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli/commands.hpp"
#include "harness/contract_ladder.hpp"

namespace pecheck::cli {

/// The ladder's outcome per (operation, dtype): the verdict and the agreement result that decided it.
struct ContractLadder {
  std::map<std::pair<Op, DType>, std::pair<ContractVerdict, PropertyResult>> decided;

  /// The ladder's agreement result for p in dt, which run_catalogue reports as it is (p is the
  /// agreement the ladder ran), or nothing: p runs with params().
  std::optional<PropertyResult> ready(const Property& p, DType dt) const;
  /// The params of the contract met (and its ceiling for a law that compares calls).
  RunParams params(const Property& p, DType dt, RunParams base) const;
  /// After run_catalogue: a law failing under the contract agreement met is re-run under weaker ones
  /// (settle_contract), its result in `run` replaced, the verdict stepped down where it then holds.
  void settle(const Backend& b, const VerifyOptions& o, VerifyRun& run);
  /// One line per verdict ("contract rope_apply f32: meets fp32-angles; exact fails at ...").
  void print() const;
  nlohmann::json json() const;
};

/// Runs the ladder for every governed operation among `properties` whose convention `honours`
/// says the encoder takes, in each of `dtypes` it offers (`skip` empty for it). asked: --contract,
/// for the operations it governs (the others climb).
ContractLadder climb_ladder(const Backend& b, const std::vector<const Property*>& properties,
                            const std::vector<DType>& dtypes, const VerifyOptions& o, const VerifyRun& run,
                            std::optional<tol::Contract> asked, const SkipRule& skip);

/// run_catalogue under a ladder: each unit takes the ladder's result or params.
void run_catalogue(const Backend& b, const std::vector<const Property*>& properties, const std::vector<DType>& dtypes,
                   const VerifyOptions& o, VerifyRun& run, const SkipRule& skip, const ContractLadder& ladder);

}  // namespace pecheck::cli
