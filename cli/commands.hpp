// The subcommands of `pecheck` and what they share.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/property.hpp"
#include "interface/backend.hpp"

namespace pecheck::cli {

/// Bad usage or bad input: one line on stderr, exit status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct VerifyOptions {
  std::string backend = "all";
  std::string property = "*";
  std::string dtype = "all";
  long long cases = 100;
  std::optional<std::uint64_t> seed;
  std::string json;
  std::string junit;
  std::string shard;  ///< "I/N": run only the units u with u mod N == I (parsed into shard_*)
  std::size_t shard_index = 0, shard_count = 1;
  bool quiet = false;
  double timeout_s = 300;
  std::string argv0 = "build/pecheck";
  std::string plugin;    ///< validate --plugin: replay commands name it
  std::string dump;      ///< validate --dump DIR
  bool per_rule = true;  ///< a counterexample per failing scaling rule (selftest turns it off)
  /// A failure's verdict only: no shrinking, no hint at its cause (selftest's mutants, where a kill
  /// needs one failure and nothing prints its counterexample)
  bool verdict_only = false;
  bool ftz = false;  ///< --ftz: the encoder's platform flushes subnormals to zero (RunParams::ftz)
  /// What a plugin declares its attention takes (plugin::attention_pins), or null (RunParams::pins).
  std::shared_ptr<const Pins> pins;
  int threads = 0;  ///< --threads: pecheck's own kernels' threads (impl/parallel.hpp); 0: the default
  /// validate: the accuracy contract agreement is judged by; empty: --dump judges exact, --plugin
  /// climbs the contract ladder (the strongest met, cli/contract_run.hpp)
  std::string contract;
};

struct VerifyRun {
  std::uint64_t seed = 0;
  int cases = 0;
  double seconds = 0;
  std::vector<PropertyResult> results;
  std::chrono::system_clock::time_point started = std::chrono::system_clock::now();
  std::size_t unit = 0;    ///< units (property x encoder x dtype) enumerated so far, across backends
  std::size_t total = 0;   ///< units this run (this shard) will report, for the progress display
  std::string extra_json;  ///< a JSON object whose keys --json adds at the top level (validate's profiles)
};

/// `pecheck manifest --from-hf-config FILE [--layer-type NAME]`: prints a dump manifest's
/// convention from a model's config.json, the layer type's RoPE when its rope_parameters is keyed
/// by layer type (cli/manifest.cpp).
int manifest_from_hf_config(const std::string& path, const std::optional<std::string>& layer_type);

/// Runs the selection; throws UsageError for a bad selection. Returns the process exit status.
int verify(VerifyOptions o);
/// Runs the catalogue against every mutant and every correct encoder; prints the kill matrix.
int selftest(VerifyOptions o);
/// Runs the selection and writes the self-contained HTML page (report_html.cpp) to path.
int report_html(VerifyOptions o, const std::string& path);

/// Shared by verify and selftest (verify.cpp).
std::vector<const Backend*> select_backends(const std::string& name);
std::vector<const Property*> select_properties(const std::string& glob);
std::vector<DType> select_dtypes(const std::string& name);
/// Fails now, not after the run, on a report path that cannot be written (UsageError).
void check_writable(const std::string& path, std::string_view flag);
/// Validates the options shared by verify and selftest (and parses --shard into o).
void check_common_options(VerifyOptions& o);
/// How many units the selection holds for this shard.
std::size_t count_units(const std::vector<const Backend*>& backends, const std::vector<const Property*>& properties,
                        const std::vector<DType>& dtypes, const VerifyOptions& o);
/// Chooses the seed (given or random), prints it, and starts an empty run.
VerifyRun start_run(const VerifyOptions& o, std::string_view command);
/// Why a property x dtype is not run against an encoder (a skip result), or nothing.
using SkipRule = std::function<std::optional<std::string>(const Property&, DType)>;
/// One property x dtype against a backend in a child process of its own (a crash is a result),
/// its wall time in `seconds`.
/// The run's parameters every property of it shares: seed, cases, per-rule counterexamples, --ftz.
RunParams run_params(const VerifyRun& run, const VerifyOptions& o);
PropertyResult run_timed(const Property& p, const Backend& b, DType dt, const RunParams& params,
                         const VerifyOptions& o);
/// Every selected property x dtype against one backend, each in a child process, into run.
void run_catalogue(const Backend& b, const std::vector<const Property*>& properties, const std::vector<DType>& dtypes,
                   const VerifyOptions& o, VerifyRun& run, const SkipRule& skip = {});
/// Prints the table, the failures and the summary line, writes --json/--junit; the exit status.
int conclude(VerifyRun& run, const VerifyOptions& o, std::string_view command);
/// pecheck validate --plugin: the catalogue against a third-party encoder (validate.cpp).
int validate(VerifyOptions o);
/// pecheck golden: reference inputs and outputs as NPY (golden.cpp).
struct GoldenOptions {
  std::string family, convention, positions, out, dtype = "f32";
  int dim = 64;   ///< head_dim (rope) or d_model (sinusoidal)
  int heads = 2;  ///< rope
  std::uint64_t seed = 1;
};
int golden(const GoldenOptions& g);
/// pecheck validate --dump: framework dumps, the convention fitted (validate_dump.cpp).
int validate_dump(VerifyOptions o);
int list(bool json);

/// Report rendering (report.cpp).
void print_table(const VerifyRun& run);
void print_failures(const VerifyRun& run, const VerifyOptions& o);
std::string replay_command(const PropertyResult& r, const VerifyRun& run, const VerifyOptions& o);
/// The documented per-result objects of a run (docs/json-schema.md).
nlohmann::json results_json(const VerifyRun& run, const VerifyOptions& o);
/// Writes text to path atomically (a temporary file renamed into place): nothing half-written;
/// a failure is a UsageError naming the flag.
void write_file_atomically(const std::string& path, const std::string& text, std::string_view flag);
/// Writes a JSON document atomically.
void write_json_file(const std::string& path, const nlohmann::json& doc);
/// The verify report: {seed, cases, elapsed_s, results}.
void write_json(const VerifyRun& run, const VerifyOptions& o);
/// The run as JUnit XML (junit.cpp; docs/junit.md), and written atomically to o.junit.
std::string junit_document(const VerifyRun& run, const VerifyOptions& o, std::string_view command);
void write_junit(const VerifyRun& run, const VerifyOptions& o, std::string_view command);

}  // namespace pecheck::cli
