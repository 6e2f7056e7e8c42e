// pecheck: property-based verification of positional encodings.
// Exit status: 0 every property held, 1 one failed, 2 bad usage or input, 3 an encoder crashed.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <iostream>

#include "cli/commands.hpp"
#include "impl/parallel.hpp"

namespace {

/// The selection and run flags that verify, selftest and report share (selftest has no
/// --backend: it runs every encoder and every mutant).
void add_run_options(CLI::App* cmd, pecheck::cli::VerifyOptions& o, bool backend, const char* quiet_help) {
  if (backend)
    cmd->add_option("--backend", o.backend, "Encoder to check (a name from `pecheck list`, or all)")
        ->capture_default_str();
  cmd->add_option("--property", o.property, "Glob over property ids, e.g. 'rope.*'")->capture_default_str();
  cmd->add_option("--dtype", o.dtype, "Storage dtype: f32, bf16, f16 or all")->capture_default_str();
  cmd->add_option("--cases", o.cases, "Cases per property x encoder x dtype (>= 1)")->capture_default_str();
  cmd->add_option("--seed", o.seed, "Seed of the run (default: random, printed)");
  cmd->add_option("--timeout", o.timeout_s, "Seconds before a silent encoder is killed and reported as hung")
      ->capture_default_str();
  cmd->add_flag("--quiet", o.quiet, quiet_help);
  cmd->add_option("--threads", o.threads,
                  "Threads each of pecheck's own kernel calls may use (default: PECHECK_THREADS, else every CPU "
                  "this process may run on); outputs are bitwise the same at any count")
      ->check(CLI::Range(1, pecheck::parallel::kMaxThreads));
  cmd->add_flag("--ftz", o.ftz,
                "The encoder's platform flushes subnormals to zero (XLA on CPU, fast-math CUDA): draw no input "
                "below FLT_MIN; every law is judged as before");
}

}  // namespace

int main(int argc, char** argv) {
  using namespace pecheck::cli;
  CLI::App app{"pecheck: checks positional-encoding kernels against theorems and a 50-digit reference"};
  app.require_subcommand(1);

  VerifyOptions vo, so, ro;
  vo.argv0 = so.argv0 = ro.argv0 = argv[0];
  auto* verify_cmd = app.add_subcommand("verify", "Run the property catalogue against encoders under test");
  add_run_options(verify_cmd, vo, true, "Print only failures and the summary line");
  verify_cmd->add_option("--json", vo.json, "Write the JSON report to FILE");
  verify_cmd->add_option("--junit", vo.junit, "Write a JUnit XML report to FILE (one testcase per property x dtype)");
  verify_cmd->add_option("--shard", vo.shard,
                         "Run shard I of N (I/N, 0-based; needs --seed): the shards' union is the run");

  auto* selftest_cmd = app.add_subcommand(
      "selftest",
      "Run the catalogue against every mutant (known real bugs) and every correct encoder; with --property, the "
      "mutants named for the selected properties");
  add_run_options(selftest_cmd, so, false, "Print only the kill matrix and the summary line");
  selftest_cmd->add_option("--json", so.json, "Write {seed, cases, mutants: [...], results: [...]} to FILE");

  VerifyOptions va;
  va.argv0 = argv[0];
  auto* validate_cmd = app.add_subcommand(
      "validate", "Check a third-party encoder (a plugin implementing pecheck/encoder_abi.h) against the catalogue");
  auto* plugin_opt = validate_cmd->add_option("--plugin", va.plugin, "Shared library exporting pecheck_plugin_v1");
  auto* dump_opt = validate_cmd->add_option(
      "--dump", va.dump, "Directory of a framework's dump (manifest.json + NPY/safetensors), or of several");
  plugin_opt->excludes(dump_opt);
  add_run_options(validate_cmd, va, false, "Print only failures and the summary line");
  validate_cmd
      ->add_option("--contract", va.contract,
                   "The accuracy contract agreement is judged by: exact (2u), dtype-trig (cos/sin stored in the "
                   "dtype) or fp32-angles (frequencies and angles in fp32) for a position encoding, rounded-p "
                   "(attention's softmax probabilities rounded to the dtype before P.V) for attention; an operation "
                   "it does not govern climbs its own. Default: --dump judges exact and says which contract is "
                   "met; --plugin judges the strongest it meets, every law under it")
      ->check(CLI::IsMember({"exact", "dtype-trig", "fp32-angles", "rounded-p"}));
  validate_cmd->add_option("--json", va.json, "Write the JSON report to FILE");
  validate_cmd->add_option("--junit", va.junit, "Write a JUnit XML report to FILE");

  GoldenOptions go;
  auto* golden_cmd = app.add_subcommand(
      "golden", "Write reference inputs and outputs (NPY, in the dtype and as float64) with a manifest");
  golden_cmd->add_option("--family", go.family, "rope, mrope, rope2d, sinusoidal, alibi, t5, shaw or attention")
      ->required();
  golden_cmd->add_option("--convention", go.convention,
                         "KEY=VALUE,...: rope layout, rotary_dim, base, linear; mrope layout, rotary_dim, base, "
                         "mrope_section=T/H/W, interleaved=1, grid=RxC; rope2d layout, base, pairing, "
                         "frequencies=shared|split, columns; sinusoidal layout, frequencies, base; shaw "
                         "max_distance; attention causal, window, scale, kv_heads, queries, "
                         "pe=none|alibi|rope|t5|shaw (with rope's layout, base, rotary_dim; t5's num_buckets, "
                         "max_distance, bidirectional; shaw's max_distance)");
  golden_cmd->add_option("--positions", go.positions, "Positions: N, A:B or A:B:STEP, comma-separated")->required();
  golden_cmd->add_option("--out", go.out, "Directory to write (must not exist, or be empty)")->required();
  golden_cmd->add_option("--dtype", go.dtype, "Storage dtype of the inputs and outputs: f32, bf16 or f16")
      ->capture_default_str();
  golden_cmd->add_option("--dim", go.dim, "head_dim (rope, mrope, rope2d, shaw, attention) or d_model (sinusoidal)")
      ->capture_default_str();
  golden_cmd->add_option("--heads", go.heads, "Heads per token (rope, mrope, rope2d; attention's query heads)")
      ->capture_default_str();
  golden_cmd->add_option("--seed", go.seed, "Seed of the random inputs (rope, mrope, rope2d, t5, shaw, attention)")
      ->capture_default_str();

  std::string html;
  auto* report_cmd = app.add_subcommand("report", "Run the catalogue and draw it: one self-contained HTML page");
  add_run_options(report_cmd, ro, true, "No progress on stderr");
  report_cmd->add_option("--html", html, "Write the page to FILE")->required();
  auto* report_plugin = report_cmd->add_option(
      "--plugin", ro.plugin, "Draw a plugin instead of pecheck's backends: its verdicts and its RoPE profile");
  report_cmd->add_option("--dump", ro.dump, "Draw the dumps in DIR instead (what validate --dump reads)")
      ->excludes(report_plugin);

  std::string hf_config;
  auto* manifest_cmd = app.add_subcommand(
      "manifest", "Print a dump manifest's RoPE convention from a model's config.json (HF's vocabulary)");
  manifest_cmd->add_option("--from-hf-config", hf_config, "The model's config.json")->required();
  std::optional<std::string> layer_type;
  manifest_cmd->add_option("--layer-type", layer_type,
                           "The layer type whose RoPE to print, when rope_parameters is keyed by layer type "
                           "(full_attention, sliding_attention, ...)");

  bool list_json = false;
  auto* list_cmd = app.add_subcommand("list", "List the properties and the backends");
  list_cmd->add_flag("--json", list_json, "Print JSON: {properties: [...], backends: [...]}");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "pecheck: " << e.what() << " (see pecheck --help)\n";
    return 2;
  }
  try {
    for (const VerifyOptions* o : {&vo, &so, &va, &ro})
      if (o->threads > 0) pecheck::parallel::set_threads(o->threads);
    try {
      (void)pecheck::parallel::threads();  // a malformed PECHECK_THREADS: a usage error before any run
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    if (*verify_cmd) return verify(vo);
    if (*list_cmd) return list(list_json);
    if (*golden_cmd) return golden(go);
    if (*validate_cmd) {
      if (va.plugin.empty() && va.dump.empty()) throw UsageError("validate needs --plugin LIB or --dump DIR");
      return va.dump.empty() ? validate(va) : validate_dump(va);
    }
    if (*selftest_cmd) return selftest(so);
    if (*report_cmd) return report_html(ro, html);
    if (*manifest_cmd) return manifest_from_hf_config(hf_config, layer_type);
  } catch (const UsageError& e) {
    std::cerr << "pecheck: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "pecheck: internal error: " << e.what() << "\n";
    return 2;
  }
  return 2;
}
