// `pecheck selftest`: the catalogue must kill every mutant of mutants/ and pass every correct
// encoder. Prints the kill matrix: for each mutant, the properties that caught it.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/commands.hpp"
#include "harness/encoders.hpp"
#include "mutants/mutants.hpp"

namespace pecheck::cli {

namespace {

struct Kill {
  const mutants::Mutant* mutant;
  std::string encoder;              ///< the mutant encoder's name
  std::set<std::string> killed_by;  ///< property ids that failed (or crashed) on it
  bool expected_killed = false;     ///< the property named for it is among them
};

void write_selftest_json(const VerifyOptions& o, const VerifyRun& correct, const std::vector<Kill>& kills) {
  nlohmann::json mutants = nlohmann::json::array();
  for (const Kill& k : kills)
    mutants.push_back({{"name", k.encoder},
                       {"description", k.mutant->name},
                       {"source", k.mutant->source},
                       {"expected", k.mutant->caught_by},
                       {"killed", !k.killed_by.empty()},
                       {"killed_by", k.killed_by}});
  write_json_file(
      o.json,
      {{"seed", correct.seed}, {"cases", correct.cases}, {"mutants", mutants}, {"results", results_json(correct, o)}});
}

}  // namespace

int selftest(VerifyOptions o) {
  check_common_options(o);
  const auto properties = select_properties(o.property);
  const auto dtypes = select_dtypes(o.dtype);
  VerifyOptions quiet = o;
  quiet.quiet = true;
  quiet.per_rule = false;  // a kill needs one failure, not one per rule
  VerifyOptions mutant_options = quiet;
  mutant_options.verdict_only = true;  // a kill is a verdict: nothing prints a mutant's counterexample
  // The mutants a selection can judge: those whose named property it holds. With every property
  // (the default) that is the whole catalogue; a part of the catalogue (--property 'attention.*')
  // runs only its own mutants, so the catalogue can be split into runs side by side. A selection
  // that names no mutant's property would judge nothing: a usage error, not a pass.
  std::vector<const mutants::Mutant*> chosen;
  for (const mutants::Mutant& m : mutants::mutants())
    if (std::any_of(properties.begin(), properties.end(), [&](const Property* p) { return p->id == m.caught_by; }))
      chosen.push_back(&m);
  if (chosen.empty())
    throw UsageError(
        fmt::format("--property '{}' selects no property a mutant is named for: selftest would judge no "
                    "mutant (pecheck verify runs properties alone)",
                    o.property));
  VerifyRun correct = start_run(o, "selftest");
  const auto start = std::chrono::steady_clock::now();

  // The correct encoders first: a catalogue that fails them proves nothing by failing mutants.
  for (const Backend& b : encoders_under_test()) run_catalogue(b, properties, dtypes, quiet, correct);

  std::vector<Kill> kills;
  for (const mutants::Mutant* mp : chosen) {
    const mutants::Mutant& m = *mp;
    const Backend as_backend{m.make()->name(), m.name, [] { return Availability{true, ""}; }, m.make};
    VerifyRun run{.seed = correct.seed, .cases = correct.cases};
    run_catalogue(as_backend, properties, dtypes, mutant_options, run);
    Kill k{&m, as_backend.name, {}, false};
    for (const auto& r : run.results)
      // A vacuous failure caught nothing: the property could not have failed on most cases.
      if ((r.verdict == Verdict::fail && !r.vacuous) || r.verdict == Verdict::crash) k.killed_by.insert(r.property);
    k.expected_killed = k.killed_by.count(m.caught_by) > 0;
    if (!o.quiet) std::cerr << fmt::format("  {}: killed by {}\n", k.encoder, k.killed_by.size());
    kills.push_back(std::move(k));
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  int correct_failures = 0;
  for (const auto& r : correct.results)
    if (r.verdict == Verdict::fail || r.verdict == Verdict::crash) ++correct_failures;
  if (correct_failures) print_failures(correct, o);
  std::cout << fmt::format("\n{:<44} {:<40} {}\n", "mutant", "named property", "killed by");
  int survivors = 0;
  for (const Kill& k : kills) {
    survivors += k.killed_by.empty();
    std::cout << fmt::format("{:<44} {:<40} {}\n", k.encoder,
                             k.mutant->caught_by + (k.expected_killed ? "" : " (MISSED)"),
                             k.killed_by.empty() ? "SURVIVED" : fmt::format("{}", fmt::join(k.killed_by, ", ")));
  }
  if (!o.json.empty()) write_selftest_json(o, correct, kills);
  std::cout << fmt::format(
      "{} of {} mutants killed; correct encoders: {} of {} results failed, in {:.1f} s (seed {})\n",
      kills.size() - static_cast<std::size_t>(survivors), kills.size(), correct_failures, correct.results.size(),
      seconds, correct.seed);
  return survivors == 0 && correct_failures == 0 ? 0 : 1;
}

}  // namespace pecheck::cli
