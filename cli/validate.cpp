// pecheck validate --plugin lib.so: the catalogue against a third-party native encoder. The
// plugin is probed and run only in child processes; what it does not offer is skipped with the
// reason, and an operation whose convention it does not state gets only the convention-free
// (family) properties. Where it honours the spec of an operation a contract governs (RoPE,
// M-RoPE, the sinusoid), the contract ladder (cli/contract_run.hpp) finds the strongest contract
// it meets per dtype first, and every law is judged under that one. Its RoPE and sinusoid are
// then profiled per octave of position (cli/plugin_profile.cpp).
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.hpp"
#include "cli/contract_run.hpp"
#include "cli/plugin_profile.hpp"
#include "plugin/plugin_host.hpp"

namespace pecheck::cli {

int validate(VerifyOptions o) {
  check_common_options(o);
  const auto properties = select_properties(o.property);
  const auto dtypes = select_dtypes(o.dtype);
  const auto probed = probe_plugin(o);
  if (!probed) return 3;
  const plugin::Declaration& d = *probed;
  const Backend b = plugin::as_backend(d);
  VerifyRun run = start_run(o, "validate");
  std::cout << describe_plugin(d) << "\n";
  run.total = count_units({&b}, properties, dtypes, o);
  const auto start = std::chrono::steady_clock::now();
  const SkipRule skip = [&](const Property& p, DType dt) { return plugin_skip_reason(d, p, dt); };
  // The strongest contract the plugin meets per governed operation and dtype (or --contract's):
  // every other law is judged under it.
  ContractLadder ladder =
      climb_ladder(b, properties, dtypes, o, run,
                   o.contract.empty() ? std::nullopt : std::optional(contract_named(o.contract)), skip);
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
