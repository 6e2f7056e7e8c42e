// pecheck validate --plugin lib.so: the catalogue against a third-party native encoder. The
// plugin is probed and run only in child processes; what it does not offer is skipped with the
// reason, and an operation whose convention it does not state gets only the convention-free
// (family) properties. Its RoPE and sinusoid are then profiled per octave of position
// (cli/plugin_profile.cpp).
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.hpp"
#include "cli/plugin_profile.hpp"
#include "plugin/plugin_host.hpp"

namespace pecheck::cli {

namespace {

std::string describe(const plugin::Declaration& d) {
  std::string ops, dtypes;
  for (Op op : {Op::sinusoidal_table, Op::learned_add, Op::rope_apply, Op::alibi_bias, Op::shaw_scores, Op::t5_bias,
                Op::attention}) {
    const int bit = *plugin::abi_op(op);
    if (!(d.ops >> bit & 1u)) continue;
    ops += fmt::format("{}{} ({})", ops.empty() ? "" : ", ", op_name(op),
                       d.conventions >> bit & 1u ? "honours the spec" : "opaque convention");
  }
  for (DType dt : kAllDTypes)
    if (d.dtypes >> static_cast<int>(dt) & 1u) dtypes += fmt::format("{}{}", dtypes.empty() ? "" : " ", dtype_name(dt));
  return fmt::format("plugin {} ({}): {}; stores {}", d.name, d.path, ops, dtypes);
}

/// What the declaration alone says about a property x dtype, before any child is started.
std::optional<std::string> skip_reason(const plugin::Declaration& d, const Property& p, DType dt) {
  if (auto why = plugin::declined(d, p.op, dt)) return why;
  if (!(d.conventions >> *plugin::abi_op(p.op) & 1u) && !p.convention_free)
    return fmt::format("{} states no convention for {}: only convention-free properties apply", d.name, op_name(p.op));
  return std::nullopt;
}

}  // namespace

int validate(VerifyOptions o) {
  check_common_options(o);
  const auto properties = select_properties(o.property);
  const auto dtypes = select_dtypes(o.dtype);
  plugin::Declaration d;
  try {
    d = plugin::probe(o.plugin, o.timeout_s);
  } catch (const plugin::LoadError& e) {
    throw UsageError(e.what());
  } catch (const plugin::LoadCrash& e) {
    std::cerr << "pecheck: " << e.what() << "\n";
    return 3;
  }
  const Backend b = plugin::as_backend(d);
  VerifyRun run = start_run(o, "validate");
  std::cout << describe(d) << "\n";
  run.total = count_units({&b}, properties, dtypes, o);
  const auto start = std::chrono::steady_clock::now();
  run_catalogue(b, properties, dtypes, o, run, [&](const Property& p, DType dt) { return skip_reason(d, p, dt); });
  // Where the error first exceeds the bound, octave by octave, read like a dump.
  const std::vector<Profile> profiles = plugin_profiles(d, b, dtypes, o.timeout_s);
  print_profiles(profiles, o.quiet);
  run.extra_json = nlohmann::json{{"profiles", profiles_json(profiles)}}.dump();
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "\n";
  return conclude(run, o, "validate");
}

}  // namespace pecheck::cli
