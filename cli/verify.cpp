#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <random>
#include <set>

#include "cli/commands.hpp"
#include "cli/contract_run.hpp"
#include "dumpcheck/convention_hint.hpp"
#include "harness/encoders.hpp"
#include "harness/isolation.hpp"
#include "properties/registry.hpp"

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
    if (p.matches(glob)) out.push_back(&p);
  // An opt-in property runs when named exactly: no pattern (not even '*') selects it.
  std::vector<const Property*> opt_in;
  for (const Property& p : opt_in_registry())
    if (p.matches(glob)) opt_in.push_back(&p);
  if (glob.find_first_of("*?[") == std::string::npos) out.insert(out.end(), opt_in.begin(), opt_in.end());
  if (out.empty() && !opt_in.empty())
    throw UsageError(
        fmt::format("--property '{}' matches only opt-in properties, which run when named exactly (e.g. --property {})",
                    glob, opt_in.front()->id));
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

namespace {

void parse_shard(VerifyOptions& o) {
  if (o.shard.empty()) return;
  unsigned long long i = 0, n = 0;
  int used = 0;
  if (std::sscanf(o.shard.c_str(), "%llu/%llu%n", &i, &n, &used) != 2 || used != static_cast<int>(o.shard.size()) ||
      n < 1 || i >= n || n > 1000000)
    throw UsageError(fmt::format("--shard must be I/N with 0 <= I < N, got '{}'", o.shard));
  if (!o.seed) throw UsageError("--shard needs --seed: every shard must draw the same cases");
  o.shard_index = i;
  o.shard_count = n;
}

/// Whether the unit about to be enumerated belongs to this shard (round robin over units).
bool next_unit_is_mine(const VerifyOptions& o, VerifyRun& run) { return run.unit++ % o.shard_count == o.shard_index; }

/// Progress on stderr: a bar redrawn in place on a terminal, one line per result otherwise.
void progress(const VerifyRun& run, const PropertyResult& r) {
  if (!isatty(STDERR_FILENO)) {
    // A skip is listed the first time its encoder gives its reason; the table groups the rest.
    static std::set<std::pair<std::string, std::string>> skip_reasons;
    if (r.verdict == Verdict::skip && !skip_reasons.insert({r.encoder, r.message}).second) return;
    std::cerr << fmt::format(
        "  {} / {} / {}: {}{}\n", r.property, r.encoder, dtype_name(r.dtype), verdict_name(r.verdict),
        r.verdict == Verdict::skip ? fmt::format(" ({}; the same skips are not listed again)", r.message) : "");
    return;
  }
  const std::size_t done = run.results.size(), total = std::max<std::size_t>(run.total, 1), width = 30;
  const std::size_t filled = std::min(width, done * width / total);
  std::cerr << fmt::format("\r[{}{}] {}/{} {:<48.48}", std::string(filled, '#'), std::string(width - filled, ' '), done,
                           total, fmt::format("{} / {} / {}", r.property, r.encoder, dtype_name(r.dtype)));
  if (done >= run.total) std::cerr << "\n";
}

}  // namespace

void check_writable(const std::string& path, std::string_view flag) {
  if (path.empty()) return;
  if (std::FILE* f = std::fopen((path + ".tmp").c_str(), "w")) {
    std::fclose(f);
    std::remove((path + ".tmp").c_str());
    return;
  }
  throw UsageError(fmt::format("cannot write {} file '{}'", flag, path));
}

void check_common_options(VerifyOptions& o) {
  if (!(o.timeout_s > 0)) throw UsageError(fmt::format("--timeout must be > 0 seconds, got {}", o.timeout_s));
  if (o.cases < 1 || o.cases > 1000000)
    throw UsageError(fmt::format("--cases must be an integer in [1, 1000000], got {}", o.cases));
  parse_shard(o);
  check_writable(o.json, "--json");
  check_writable(o.junit, "--junit");
}

std::size_t count_units(const std::vector<const Backend*>& backends, const std::vector<const Property*>& properties,
                        const std::vector<DType>& dtypes, const VerifyOptions& o) {
  VerifyRun counter;
  std::size_t mine = 0;
  for (std::size_t b = 0; b < backends.size(); ++b)
    for (const Property* p : properties)
      for (DType dt : dtypes)
        if (p->applies(dt)) mine += next_unit_is_mine(o, counter);
  return mine;
}

RunParams run_params(const VerifyRun& run, const VerifyOptions& o) {
  RunParams params{run.seed, run.cases, o.per_rule};
  params.ftz = o.ftz;
  params.pins = o.pins;
  params.shrink = !o.verdict_only;
  // A failing agreement names what the output fits.
  if (!o.verdict_only) params.explain_failure = dumpcheck::convention_hint;
  return params;
}

VerifyRun start_run(const VerifyOptions& o, std::string_view command) {
  VerifyRun run;
  run.seed = o.seed ? *o.seed : std::random_device{}() * 0x100000001ull;
  run.cases = static_cast<int>(o.cases);
  std::cout << fmt::format(
      "pecheck {}: seed {}, {} cases per property x encoder x dtype{}{}\n", command, run.seed, run.cases,
      o.shard_count > 1 ? fmt::format(", shard {}/{}", o.shard_index, o.shard_count) : "",
      o.ftz ? "; judged as flushing subnormals to zero (stated: no input below FLT_MIN is drawn)" : "");
  return run;
}

PropertyResult run_timed(const Property& p, const Backend& b, DType dt, const RunParams& params,
                         const VerifyOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  PropertyResult r = run_isolated(p, b, dt, params, {.timeout_s = o.timeout_s});
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

void run_catalogue(const Backend& b, const std::vector<const Property*>& properties, const std::vector<DType>& dtypes,
                   const VerifyOptions& o, VerifyRun& run, const SkipRule& skip, const ContractLadder& ladder) {
  const Availability a = b.probe();
  const RunParams params = run_params(run, o);
  for (const Property* p : properties)
    for (DType dt : dtypes) {
      if (!p->applies(dt) || !next_unit_is_mine(o, run)) continue;
      const std::optional<std::string> skipped = !a.available ? std::optional(a.reason)
                                                 : skip       ? skip(*p, dt)
                                                              : std::nullopt;
      if (skipped) {
        run.results.push_back(skipped_result(*p, b.name, dt, run.seed, *skipped));
      } else if (auto done = ladder.ready(*p, dt)) {  // the ladder's agreement
        run.results.push_back(std::move(*done));
      } else {  // each property x encoder x dtype in its own child process: a crash is a result
        run.results.push_back(run_timed(*p, b, dt, ladder.params(*p, dt, params), o));
      }
      if (!o.quiet) progress(run, run.results.back());
    }
}

void run_catalogue(const Backend& b, const std::vector<const Property*>& properties, const std::vector<DType>& dtypes,
                   const VerifyOptions& o, VerifyRun& run, const SkipRule& skip) {
  run_catalogue(b, properties, dtypes, o, run, skip, ContractLadder{});
}

int verify(VerifyOptions o) {
  check_common_options(o);
  const auto backends = select_backends(o.backend);
  const auto properties = select_properties(o.property);
  const auto dtypes = select_dtypes(o.dtype);
  VerifyRun run = start_run(o, "verify");
  run.total = count_units(backends, properties, dtypes, o);
  const auto start = std::chrono::steady_clock::now();
  for (const Backend* b : backends) run_catalogue(*b, properties, dtypes, o, run);
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return conclude(run, o, "verify");
}

int conclude(VerifyRun& run, const VerifyOptions& o, std::string_view command) {
  if (!o.quiet) print_table(run);
  print_failures(run, o);
  if (!o.json.empty()) write_json(run, o);
  if (!o.junit.empty()) write_junit(run, o, command);
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
