// validate --plugin's profile: the plugin's rope_apply and sinusoidal_table read like a dump,
// per octave of position up to 2^24 - 1 (cli/plugin_profile.cpp).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/dump_report.hpp"
#include "harness/property.hpp"
#include "interface/backend.hpp"
#include "interface/operations.hpp"

namespace pecheck::plugin {
struct Declaration;
}

namespace pecheck::cli {

/// The RoPE the profile asks for: HF's default (half-split, head_dim 128, base 10000).
inline const RopeSpec kProfileRope{.head_dim = 128, .rotary_dim = 128, .base = 10000, .layout = RopeLayout::half_split};

struct Profile {
  Op op = Op::rope_apply;
  DType dtype = DType::f32;
  std::optional<Checked> checked;  ///< the outputs read and measured
  std::string failure;             ///< else why the plugin did not return them (a crash, a hang)
};

/// Opens o.plugin in a child: its declaration, or nothing when it crashed while loading (said
/// on stderr; the caller exits 3). An unusable plugin is a UsageError. A platform convention the
/// plugin declares becomes the run's: PECHECK_FLAG_FTZ sets o.ftz, as --ftz would.
std::optional<plugin::Declaration> probe_plugin(VerifyOptions& o);

/// "plugin NAME (PATH): ops (honours the spec | opaque convention); stores dtypes".
std::string describe_plugin(const plugin::Declaration& d);
/// What the declaration alone says about a property x dtype, before any child is started: the
/// operation is not offered, or its convention is not stated and the property needs one.
std::optional<std::string> plugin_skip_reason(const plugin::Declaration& d, const Property& p, DType dt);

/// One profile per operation (rope_apply, sinusoidal_table) and dtype the plugin offers, each
/// computed in a child process.
std::vector<Profile> plugin_profiles(const plugin::Declaration& decl, const Backend& b,
                                     const std::vector<DType>& dtypes, double timeout_s);
void print_profiles(const std::vector<Profile>& profiles, bool quiet);
nlohmann::json profiles_json(const std::vector<Profile>& profiles);

}  // namespace pecheck::cli
