#include "dumpcheck/mrope_dump.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>
#include <optional>
#include <vector>

#include "dumpcheck/convention_fit.hpp"
#include "dumpcheck/dump_read.hpp"
#include "dumpcheck/rope_manifest.hpp"
#include "harness/rope_measure.hpp"
#include "reference/rope.hpp"

namespace pecheck::dumpcheck {

using read::FormatError;
using Json = nlohmann::json;

namespace {

/// mrope_section of released configs (Qwen2-VL and Qwen2.5-VL; Qwen3-VL; GLM-4.1V; HunYuan-VL 4).
constexpr std::array<std::array<int, 3>, 4> kReleasedSections = {
    {{16, 24, 24}, {24, 20, 20}, {8, 12, 12}, {12, 10, 10}}};

constexpr std::array<const char*, 3> kAxisNames = {"temporal", "height", "width"};

/// Moves HF's M-RoPE keys out of `from` into d.mrope (both places may state them, never apart).
void take_mrope_keys(Json& from, Dump& d, const std::string& where) {
  if (from.contains("mrope_section")) {
    const Json& s = from.at("mrope_section");
    if (!s.is_array() || s.size() != 3 ||
        !std::all_of(s.begin(), s.end(), [](const Json& v) { return v.is_number_integer() && v.get<long>() > 0; }))
      throw FormatError(fmt::format("{}: mrope_section must be three positive integers, got {}", where, s.dump()));
    const std::array<int, 3> section{s[0].get<int>(), s[1].get<int>(), s[2].get<int>()};
    if (d.mrope.section && *d.mrope.section != section)
      throw FormatError(fmt::format("{}: mrope_section is stated twice, differently", where));
    d.mrope.section = section;
    from.erase("mrope_section");
  }
  if (from.contains("mrope_interleaved")) {
    if (!from.at("mrope_interleaved").is_boolean())
      throw FormatError(fmt::format("{}: mrope_interleaved must be true or false", where));
    const auto a = from.at("mrope_interleaved").get<bool>() ? MropeAssignment::interleaved : MropeAssignment::sectioned;
    if (d.mrope.assignment && *d.mrope.assignment != a)
      throw FormatError(fmt::format("{}: mrope_interleaved is stated twice, differently", where));
    d.mrope.assignment = a;
    from.erase("mrope_interleaved");
  }
  for (const char* type : {"type", "rope_type"})  // transformers 4's Qwen2VLConfig: "mrope" is read as "default"
    if (from.contains(type) && from.at(type) == "mrope") from[type] = "default";
}

std::string section_text(const MropeSpec& s) {
  return fmt::format("{} [{}, {}, {}]", assignment_name(s.assignment), s.mrope_section[0], s.mrope_section[1],
                     s.mrope_section[2]);
}

/// Which axis turns each pair under s.
std::vector<int> axis_map(const MropeSpec& s) {
  std::vector<int> m(static_cast<std::size_t>(s.pairs()));
  for (int p = 0; p < s.pairs(); ++p) m[static_cast<std::size_t>(p)] = mrope_axis(s, p);
  return m;
}

/// "pairs 0-15 by temporal, 16-39 by height or width, 40 by none": what the data says of each pair.
std::string explained_text(const std::array<std::vector<bool>, 3>& explains) {
  std::vector<std::string> runs;
  const int pairs = static_cast<int>(explains[0].size());
  auto axes_of = [&](int p) {
    std::vector<std::string> names;
    for (std::size_t a = 0; a < 3; ++a)
      if (explains[a][static_cast<std::size_t>(p)]) names.push_back(kAxisNames[a]);
    return names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, " or "));
  };
  for (int p = 0; p < pairs;) {
    int q = p;
    while (q + 1 < pairs && axes_of(q + 1) == axes_of(p)) ++q;
    runs.push_back(fmt::format("{} by {}", p == q ? fmt::format("{}", p) : fmt::format("{}-{}", p, q), axes_of(p)));
    p = q + 1;
  }
  constexpr std::size_t kShown = 8;  // a round-robin makes a run a pair: the first few say enough
  if (runs.size() > kShown) {
    const std::size_t more = runs.size() - kShown;
    runs.resize(kShown);
    runs.push_back(fmt::format("{} more runs", more));
  }
  return fmt::format("pairs {}", fmt::join(runs, ", "));
}

/// The exact output with each pair turned by its axis's positions, from the three axes' 1-D RoPEs.
std::vector<double> combined_exact(const Dump& d, const RopeSpec& rope, const std::vector<int>& axis_of,
                                   const std::array<std::vector<double>, 3>& per_axis) {
  std::vector<double> exact = per_axis[0];  // the pass-through dims are x on every axis
  const std::size_t D = static_cast<std::size_t>(d.width);
  for (std::size_t base = 0; base < exact.size(); base += D)
    for (int p = 0; p < rope.rotary_dim / 2; ++p) {
      const auto [i, j] = ref::rope_pair(rope, p);
      const auto& from = per_axis[static_cast<std::size_t>(axis_of[static_cast<std::size_t>(p)])];
      exact[base + static_cast<std::size_t>(i)] = from[base + static_cast<std::size_t>(i)];
      exact[base + static_cast<std::size_t>(j)] = from[base + static_cast<std::size_t>(j)];
    }
  return exact;
}

/// Per pair and axis: whether that axis's positions explain the pair (within the fp32-angles
/// contract), and its worst error over the exact contract's bound.
struct PairAxes {
  std::array<std::vector<bool>, 3> explains;
  std::array<std::vector<double>, 3> exact_ratio;
};

/// The assignments of pairs to axes that explain every pair, among those `stated` allows.
struct Fits {
  std::vector<MropeSpec> specs;
  std::size_t maps = 0;  ///< how many distinct assignments of pairs to axes they make
  MropeSpec named;       ///< a released section if one fits, else the one nearest the exact contract
  bool released = false;
};

Fits find_fits(const MropeSpec& shape, const PairAxes& axes, const StatedMrope& stated) {
  const int pairs = shape.head_dim / 2;
  std::vector<MropeAssignment> assignments = {MropeAssignment::sectioned, MropeAssignment::interleaved};
  if (stated.assignment) assignments = {*stated.assignment};
  std::vector<std::array<int, 3>> sections;
  if (stated.section) sections = {*stated.section};
  for (int s1 = 1; !stated.section && s1 < pairs; ++s1)
    for (int s2 = 1; s1 + s2 < pairs; ++s2) sections.push_back({pairs - s1 - s2, s1, s2});
  Fits out;
  std::vector<std::vector<int>> maps;
  double best = INFINITY;
  for (MropeAssignment asg : assignments)
    for (const auto& section : sections) {
      MropeSpec m = shape;
      m.mrope_section = section, m.assignment = asg;
      const std::vector<int> map = axis_map(m);
      double score = 0;
      bool fits_all = true;
      for (std::size_t p = 0; p < map.size() && fits_all; ++p) {
        const std::size_t a = static_cast<std::size_t>(map[p]);
        fits_all = axes.explains[a][p];
        score = std::max(score, axes.exact_ratio[a][p]);
      }
      if (!fits_all) continue;
      out.specs.push_back(m);
      if (std::find(maps.begin(), maps.end(), map) == maps.end()) maps.push_back(map);
      if (score < best) best = score, out.named = m;
    }
  out.maps = maps.size();
  // Where the data cannot tell assignments apart, a section released models ship is named first.
  for (const MropeSpec& m : out.specs)
    if (std::find(kReleasedSections.begin(), kReleasedSections.end(), m.mrope_section) != kReleasedSections.end()) {
      out.named = m, out.released = true;
      break;
    }
  return out;
}

/// How far apart two readings of one pair's angle at one position may lie (radians): a reading is
/// good to 8 u of the dtype (docs/error-model.md), an encoder's fp32 angle pos * w to pos u_f32.
double angle_slack(DType dt, std::int64_t pos) {
  return 16 * unit_roundoff(dt) + 4 * double(pos) * unit_roundoff(DType::f32);
}

/// Each pair's frequency, read first from the tokens whose three positions are equal (text
/// tokens: there M-RoPE is 1-D RoPE whatever the assignment); a pair those leave unmeasured is
/// read on the axis whose positions give it one angle each, on the line its frequency draws, with
/// the smallest residual (another axis may still give one angle a position: a constant temporal
/// position under a varying height, when the pair turns slowly).
std::vector<PairFrequency> pair_frequencies(const Dump& d, const RopeSpec& pairing, double& gain) {
  const std::size_t D = static_cast<std::size_t>(d.width), H = static_cast<std::size_t>(d.heads);
  std::vector<PairFrequency> freqs(static_cast<std::size_t>(pairing.rotary_dim / 2));
  double norm_x = 0, norm_y = 0;
  for (std::size_t tok = 0; tok < d.x.size() / D; ++tok)
    for (std::size_t k = 0; k < D; ++k)
      norm_x += d.x[tok * D + k] * d.x[tok * D + k], norm_y += d.y[tok * D + k] * d.y[tok * D + k];
  gain = norm_x > 0 ? std::sqrt(norm_y / norm_x) : 1.0;
  // stream 3: the tokens whose axes agree, at their common position; 0-2: each axis on every token.
  auto position = [&](std::size_t stream, std::size_t tok) -> std::optional<std::int64_t> {
    if (stream < 3) return d.axes[stream][tok];
    if (d.axes[0][tok] == d.axes[1][tok] && d.axes[1][tok] == d.axes[2][tok]) return d.axes[0][tok];
    return std::nullopt;
  };
  for (int p = 0; p < pairing.rotary_dim / 2; ++p) {
    const auto [ia, ib] = ref::rope_pair(pairing, p);
    double best_residual = INFINITY;
    for (std::size_t stream : {3u, 0u, 1u, 2u}) {
      std::map<std::int64_t, std::pair<double, double>> best;  // position -> (norm^2, angle)
      bool consistent = true;
      for (std::size_t tok = 0; tok < d.tokens() && consistent; ++tok) {
        const auto pos = position(stream, tok);
        if (!pos) continue;
        for (std::size_t h = 0; h < H; ++h) {
          const std::size_t base = (tok * H + h) * D;
          const double x1 = d.x[base + static_cast<std::size_t>(ia)], x2 = d.x[base + static_cast<std::size_t>(ib)];
          const double y1 = d.y[base + static_cast<std::size_t>(ia)], y2 = d.y[base + static_cast<std::size_t>(ib)];
          const double n2 = x1 * x1 + x2 * x2;
          if (!(n2 > 1e-20)) continue;
          const double angle = std::atan2(x1 * y2 - x2 * y1, x1 * y1 + x2 * y2);
          auto& slot = best[*pos];
          if (slot.first > 0 &&
              std::fabs(std::remainder(angle - slot.second, 2 * std::numbers::pi)) > angle_slack(d.dtype, *pos))
            consistent = false;
          if (n2 > slot.first) slot = {n2, angle};
        }
      }
      if (!consistent) continue;
      Angles angles;
      for (const auto& [pos, v] : best) angles[pos] = v.second;
      const auto w = unwrap(angles);
      if (!w || !(w->first > 0)) continue;
      double residual = 0;  // the largest distance from the line, in slacks
      for (const auto& [pos, theta] : angles)
        if (pos <= w->second)
          residual =
              std::max(residual, std::fabs(std::remainder(theta - w->first * double(pos), 2 * std::numbers::pi)) /
                                     angle_slack(d.dtype, pos));
      if (residual > 1 || residual >= best_residual) continue;
      best_residual = residual;
      freqs[static_cast<std::size_t>(p)] = {w->first, w->second};
      if (stream == 3) break;  // the tokens whose axes agree read it as RoPE does
    }
  }
  return freqs;
}

}  // namespace

void read_mrope_convention(const Json& convention, Dump& d, const std::string& where) {
  if (!convention.is_object())
    throw FormatError(fmt::format("{}: must be a JSON object, got {}", where, convention.dump()));
  Json rest = convention;
  take_mrope_keys(rest, d, where);
  for (const char* dict : {"rope_parameters", "rope_scaling"})
    if (rest.contains(dict) && rest.at(dict).is_object()) take_mrope_keys(rest.at(dict), d, where + ": " + dict);
  d.rope = read_rope_convention(rest, d.width, where);
  if (d.rope.rule && *d.rope.rule != RopeScalingKind::none)
    throw FormatError(
        fmt::format("{}: M-RoPE takes no scaling rule here (stated: {})", where, scaling_name(*d.rope.rule)));
}

MropeFit fit_mrope(const Dump& d) {
  MropeFit f;
  const RopeSpec pairing = fit_rope_pairing(d);
  const std::string pairs_text = fmt::format("M-RoPE {}, rotary_dim {} of {}{}", layout_name(pairing.layout),
                                             pairing.rotary_dim, d.width, d.rope.rotary_dim ? " (stated)" : "");
  if (pairing.scaling.rotated_pairs != 0)
    throw FitError(fmt::format("{}: the pairs from {} on stay still (HF's proportional RoPE), which no M-RoPE does",
                               pairs_text, pairing.scaling.rotated_pairs));
  const int pairs = pairing.rotary_dim / 2;
  // The base, read as RoPE's is from each pair's frequency (no scaling rule: M-RoPE has none here).
  double gain = 1;
  const std::vector<PairFrequency> freqs = pair_frequencies(d, pairing, gain);
  if (std::none_of(freqs.begin(), freqs.end(), [](const PairFrequency& q) { return q.measured(); }))
    throw FitError(fmt::format(
        "{}: the frequencies cannot be fitted: no pair turns measurably by a position below 3 on an axis that "
        "explains it (a dump needs tokens at positions 1 or 2, or the manifest must state the convention)",
        pairs_text));
  StatedRope rope_stated = d.rope;
  rope_stated.rule = RopeScalingKind::none;
  const RuleReading r = read_rope_rule(freqs, gain, pairing, rope_stated, d.dtype);
  if (!r.spec) throw FitError(fmt::format("{}: {}", pairs_text, r.text));
  f.rope = *r.spec;
  // Which axes explain each pair: turned by that axis's positions, its output within the weakest
  // contract's bound (fp32 angles); and how near the exact contract's bound each comes.
  const measure::ContractBounds bounds(d.dtype, f.rope);
  std::array<std::vector<double>, 3> per_axis;
  std::array<std::vector<bool>, 3> explains;
  std::array<std::vector<double>, 3> exact_ratio;
  for (std::size_t a = 0; a < 3; ++a) {
    per_axis[a] = rope_exact(d, f.rope, d.axes[a]);
    explains[a].assign(static_cast<std::size_t>(pairs), true);
    exact_ratio[a].assign(static_cast<std::size_t>(pairs), 0.0);
    measure::rope_errors(
        f.rope, d.heads, d.dtype, d.x, d.y, per_axis[a], f.rope.magnitude(),
        [&](const measure::PairError& e) {
          const std::int64_t pos = d.axes[a][e.token];
          const std::size_t p = static_cast<std::size_t>(e.pair);
          if (!(e.error_u <= bounds.at(tol::Contract::fp32_angles, e.pair, pos))) explains[a][p] = false;
          exact_ratio[a][p] = std::max(exact_ratio[a][p], e.error_u / bounds.at(tol::Contract::exact, e.pair, pos));
        },
        [](const measure::ChangedPassThrough&) {});
  }
  const PairAxes axes{explains, exact_ratio};
  const MropeSpec shape{.head_dim = pairing.rotary_dim, .base = f.rope.base, .layout = f.rope.layout};
  const bool stated = d.mrope.section || d.mrope.assignment;
  if (d.mrope.section) {
    MropeSpec m = shape;
    m.mrope_section = *d.mrope.section;
    try {
      m.validate();
    } catch (const std::invalid_argument& e) {
      throw FitError(fmt::format("{}: the stated mrope_section does not fit the dump: {}", pairs_text, e.what()));
    }
  }
  const Fits fits = find_fits(shape, axes, d.mrope);
  if (fits.specs.empty()) {
    std::string what = explained_text(explains);
    if (stated)  // what the data do fit, if anything: the likely cause
      if (const Fits unstated = find_fits(shape, axes, {}); !unstated.specs.empty())
        what = fmt::format("they fit {}{}", section_text(unstated.named),
                           unstated.maps > 1 ? fmt::format(" and {} more", unstated.maps - 1) : "");
    throw FitError(fmt::format("{}, {}: no {} assignment gives every pair an axis whose positions explain it ({})",
                               pairs_text, r.text, stated ? "stated" : "sectioned or interleaved", what));
  }
  f.spec = fits.named;
  f.exact = combined_exact(d, f.rope, axis_map(f.spec), per_axis);
  const std::size_t maps = fits.maps;
  f.ambiguous = maps > 1;
  const char* said = d.mrope.section && d.mrope.assignment ? " (stated)"
                     : d.mrope.section                     ? " (section stated)"
                     : d.mrope.assignment                  ? " (assignment stated)"
                                                           : "";
  f.text = fmt::format("{}, {}{}, {}", pairs_text, section_text(f.spec), said, r.text);
  if (f.ambiguous)
    f.text += fmt::format(
        "; ambiguous: {} assignments of pairs to axes fit (the positions never tell the axes apart there), judged "
        "under {}",
        maps, fits.released ? "a section released models ship" : "the one nearest the exact contract");
  if (d.rope.layout) f.text += " (layout stated)";
  return f;
}

Measurement mrope_agreement(const Dump& d, const MropeFit& f, tol::Contract judged) {
  const std::vector<int> axis_of = axis_map(f.spec);
  Measurement m = rotation_agreement(
      d, f.rope, f.exact,
      [&](std::size_t token, int pair) {
        return d.axes[static_cast<std::size_t>(axis_of[static_cast<std::size_t>(pair)])][token];
      },
      judged);
  m.property = "mrope.agrees_with_reference";  // the catalogue's id for the same check
  return m;
}

}  // namespace pecheck::dumpcheck
