#include <fmt/format.h>
#include <fnmatch.h>

#include <chrono>
#include <iostream>
#include <random>

#include "cli/commands.hpp"
#include "properties/encoders.hpp"
#include "properties/isolation.hpp"

namespace pecheck::cli {

std::vector<const Backend*> select_backends(const std::string& name) {
  std::vector<const Backend*> out;
  std::string known;
  for (const Backend& b : encoders_under_test()) {
    known += (known.empty() ? "" : ", ") + b.name;
    if (name == "all" || name == b.name) out.push_back(&b);
  }
  if (out.empty()) throw UsageError(fmt::format("unknown backend '{}' (known: {}, all)", name, known));
  return out;
}

std::vector<const Property*> select_properties(const std::string& glob) {
  std::vector<const Property*> out;
  for (const Property& p : property_registry())
    if (fnmatch(glob.c_str(), p.id.c_str(), 0) == 0) out.push_back(&p);
  if (out.empty()) throw UsageError(fmt::format("--property '{}' matches no property (see pecheck list)", glob));
  return out;
}

std::vector<DType> select_dtypes(const std::string& name) {
  if (name == "all") return {std::begin(kAllDTypes), std::end(kAllDTypes)};
  try {
    return {parse_dtype(name)};
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

void check_common_options(const VerifyOptions& o) {
  if (!(o.timeout_s > 0)) throw UsageError(fmt::format("--timeout must be > 0 seconds, got {}", o.timeout_s));
  if (o.cases < 1 || o.cases > 1000000)
    throw UsageError(fmt::format("--cases must be an integer in [1, 1000000], got {}", o.cases));
  if (!o.json.empty()) {  // fail on an unwritable path now, not after the run
    if (std::FILE* f = std::fopen((o.json + ".tmp").c_str(), "w")) {
      std::fclose(f);
      std::remove((o.json + ".tmp").c_str());
    } else {
      throw UsageError(fmt::format("cannot write --json file '{}'", o.json));
    }
  }
}

VerifyRun start_run(const VerifyOptions& o, std::string_view command) {
  VerifyRun run;
  run.seed = o.seed ? *o.seed : std::random_device{}() * 0x100000001ull;
  run.cases = static_cast<int>(o.cases);
  std::cout << fmt::format("pecheck {}: seed {}, {} cases per property x encoder x dtype\n", command, run.seed,
                           run.cases);
  return run;
}

void run_catalogue(const Backend& b, const std::vector<const Property*>& properties, const std::vector<DType>& dtypes,
                   const VerifyOptions& o, VerifyRun& run) {
  const Availability a = b.probe();
  const RunParams params{run.seed, run.cases};
  for (const Property* p : properties)
    for (DType dt : dtypes) {
      if (std::find(p->dtypes.begin(), p->dtypes.end(), dt) == p->dtypes.end()) continue;
      if (!a.available) {
        run.results.push_back({.property = p->id,
                               .encoder = b.name,
                               .dtype = dt,
                               .verdict = Verdict::skip,
                               .seed = derive_seed(run.seed, p->id, dt),
                               .message = a.reason});
        continue;
      }
      // Each property x encoder x dtype in its own child process: a crash is a result.
      run.results.push_back(run_isolated(*p, b, dt, params, {.timeout_s = o.timeout_s}));
      if (!o.quiet)
        std::cerr << fmt::format("  {} / {} / {}: {}\n", p->id, b.name, dtype_name(dt),
                                 verdict_name(run.results.back().verdict));
    }
}

int verify(const VerifyOptions& o) {
  check_common_options(o);
  const auto backends = select_backends(o.backend);
  const auto properties = select_properties(o.property);
  const auto dtypes = select_dtypes(o.dtype);
  VerifyRun run = start_run(o, "verify");
  const auto start = std::chrono::steady_clock::now();
  for (const Backend* b : backends) run_catalogue(*b, properties, dtypes, o, run);
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  if (!o.quiet) print_table(run);
  print_failures(run, o);
  if (!o.json.empty()) write_json(run, o);
  int failed = 0, crashed = 0, skipped = 0, passed = 0;
  for (const auto& r : run.results) {
    failed += r.verdict == Verdict::fail;
    crashed += r.verdict == Verdict::crash;
    skipped += r.verdict == Verdict::skip;
    passed += r.verdict == Verdict::pass;
  }
  std::cout << fmt::format("{} passed, {} failed, {} skipped, {} crashed in {:.1f} s (seed {})\n", passed, failed,
                           skipped, crashed, run.seconds, run.seed);
  if (crashed) return 3;
  return failed ? 1 : 0;
}

}  // namespace pecheck::cli
