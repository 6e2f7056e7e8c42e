#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "harness/result_json.hpp"
#include "properties/coverage.hpp"
#include "properties/registry.hpp"

namespace pecheck::cli {

namespace {

std::string number(double x) {
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  if (std::isnan(x)) return "nan";
  return fmt::format("{:.4g}", x);
}

bool at_least(const PropertyResult& r) {
  for (const Property& p : property_registry())
    if (p.id == r.property) return p.direction == Direction::at_least;
  return false;
}

/// One line on how many cases could have failed: "every case" when all could, else the rows where
/// some could not (a case that compares a call with itself, or whose bound no output exceeds).
void print_nontrivial(const VerifyRun& run) {
  std::vector<std::string> rows;
  int measured = 0;
  for (const auto& r : run.results) {
    if (r.verdict != Verdict::pass && r.verdict != Verdict::fail) continue;
    measured += r.cases;
    if (r.nontrivial_cases < r.cases)
      rows.push_back(
          fmt::format("{}/{}/{} {} of {}", r.property, r.encoder, dtype_name(r.dtype), r.nontrivial_cases, r.cases));
  }
  if (measured == 0) return;
  if (rows.empty())
    std::cout << fmt::format("non-trivial cases: all {} could have failed\n", measured);
  else
    std::cout << fmt::format("non-trivial cases: all but in {} row{} ({} needed): {}\n", rows.size(),
                             rows.size() == 1 ? "" : "s", fmt::format("{:.0f}%", 100 * kMinNontrivialShare),
                             fmt::join(rows, ", "));
}

/// How many attention cases crossed a 128-key tile (the RC_TAG "n > 128" of AttentionCase), per
/// property that draws such cases: the share that reaches where flash-style kernels change tiles.
void print_long_attention(const VerifyRun& run) {
  std::vector<std::pair<std::string, std::pair<int, int>>> per_property;  // (long, all) cases
  for (const auto& r : run.results) {
    int long_cases = 0, cases = 0;
    for (const auto& [tag, count] : r.distribution) {
      if (tag == "n > 128") long_cases += count, cases += count;
      if (tag == "n <= 128") cases += count;
    }
    if (cases == 0) continue;
    auto it =
        std::find_if(per_property.begin(), per_property.end(), [&](const auto& e) { return e.first == r.property; });
    if (it == per_property.end()) it = per_property.insert(per_property.end(), {r.property, {0, 0}});
    it->second.first += long_cases, it->second.second += cases;
  }
  for (const auto& [property, counts] : per_property)
    if (counts.first > 0)
      std::cout << fmt::format("{} cases across a 128-key tile (n > 128): {} of {} ({:.0f}%)\n", property, counts.first,
                               counts.second, 100.0 * counts.first / counts.second);
}

/// What the run's cases exercised (properties/coverage.hpp): per encoder and operation, the forms
/// no case drew, or that every one was.
void print_coverage(const VerifyRun& run) {
  for (const std::string& line : coverage_lines(coverage_gaps(run.results, /*pinned=*/false)))
    std::cout << line << "\n";
}

nlohmann::json coverage_json(const VerifyRun& run) {
  nlohmann::json rows = nlohmann::json::array();
  for (const CoverageGap& g : coverage_gaps(run.results, /*pinned=*/false))
    rows.push_back({{"encoder", g.encoder}, {"op", op_name(g.op)}, {"cases", g.cases}, {"never_exercised", g.never}});
  return rows;
}

}  // namespace

void print_table(const VerifyRun& run) {
  std::size_t width = 17;  // the encoder column fits the longest name (a plugin names itself)
  for (const auto& r : run.results) width = std::max(width, r.encoder.size());
  std::cout << fmt::format("{:<36} {:<{}} {:<5} {:>6} {:>12} {:>12}  {}\n", "property", "encoder", width, "dtype",
                           "cases", "max err (u)", "bound (u)", "verdict");
  // Skips are grouped by encoder and reason, one line each after the table: a plugin that offers
  // two operations would otherwise bury its results under a hundred rows of what it does not.
  std::vector<std::pair<std::pair<std::string, std::string>, std::vector<std::string>>> skipped;
  for (const auto& r : run.results) {
    if (r.verdict == Verdict::skip) {
      const auto key = std::pair{r.encoder, r.message};
      auto it = std::find_if(skipped.begin(), skipped.end(), [&](const auto& g) { return g.first == key; });
      if (it == skipped.end()) it = skipped.insert(skipped.end(), {key, {}});
      if (std::find(it->second.begin(), it->second.end(), r.property) == it->second.end())
        it->second.push_back(r.property);
      continue;
    }
    const std::string bound = (at_least(r) ? "> " : "") + number(r.bound_u);
    std::cout << fmt::format("{:<36} {:<{}} {:<5} {:>6} {:>12} {:>12}  {}\n", r.property, r.encoder, width,
                             dtype_name(r.dtype), r.cases, number(r.max_error_u), bound, verdict_name(r.verdict));
  }
  for (const auto& [key, properties] : skipped)
    std::cout << fmt::format("skipped on {}: {} ({} propert{}: {})\n", key.first, key.second, properties.size(),
                             properties.size() == 1 ? "y" : "ies", fmt::join(properties, ", "));
  print_nontrivial(run);
  print_long_attention(run);
  print_coverage(run);
}

std::string replay_command(const PropertyResult& r, const VerifyRun& run, const VerifyOptions& o) {
  if (!o.dump.empty()) return fmt::format("{} validate --dump {}", o.argv0, o.dump);
  if (!o.plugin.empty())
    return fmt::format("{} validate --plugin {} --property {} --dtype {} --seed {} --cases {}{}", o.argv0, o.plugin,
                       r.property, dtype_name(r.dtype), run.seed, run.cases, o.ftz ? " --ftz" : "");
  return fmt::format("{} verify --backend {} --property {} --dtype {} --seed {} --cases {}{}", o.argv0, r.encoder,
                     r.property, dtype_name(r.dtype), run.seed, run.cases, o.ftz ? " --ftz" : "");
}

void print_failures(const VerifyRun& run, const VerifyOptions& o) {
  for (const auto& r : run.results) {
    if (r.verdict != Verdict::fail && r.verdict != Verdict::crash) continue;
    if (r.verdict == Verdict::crash) {  // the case the child was running, as it noted it: not shrunk
      std::cout << fmt::format("\nCRASH {} / {} / {}\n", r.property, r.encoder, dtype_name(r.dtype));
      if (!r.counterexample.empty()) std::cout << "  while running: " << r.counterexample << "\n";
    } else {
      std::cout << fmt::format("\nFAIL {} / {} / {} after {} cases\n", r.property, r.encoder, dtype_name(r.dtype),
                               r.cases);
      if (!r.counterexample.empty()) std::cout << "  counterexample (shrunk): " << r.counterexample << "\n";
      // Two numbers, not one: where shrinking ended up, and the worst any case reached.
      if (!std::isnan(r.counterexample_error_u))
        std::cout << fmt::format(
            "  error: {} u at the counterexample{}, {} u at worst over all {} cases (bound {} u there)\n",
            number(r.counterexample_error_u),
            std::isnan(r.counterexample_bound_u) ? ""
                                                 : fmt::format(" (its bound {} u)", number(r.counterexample_bound_u)),
            number(r.max_error_u), r.cases, number(r.bound_u));
    }
    std::cout << "  " << r.message << "\n";
    for (const auto& other : r.other_rules)
      std::cout << fmt::format("  also under {}: {}{}\n    {}\n", other.rule, other.counterexample,
                               std::isnan(other.counterexample_error_u)
                                   ? ""
                                   : fmt::format(" (error {} u)", number(other.counterexample_error_u)),
                               other.message);
    std::cout << "  replay: " << replay_command(r, run, o) << "\n";
  }
}

nlohmann::json results_json(const VerifyRun& run, const VerifyOptions& o) {
  nlohmann::json results = nlohmann::json::array();
  for (const auto& r : run.results) {
    nlohmann::json j = result_json(r, at_least(r) ? Direction::at_least : Direction::at_most);
    if (r.verdict == Verdict::fail || r.verdict == Verdict::crash) j["replay"] = replay_command(r, run, o);
    results.push_back(j);
  }
  return results;
}

void write_file_atomically(const std::string& path, const std::string& text, std::string_view flag) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp);
    f << text;
    if (!f) throw UsageError(fmt::format("cannot write {} file '{}'", flag, path));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw UsageError(fmt::format("cannot write {} file '{}'", flag, path));
}

void write_json_file(const std::string& path, const nlohmann::json& doc) {
  write_file_atomically(path, doc.dump(2) + "\n", "--json");
}

void write_json(const VerifyRun& run, const VerifyOptions& o) {
  nlohmann::json doc = {{"seed", run.seed},
                        {"cases", run.cases},
                        {"elapsed_s", run.seconds},
                        {"ftz", o.ftz},
                        {"results", results_json(run, o)},
                        {"coverage", coverage_json(run)}};
  if (!run.extra_json.empty()) doc.update(nlohmann::json::parse(run.extra_json));
  write_json_file(o.json, doc);
}

}  // namespace pecheck::cli
