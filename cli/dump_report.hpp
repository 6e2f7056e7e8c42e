// validate --dump's reading of one dump (the convention read from the data or taken as stated,
// agreement per octave of position, the contracts met, the convention-free check) and its text
// and JSON renderings: also what a plugin's profile goes through (cli/plugin_profile.cpp).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dumpcheck/agreement.hpp"
#include "dumpcheck/dump_set.hpp"
#include "harness/property.hpp"
#include "harness/tolerance.hpp"

namespace pecheck::cli {

/// One dump as read and measured.
struct Checked {
  dumpcheck::Dump dump;
  std::string convention;
  nlohmann::json reading;  ///< RoPE: the convention as fields, and every rule tried
  std::vector<dumpcheck::Measurement> measurements;
  std::optional<RopeSpec> spec;  ///< RoPE: the spec agreement was measured under, if any
};

/// Reads the convention and measures the dump under it, agreement judged by `contract`.
Checked check_dump(dumpcheck::Dump d, tol::Contract contract);

/// The reading in text: "<what> <dir>: <encoder> (shape, dtype)", the convention, each check
/// with its octave table (only failing ones when quiet).
void print_checked(const Checked& c, bool quiet, std::string_view what);

/// The dumps under dir (dir itself, or each subdirectory with a manifest), read and measured,
/// and those that could not be read, with the reason. A bad dump given as dir itself, or no
/// dump at all, is a UsageError.
struct DumpSetReading {
  std::vector<Checked> checked;
  std::vector<std::pair<std::string, std::string>> unreadable;  ///< (dir, reason)
};
DumpSetReading read_dump_set(const std::string& dir, tol::Contract contract);

/// A measurement of a dump as a result row (the table, the verdict matrix, JSON, JUnit).
PropertyResult as_result(const Checked& c, const dumpcheck::Measurement& m);

/// The per-result JSON fields validate --dump adds for measurement m of c: dump, convention,
/// where, octaves, reading, contract.
nlohmann::json checked_json(const Checked& c, const dumpcheck::Measurement& m);

}  // namespace pecheck::cli
