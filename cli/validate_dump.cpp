// pecheck validate --dump DIR: what a framework wrote (NPY or safetensors arrays and a manifest)
// checked without running it: the convention is fitted from the data unless the manifest states
// it, then the outputs are compared with the 50-digit reference under it, octave by octave of
// position, beside the convention-free check of the family.
#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/dump_report.hpp"
#include "harness/contract_ladder.hpp"
#include "harness/tolerance.hpp"
#include "tensorfiles/array.hpp"

namespace pecheck::cli {

namespace {

using namespace dumpcheck;

/// --contract NAME: exact (the default), dtype-trig, fp32-angles or rounded-p; rounded-p governs
/// attention only, so a set with no attention dump refuses it (after reading, before printing).
void require_governed(tol::Contract c, const std::vector<Checked>& checked) {
  if (governs(c, Op::rope_apply)) return;
  for (const Checked& k : checked)
    if (k.dump.kind == Kind::attention) return;
  throw UsageError(
      fmt::format("--contract: '{}' governs attention, and these dumps hold position encodings (exact, dtype-trig or "
                  "fp32-angles)",
                  tol::contract_name(c)));
}

}  // namespace

int validate_dump(VerifyOptions o) {
  check_common_options(o);
  const tol::Contract contract = contract_named(o.contract.empty() ? "exact" : o.contract);
  const auto start = std::chrono::steady_clock::now();
  auto [checked, unreadable] = read_dump_set(o.dump, contract);
  require_governed(contract, checked);
  VerifyRun run;
  run.seed = o.seed.value_or(0);  // nothing is drawn: the dump is the case
  std::cout << fmt::format("pecheck validate --dump {}: {} dump{}{}\n", o.dump, checked.size(),
                           checked.size() == 1 ? "" : "s",
                           unreadable.empty() ? "" : fmt::format(" ({} not read)", unreadable.size()));
  for (const auto& [dir, why] : unreadable) std::cerr << "pecheck: " << why << "\n";
  nlohmann::json extras = nlohmann::json::array();
  for (const Checked& c : checked) {
    print_checked(c, o.quiet, "dump");
    for (const Measurement& m : c.measurements) {
      run.results.push_back(as_result(c, m));
      extras.push_back(checked_json(c, m));
    }
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!o.json.empty()) {
    nlohmann::json results = results_json(run, o);
    for (std::size_t i = 0; i < results.size(); ++i) results[i].update(extras[i]);
    nlohmann::json not_read = nlohmann::json::array();
    for (const auto& [dir, why] : unreadable) not_read.push_back({{"dump", dir}, {"reason", why}});
    write_json_file(
        o.json,
        {{"seed", run.seed}, {"cases", 0}, {"elapsed_s", run.seconds}, {"results", results}, {"not_read", not_read}});
  }
  if (!o.junit.empty()) write_junit(run, o, "validate");
  int failed = 0;
  for (const auto& r : run.results) failed += r.verdict == Verdict::fail;
  std::cout << fmt::format("\n{} passed, {} failed over {} dump{} in {:.1f} s{}\n", run.results.size() - failed, failed,
                           checked.size(), checked.size() == 1 ? "" : "s", run.seconds,
                           unreadable.empty() ? "" : fmt::format("; {} not read (exit 2)", unreadable.size()));
  if (!unreadable.empty()) return 2;
  return failed ? 1 : 0;
}

}  // namespace pecheck::cli
