// pecheck validate --plugin lib.so: the catalogue against a third-party native encoder. The
// plugin is probed and run only in child processes; what it does not offer is skipped with the
// reason, and an operation whose convention it does not state gets only the convention-free
// (family) properties. Where it honours the spec of an operation a contract governs (RoPE,
// M-RoPE, the sinusoid), the contract ladder (cli/contract_run.hpp) finds the strongest contract
// it meets per dtype first, and every law is judged under that one. Its RoPE and sinusoid are
// then profiled per octave of position (cli/plugin_profile.cpp).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iostream>
#include <string_view>
#include <vector>

#include "cli/commands.hpp"
#include "cli/contract_run.hpp"
#include "cli/plugin_profile.hpp"
#include "plugin/plugin_host.hpp"
#include "properties/registry.hpp"

namespace pecheck::cli {

namespace {

/// --contract NAME must govern an operation the run checks on the plugin: rounded-p (attention
/// only) on a plugin without attention, say, would otherwise apply to nothing and say nothing.
void check_contract_applies(const std::optional<tol::Contract>& asked, const std::string& name,
                            const std::vector<const Property*>& properties, const std::vector<DType>& dtypes,
                            const SkipRule& skip, const std::string& plugin) {
  if (!asked) return;
  for (const Property* p : properties)
    for (DType dt : dtypes)
      if (governs(*asked, p->op) && p->applies(dt) && !skip(*p, dt)) return;
  // The operations it does govern, from the same rule the ladder climbs by (governs()).
  std::vector<std::string_view> governed;
  for (const Property& p : property_registry())
    if (governs(*asked, p.op) && std::find(governed.begin(), governed.end(), op_name(p.op)) == governed.end())
      governed.push_back(op_name(p.op));
  throw UsageError(fmt::format(
      "--contract {}: none of the properties selected on plugin {} is governed by it (it governs {}), so it "
      "would judge nothing",
      name, plugin, fmt::join(governed, ", ")));
}

}  // namespace

int validate(VerifyOptions o) {
  check_common_options(o);
  const auto properties = select_properties(o.property);
  const auto dtypes = select_dtypes(o.dtype);
  const auto probed = probe_plugin(o);
  if (!probed) return 3;
  const plugin::Declaration& d = *probed;
  const Backend b = plugin::as_backend(d);
  const SkipRule skip = [&](const Property& p, DType dt) { return plugin_skip_reason(d, p, dt); };
  const std::optional<tol::Contract> asked =
      o.contract.empty() ? std::nullopt : std::optional(contract_named(o.contract));
  check_contract_applies(asked, o.contract, properties, dtypes, skip, d.name);
  VerifyRun run = start_run(o, "validate");
  std::cout << describe_plugin(d) << "\n";
  run.total = count_units({&b}, properties, dtypes, o);
  const auto start = std::chrono::steady_clock::now();
  // The strongest contract the plugin meets per governed operation and dtype (or --contract's):
  // every other law is judged under it.
  ContractLadder ladder = climb_ladder(b, properties, dtypes, o, run, asked, skip);
  run_catalogue(b, properties, dtypes, o, run, skip, ladder);
  ladder.settle(b, o, run);  // a law failing under the contract agreement met may hold under a weaker one
  ladder.print();
  // Where the error first exceeds the bound, octave by octave, read like a dump.
  const std::vector<Profile> profiles = plugin_profiles(d, b, dtypes, o.timeout_s);
  print_profiles(profiles, o.quiet);
  run.extra_json = nlohmann::json{{"profiles", profiles_json(profiles)}, {"contracts", ladder.json()}}.dump();
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "\n";
  return conclude(run, o, "validate");
}

}  // namespace pecheck::cli
