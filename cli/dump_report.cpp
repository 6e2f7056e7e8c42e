#include "cli/dump_report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>

#include "cli/commands.hpp"
#include "dumpcheck/alibi_dump.hpp"
#include "dumpcheck/attention_dump.hpp"
#include "dumpcheck/convention_fit.hpp"
#include "dumpcheck/mrope_dump.hpp"
#include "dumpcheck/rope2d_dump.hpp"
#include "dumpcheck/rope_manifest.hpp"
#include "dumpcheck/shaw_dump.hpp"
#include "dumpcheck/t5_dump.hpp"
#include "harness/flush_to_zero.hpp"
#include "tensorfiles/array.hpp"

namespace pecheck::cli {

using namespace dumpcheck;

namespace {

nlohmann::json spec_json(const RopeSpec& s) {
  const RopeScaling& sc = s.scaling;
  nlohmann::json j = {{"layout", layout_name(s.layout)}, {"head_dim", s.head_dim},
                      {"rotary_dim", s.rotary_dim},      {"base", s.base},
                      {"rule", scaling_name(sc.kind)},   {"magnitude", s.magnitude()}};
  if (sc.kind != RopeScalingKind::none) j["factor"] = sc.factor;
  if (sc.kind != RopeScalingKind::none && sc.kind != RopeScalingKind::linear && sc.kind != RopeScalingKind::ntk)
    j["original_max_position"] = sc.original_max_position;
  if (sc.kind == RopeScalingKind::dynamic_ntk || sc.kind == RopeScalingKind::longrope) j["seq_len"] = sc.seq_len;
  if (sc.kind == RopeScalingKind::longrope)
    j["short_factor"] = sc.short_factor, j["long_factor"] = sc.long_factor, j["attention_factor"] = s.magnitude();
  if (sc.kind == RopeScalingKind::yarn) {
    j["beta_fast"] = sc.beta_fast, j["beta_slow"] = sc.beta_slow, j["truncate"] = sc.truncate;
    if (sc.attention_factor != 0) j["attention_factor"] = sc.attention_factor;
    if (sc.mscale != 0 || sc.mscale_all_dim != 0) j["mscale"] = sc.mscale, j["mscale_all_dim"] = sc.mscale_all_dim;
  }
  if (sc.rotated_pairs != 0) j["rotated_pairs"] = sc.rotated_pairs;  // HF's proportional rule
  if (sc.kind == RopeScalingKind::llama3)
    j["low_freq_factor"] = sc.low_freq_factor, j["high_freq_factor"] = sc.high_freq_factor;
  return j;
}

/// The reading as fields: the named spec (null when no rule explains the pairs), whether it is
/// ambiguous, the measured magnitude, and every rule tried with its worst pair.
nlohmann::json reading_json(const RuleReading& r) {
  nlohmann::json tried = nlohmann::json::array();
  for (const RuleCandidate& c : r.tried)
    tried.push_back({{"rule", scaling_name(c.spec.scaling.kind)},
                     {"explains", c.explains},
                     {"worst_in_tolerances", std::isfinite(c.worst) ? nlohmann::json(c.worst) : nlohmann::json()},
                     {"worst_pair", c.worst_pair},
                     {"text", c.text}});
  return {{"spec", r.spec ? spec_json(*r.spec) : nlohmann::json()},
          {"ambiguous", r.ambiguous},
          {"measured_magnitude", r.gain},
          {"tried", tried}};
}

/// The agreement result when no convention fits: a finding about the encoder.
Measurement no_fit(const std::string& property, const Dump& d, const FitError& e) {
  Measurement m;
  m.property = property;
  m.bound_u = d.kind == Kind::sinusoidal ? tol::sinusoidal_entry(d.dtype) : tol::rope_pair(d.dtype);
  m.bound_text = fmt::format("{:.4g} u", m.bound_u);
  m.max_u = m.max_ratio = std::numeric_limits<double>::infinity();
  m.where = e.what();
  m.summary = fmt::format("no convention to compare under: {}", e.what());
  return m;
}

std::string shape_text(const Dump& d) {
  if (d.kind == Kind::rope) return fmt::format("RoPE, {} tokens x {} heads x {}", d.tokens(), d.heads, d.width);
  if (d.kind == Kind::shaw)
    return fmt::format("Shaw scores, {} x {} tokens, head_dim {}, table of {} rows", d.tokens(), d.tokens(), d.width,
                       d.max_len);
  if (d.kind == Kind::mrope)
    return fmt::format("M-RoPE, {} tokens x {} heads x {}, positions on 3 axes", d.tokens(), d.heads, d.width);
  if (d.kind == Kind::rope2d)
    return fmt::format("2-D RoPE, {} tokens x {} heads x {}, at (row, column)", d.tokens(), d.heads, d.width);
  if (d.kind == Kind::attention)
    return fmt::format("attention, {} queries x {} keys x {} heads x {}",
                       d.x.size() / static_cast<std::size_t>(d.batch * d.heads * d.width),
                       d.tokens() / static_cast<std::size_t>(d.batch), d.heads, d.width);
  if (d.kind == Kind::learned) return fmt::format("learned, {} tokens x {}", d.tokens(), d.width);
  if (d.kind == Kind::t5)
    return fmt::format("T5 bias, {} heads x {} x {}, {} buckets", d.heads, d.tokens(), d.tokens(), d.max_len);
  if (d.kind == Kind::alibi)
    return d.key_bias ? fmt::format("ALiBi key bias, {} heads x {} positions", d.heads, d.tokens())
                      : fmt::format("ALiBi bias, {} heads x {} x {}", d.heads, d.tokens(), d.tokens());
  return fmt::format("sinusoidal table, {} positions x {}", d.tokens(), d.width);
}

nlohmann::json octaves_json(const Measurement& m) {
  nlohmann::json a = nlohmann::json::array();
  for (const Octave& o : m.octaves)
    a.push_back({{"from", o.lo},
                 {"to", o.hi},
                 {"tokens", o.tokens},
                 {"max_error_u", o.max_u},
                 {"max_abs_error", o.max_abs},
                 {"holds", o.holds()}});
  return a;
}

}  // namespace

Checked check_dump(Dump d, tol::Contract contract) {
  const gen::FlushSubnormals flush(d.ftz);  // a stated flush-to-zero platform: its flushed results too
  Checked c;
  if (d.kind == Kind::rope) {
    try {
      const RopeFit f = fit_rope(d);
      c.convention = f.text;
      c.reading = reading_json(f.reading);
      c.measurements = {rope_agreement(d, f.spec, contract), rope_norms(d, f.spec, contract)};
      c.spec = f.spec;
    } catch (const FitError& e) {
      if (e.reading) c.reading = reading_json(*e.reading);
      const RopeSpec pairing = fit_rope_pairing(d);
      if (d.rope.base) {  // a stated convention the pairs contradict: measured as stated, beside the fit
        RopeSpec stated = stated_spec(d.rope, pairing);
        if (stated.scaling.kind == RopeScalingKind::longrope && !d.positions.empty())  // HF: max(position_ids) + 1
          stated.scaling.seq_len = *std::max_element(d.positions.begin(), d.positions.end()) + 1;
        c.convention = fmt::format("as stated, {}, which the pairs contradict ({})", stated.describe(), e.what());
        c.measurements = {rope_agreement(d, stated, contract), rope_norms(d, stated, contract)};
        c.spec = stated;
      } else {
        c.convention = fmt::format("none fits ({}); pairs taken as {}, rotary_dim {}", e.what(),
                                   layout_name(pairing.layout), pairing.rotary_dim);
        c.measurements = {no_fit("rope.agrees_with_reference", d, e), rope_norms(d, pairing, contract)};
      }
    }
  } else if (d.kind == Kind::mrope) {
    try {
      const MropeFit f = fit_mrope(d);
      c.convention = f.text;
      c.measurements = {mrope_agreement(d, f, contract), rope_norms(d, f.rope, contract)};
    } catch (const FitError& e) {  // a finding: measured as far as it can be without a convention
      const RopeSpec pairing = fit_rope_pairing(d);
      c.convention = fmt::format("none fits ({}); pairs taken as {}, rotary_dim {}", e.what(),
                                 layout_name(pairing.layout), pairing.rotary_dim);
      c.measurements = {no_fit("mrope.agrees_with_reference", d, e), rope_norms(d, pairing, contract)};
    }
  } else if (d.kind == Kind::rope2d) {
    try {
      const Rope2dFit f = fit_rope2d(d);
      c.convention = f.text;
      c.measurements = rope2d_measurements(f, contract);
    } catch (const FitError& e) {
      c.convention = fmt::format("none fits ({})", e.what());
      c.measurements = {no_fit("rope2d.agrees_with_reference", d, e)};
    }
  } else if (d.kind == Kind::shaw) {
    c.convention =
        fmt::format("Shaw, K = {} (the table's 2K + 1 rows), head_dim {}, scale {}", (d.max_len - 1) / 2, d.width,
                    d.shaw_scale == 1 ? std::string("1") : fmt::format("{:.9g} (stated)", d.shaw_scale));
    Measurement m = shaw_agreement(d);
    // A table read at p_i - p_j (the relative position's sign flipped) is the family's classic bug.
    if (!m.holds() && d.max_len > 1 && shaw_agreement(d, true).holds())
      m.summary += "; the scores fit the table read at p_i - p_j instead: the relative position's sign is reversed";
    c.measurements = {m};
  } else if (d.kind == Kind::attention) {
    c.convention = attention_text(d);
    Measurement m = attention_agreement(d, contract);
    // A reading that meets no contract (not even rounded-p) is a wrong convention or a bug: read it
    // again under the conventions kernels confuse.
    if (!m.contracts->met)
      if (const std::string hint = attention_hint(d); !hint.empty()) m.summary += "; " + hint;
    c.measurements = {m};
  } else if (d.kind == Kind::alibi) {
    const std::vector<double> slopes = read_alibi_slopes(d);
    c.convention =
        fmt::format("ALiBi, {} heads, {}; slopes read: {:.6g}", d.heads,
                    d.key_bias ? "BLOOM's key bias m p_j" : "the bias -m |p_i - p_j|", fmt::join(slopes, ", "));
    c.measurements = {alibi_agreement(d), alibi_slopes_check(d, slopes)};
  } else if (d.kind == Kind::t5) {
    const T5Reading r = read_t5(d);
    c.convention = r.text;
    if (r.spec) {
      c.measurements = {t5_agreement(d, *r.spec)};
    } else {  // measured as stated (T5's defaults where not), so that the entries that differ are named
      const T5Spec as_stated{.heads = d.heads,
                             .num_buckets = d.max_len,
                             .max_distance = d.t5_max_distance.value_or(128),
                             .bidirectional = d.t5_bidirectional.value_or(true)};
      c.convention += fmt::format("; measured as {}", as_stated.describe());
      c.measurements = {t5_agreement(d, as_stated)};
    }
  } else if (d.kind == Kind::learned) {
    c.convention = fmt::format("learned table, max_len {}, d_model {} (nothing to fit)", d.max_len, d.width);
    c.measurements = {learned_agreement(d)};
  } else {
    try {
      const SinusoidalFit f = fit_sinusoidal(d);
      c.convention = f.text;
      c.measurements = {sinusoidal_agreement(d, f.spec), sinusoidal_bounds(d, f.spec)};
    } catch (const FitError& e) {
      c.convention = fmt::format("none fits ({})", e.what());
      c.measurements = {no_fit("sinusoidal.agrees_with_reference", d, e),
                        sinusoidal_bounds(d, SinusoidalSpec{.d_model = d.width})};
    }
  }
  c.dump = std::move(d);
  return c;
}

void print_checked(const Checked& c, bool quiet, std::string_view what) {
  std::cout << fmt::format("\n{} {}: {} ({}, {}{})\n  convention: {}\n", what, c.dump.dir, c.dump.encoder,
                           shape_text(c.dump), dtype_name(c.dump.dtype),
                           c.dump.ftz ? ", flushes subnormals to zero (stated)" : "", c.convention);
  for (const Measurement& m : c.measurements) {
    std::cout << fmt::format("  {:<34} {}  max {:.4g} u (bound {})\n", m.property, m.holds() ? "pass" : "FAIL", m.max_u,
                             m.bound_text);
    if (m.contracts) std::cout << "    " << m.contracts->text() << "\n";
    if (!quiet || !m.holds()) {
      std::cout << fmt::format("    {:<22} {:>7} {:>13} {:>12}\n", m.filed_by + "s", "tokens", "max err (u)",
                               "max |diff|");
      for (const Octave& o : m.octaves)
        std::cout << fmt::format("    {:<22} {:>7} {:>13.4g} {:>12.3g}{}\n", fmt::format("[{},{})", o.lo, o.hi),
                                 o.tokens, o.max_u, o.max_abs, o.holds() ? "" : "  over the bound");
    }
    std::cout << "    " << m.summary << "\n";
  }
}

DumpSetReading read_dump_set(const std::string& dir, tol::Contract contract) {
  DumpSetReading out;
  std::vector<std::string> dirs;
  try {
    dirs = find_dumps(dir);
  } catch (const tensorfiles::FormatError& e) {
    throw UsageError(e.what());
  }
  // DIR itself a dump: a bad one is exit 2 and nothing is written. A directory of dumps: each bad
  // one is set aside with its reason and the others are read.
  const bool one = dirs.size() == 1 && std::filesystem::equivalent(dirs.front(), dir);
  for (const std::string& d : dirs) {
    try {
      out.checked.push_back(check_dump(load_dump(d), contract));
    } catch (const tensorfiles::FormatError& e) {
      if (one) throw UsageError(e.what());
      out.unreadable.emplace_back(d, e.what());
    }
  }
  return out;
}

PropertyResult as_result(const Checked& c, const Measurement& m) {
  return {.property = m.property,
          .encoder = c.dump.encoder,
          .dtype = c.dump.dtype,
          .verdict = m.holds() ? Verdict::pass : Verdict::fail,
          .cases = static_cast<int>(c.dump.tokens()),
          // Every dumped token is compared with the reference: each could fail.
          .nontrivial_cases = static_cast<int>(c.dump.tokens()),
          .max_error_u = m.max_u,
          .bound_u = m.bound_u,
          .message = m.summary,
          .counterexample = m.holds() ? "" : m.where};
}

nlohmann::json checked_json(const Checked& c, const Measurement& m) {
  nlohmann::json j = {{"dump", c.dump.dir},
                      {"convention", c.convention},
                      {"ftz", c.dump.ftz},
                      {"where", m.where},
                      {"octaves", octaves_json(m)}};
  if (!c.reading.is_null()) j["reading"] = c.reading;
  if (m.contracts) {
    const ContractReading& r = *m.contracts;
    j["contract"] = {{"judged", tol::contract_name(r.judged)},
                     {"met", r.met ? nlohmann::json(tol::contract_name(*r.met)) : nlohmann::json()},
                     {"exact_to", r.exact_to ? nlohmann::json(*r.exact_to) : nlohmann::json()}};
  }
  return j;
}

}  // namespace pecheck::cli
