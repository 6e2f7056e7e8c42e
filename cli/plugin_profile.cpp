// validate --plugin's profile: a plugin run read like a dump run. The plugin's rope_apply and
// sinusoidal_table are called, in a child process, at every position from 0 to 40 and at four
// positions an octave up to 2^24 - 1; their outputs go through validate --dump's reading
// (cli/dump_report.hpp): the convention read from the data (an opaque plugin) or the spec it was
// asked for (one that honours specs), the error per octave of position, where it first exceeds
// the bound, and the accuracy contracts met.
#include "cli/plugin_profile.hpp"

#include <fmt/format.h>

#include <iostream>
#include <random>

#include "cli/commands.hpp"
#include "harness/isolation.hpp"
#include "harness/tolerance.hpp"
#include "plugin/plugin_host.hpp"

namespace pecheck::cli {

namespace {

using dumpcheck::Dump;
using dumpcheck::Kind;

/// The profile's spec: what a model most often asks for (HF's default RoPE, Vaswani's sinusoid).
constexpr int kHeads = 2;
const SinusoidalSpec kSinusoid{.d_model = kProfileRope.head_dim};

std::vector<std::int64_t> profile_positions() {
  std::vector<std::int64_t> p;
  for (std::int64_t i = 0; i <= 40; ++i) p.push_back(i);
  for (int k = 6; k <= 24; ++k)
    for (std::int64_t q = 0; q < 4; ++q) {
      const std::int64_t lo = std::int64_t{1} << (k - 1);
      p.push_back(std::min(lo + q * lo / 4, tol::kMaxPosition));
    }
  p.push_back(tol::kMaxPosition);
  std::sort(p.begin(), p.end());
  p.erase(std::unique(p.begin(), p.end()), p.end());
  return p;
}

/// The encoder's outputs for the dump d (x already drawn), computed in a child; or why not.
std::optional<std::string> run_in_plugin(const Backend& b, Dump& d, double timeout_s) {
  const ChildOutcome out = run_in_child(
      [&] {
        const std::unique_ptr<Encoder> enc = b.make();
        std::vector<float> y(d.kind == Kind::rope ? d.x.begin() : d.y.begin(),
                             d.kind == Kind::rope ? d.x.end() : d.y.end());
        if (d.kind == Kind::rope)
          enc->run(RopeApply{kProfileRope, d.dtype, d.heads, d.positions, y});
        else
          enc->run(SinusoidalTable{kSinusoid, d.dtype, d.positions, y});
        return nlohmann::json(y).dump();
      },
      timeout_s);
  if (!out.reported) return out.failure;
  const auto y = nlohmann::json::parse(out.payload).get<std::vector<double>>();
  d.y = y;
  return std::nullopt;
}

Dump profile_dump(Kind kind, DType dt, const std::string& plugin) {
  Dump d;
  d.kind = kind;
  d.dtype = dt;
  d.width = kProfileRope.head_dim;
  d.positions = profile_positions();
  d.dir = kind == Kind::rope ? "rope_apply" : "sinusoidal_table";
  std::mt19937_64 rng(0x9e3779b97f4a7c15ull);
  std::uniform_real_distribution<double> uniform(-1, 1);
  if (kind == Kind::rope) {
    d.heads = kHeads;
    d.encoder = fmt::format("{} at {}", plugin, kProfileRope.describe());
    for (std::size_t i = 0; i < d.positions.size() * kHeads * static_cast<std::size_t>(d.width); ++i)
      d.x.push_back(round_to(dt, uniform(rng)));
  } else {
    d.encoder = fmt::format("{} at {}", plugin, kSinusoid.describe());
    d.y.assign(d.positions.size() * static_cast<std::size_t>(d.width), 0.0);
  }
  return d;
}

}  // namespace

std::optional<plugin::Declaration> probe_plugin(VerifyOptions& o) {
  try {
    plugin::Declaration d = plugin::probe(o.plugin, o.timeout_s);
    o.ftz = o.ftz || d.flushes_subnormals();  // a platform convention the plugin declares, as --ftz states it
    o.pins = plugin::attention_pins(d);       // cases drawn inside what its attention declares
    return d;
  } catch (const plugin::LoadError& e) {
    throw UsageError(e.what());
  } catch (const plugin::LoadCrash& e) {
    std::cerr << "pecheck: " << e.what() << "\n";
    return std::nullopt;
  }
}

std::string describe_plugin(const plugin::Declaration& d) {
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
  const std::string attention = plugin::attention_declaration_text(d);
  return fmt::format("plugin {} ({}): {}; stores {}{}{}", d.name, d.path, ops, dtypes,
                     d.flushes_subnormals() ? "; flushes subnormals to zero (declared: PECHECK_FLAG_FTZ)" : "",
                     attention.empty() ? "" : "; " + attention);
}

std::optional<std::string> plugin_skip_reason(const plugin::Declaration& d, const Property& p, DType dt) {
  if (auto why = plugin::declined(d, p.op, dt)) return why;
  if (!(d.conventions >> *plugin::abi_op(p.op) & 1u) && !p.convention_free)
    return fmt::format("{} states no convention for {}: only convention-free properties apply", d.name, op_name(p.op));
  return std::nullopt;
}

std::vector<Profile> plugin_profiles(const plugin::Declaration& decl, const Backend& b,
                                     const std::vector<DType>& dtypes, double timeout_s) {
  std::vector<Profile> out;
  for (const auto& [op, kind] :
       {std::pair{Op::rope_apply, Kind::rope}, std::pair{Op::sinusoidal_table, Kind::sinusoidal}})
    for (DType dt : dtypes) {
      if (plugin::declined(decl, op, dt)) continue;
      Profile p;
      p.op = op;
      p.dtype = dt;
      Dump d = profile_dump(kind, dt, decl.name);
      // A plugin that honours the spec is held to the one it was asked for; an opaque one is read.
      const bool honours = decl.conventions >> *plugin::abi_op(op) & 1u;
      if (honours && kind == Kind::rope) {
        d.rope.layout = kProfileRope.layout, d.rope.rotary_dim = kProfileRope.rotary_dim,
        d.rope.base = kProfileRope.base;
        d.rope.rule = RopeScalingKind::none;
      } else if (honours) {
        d.sinusoidal.layout = kSinusoid.layout, d.sinusoidal.base = kSinusoid.base;
        d.sinusoidal.frequencies = kSinusoid.frequencies;
      }
      if (auto failure = run_in_plugin(b, d, timeout_s)) {
        p.failure = *failure;
      } else {
        p.checked = check_dump(std::move(d), tol::Contract::exact);
      }
      out.push_back(std::move(p));
    }
  return out;
}

void print_profiles(const std::vector<Profile>& profiles, bool quiet) {
  for (const Profile& p : profiles) {
    if (!p.checked) {
      std::cout << fmt::format("\nprofile {} ({}): the plugin did not finish: {}\n", op_name(p.op), dtype_name(p.dtype),
                               p.failure);
      continue;
    }
    print_checked(*p.checked, quiet, "profile");
  }
}

nlohmann::json profiles_json(const std::vector<Profile>& profiles) {
  nlohmann::json a = nlohmann::json::array();
  for (const Profile& p : profiles) {
    nlohmann::json j = {{"operation", op_name(p.op)}, {"dtype", dtype_name(p.dtype)}};
    if (!p.checked) {
      j["failure"] = p.failure;
    } else {
      nlohmann::json checks = nlohmann::json::array();
      for (const auto& m : p.checked->measurements) {
        nlohmann::json c = checked_json(*p.checked, m);
        c["property"] = m.property;
        c["max_error_u"] = m.max_u;
        c["holds"] = m.holds();
        checks.push_back(c);
      }
      j["checks"] = checks;
    }
    a.push_back(j);
  }
  return a;
}

}  // namespace pecheck::cli
