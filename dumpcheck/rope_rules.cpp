#include "dumpcheck/rope_rules.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numbers>

#include "dumpcheck/convention_fit.hpp"
#include "dumpcheck/rope_manifest.hpp"
#include "dumpcheck/rope_rules_fit.hpp"
#include "reference/rope_scaling.hpp"

namespace pecheck::dumpcheck {

double frequency_tolerance(const PairFrequency& p, DType dt) {
  if (!p.measured()) return std::numeric_limits<double>::infinity();
  return 8 * unit_roundoff(dt) / (p.freq * double(p.reach)) + 32 * unit_roundoff(DType::f32);
}

double gain_tolerance(DType dt) { return 8 * unit_roundoff(dt) + 32 * unit_roundoff(DType::f32); }

namespace {

using namespace rules;

/// The rule as the manifest states it, the unstated parameters at HF's defaults, at the base of
/// the unscaled pairs (or the stated one).
std::optional<RuleCandidate> as_stated(const Context& c, const std::optional<TwoRegimes>& r) {
  const StatedRope& st = c.stated;
  if (!st.rule || !st.factor) return std::nullopt;
  if (*st.rule != RopeScalingKind::yarn && *st.rule != RopeScalingKind::llama3) return std::nullopt;
  const std::optional<double> base = st.base ? st.base : r ? std::optional(r->base) : std::nullopt;
  if (!base) return std::nullopt;
  RopeSpec s = c.pairing;
  s.base = *base;
  s.scaling = stated_spec(st, c.pairing).scaling;  // HF's defaults for what is not stated
  return score(c.m, s,
               fmt::format("{}, {} as stated ({})", base_text(s.base, s.base, st.base.has_value()),
                           scaling_name(*st.rule), s.describe()),
               st.base ? 0 : 1);
}

/// LongRoPE as stated: the manifest's lists, short and long each tried (which one the framework
/// used depends on the length it was called for). The base is the stated one, or fitted to
/// w_p e_p, which is plain RoPE once the stated factors are taken out.
std::vector<RuleCandidate> longrope_as_stated(const Context& c) {
  const StatedRope& st = c.stated;
  std::vector<RuleCandidate> out;
  if (st.rule != RopeScalingKind::longrope || !st.short_factor || !st.long_factor || !st.original_max_position)
    return out;
  for (const bool long_list : {false, true}) {
    const std::vector<double>& e = long_list ? *st.long_factor : *st.short_factor;
    if (e.size() != static_cast<std::size_t>(c.m.count())) continue;  // rotary_dim / 2 entries, else invalid
    Measured unscaled = c.m;
    for (int p = 0; p < unscaled.count(); ++p)
      unscaled.pairs[static_cast<std::size_t>(p)].freq *= e[static_cast<std::size_t>(p)];
    std::optional<double> lnb;
    if (st.base) lnb = std::log(*st.base);
    const auto line = fit_line(unscaled, 0, unscaled.count(), lnb, 0.0);
    if (!line) continue;
    const double raw = st.base ? *st.base : std::exp(line->lnb), b = st.base ? raw : snap(raw, line->lnb_error);
    RopeSpec s = c.pairing;
    s.scaling = stated_spec(st, c.pairing).scaling;
    s.scaling.seq_len = s.scaling.original_max_position + (long_list ? 1 : 0);
    const auto text = [&](double base) {
      return fmt::format("{}, LongRoPE with the stated {} factors (as at a length {} L0 = {}), attention factor {:.6g}",
                         base_text(base, raw, st.base.has_value()), long_list ? "long" : "short",
                         long_list ? ">" : "<=", s.scaling.original_max_position, s.magnitude());
    };
    RopeSpec r = s;
    s.base = b;
    r.base = raw;
    const int free = st.base ? 0 : 1;
    out.push_back(snapped_or_raw(score(c.m, s, text(b), free), score(c.m, r, text(raw), free)));
  }
  return out;
}

/// Order of preference among readings that give every pair the same frequency.
int simplicity(RopeScalingKind k) {
  switch (k) {
    case RopeScalingKind::none:
      return 0;
    case RopeScalingKind::linear:
      return 1;
    case RopeScalingKind::ntk:
      return 2;
    case RopeScalingKind::dynamic_ntk:
      return 3;
    case RopeScalingKind::yarn:
      return 4;
    case RopeScalingKind::llama3:
      return 5;
    case RopeScalingKind::longrope:  // per-pair factors explain anything: only ever stated
      return 6;
  }
  return 7;
}

/// Whether two explaining candidates give every pair, measured or not, the same frequency.
bool same_frequencies(const Measured& m, const RopeSpec& a, const RopeSpec& b) {
  for (int p = 0; p < m.count(); ++p) {
    const double tol = std::isfinite(m.tol[static_cast<std::size_t>(p)]) ? m.tol[static_cast<std::size_t>(p)]
                                                                         : 32 * unit_roundoff(DType::f32);
    if (std::fabs(std::log(ref::rope_inv_freq<double>(a, p)) - std::log(ref::rope_inv_freq<double>(b, p))) > 2 * tol)
      return false;
  }
  return true;
}

}  // namespace

RuleReading read_rope_rule(const std::vector<PairFrequency>& pairs, double gain, const RopeSpec& pairing,
                           const StatedRope& stated, DType dt) {
  Measured m{.pairs = pairs,
             .gain = gain,
             .dt = dt,
             .rotary_dim = pairing.rotary_dim,
             .rotated_pairs = stated.rotated_pairs.value_or(0)};
  for (const auto& p : pairs) {
    m.tol.push_back(frequency_tolerance(p, dt));
    m.sigma.push_back(p.measured() ? 8 * unit_roundoff(dt) / (p.freq * double(p.reach)) : kInf);
  }
  const Context c{m, pairing, stated};
  RuleReading out;
  out.gain = gain;
  out.tried = plain_and_linear(c);
  const auto r = two_regimes(c);
  if (r) {
    if (auto y = yarn(c, *r)) out.tried.push_back(*y);
    if (auto l = llama3(c, *r)) out.tried.push_back(*l);
  }
  if (auto s = as_stated(c, r)) out.tried.insert(out.tried.begin(), *s);
  for (const RuleCandidate& l : longrope_as_stated(c)) out.tried.insert(out.tried.begin(), l);
  std::stable_sort(out.tried.begin(), out.tried.end(), [](const RuleCandidate& a, const RuleCandidate& b) {
    if (a.explains != b.explains) return a.explains;
    if (a.explains) return simplicity(a.spec.scaling.kind) < simplicity(b.spec.scaling.kind);
    return a.worst < b.worst;
  });
  auto nearest = [&](std::size_t n) {
    std::string s;
    for (std::size_t i = 0; i < std::min(n, out.tried.size()); ++i)
      s += fmt::format("{}{} (pair {} off by {:.3g} tolerances)", i ? "; " : "", out.tried[i].text,
                       out.tried[i].worst_pair, out.tried[i].worst);
    return s;
  };
  std::vector<const RuleCandidate*> explaining;
  for (const auto& t : out.tried)
    if (t.explains && (!stated.rule || t.spec.scaling.kind == *stated.rule)) explaining.push_back(&t);
  if (explaining.empty()) {
    if (stated.rule && !out.tried.empty() && out.tried.front().explains)
      out.text = fmt::format("the stated {} scaling does not explain the pairs; they read as {}",
                             scaling_name(*stated.rule), out.tried.front().text);
    else
      out.text = fmt::format("no known rule explains every pair; nearest: {}", nearest(2));
    return out;
  }
  const RuleCandidate& first = *explaining.front();
  out.spec = first.spec;
  out.text = first.text;
  std::vector<std::string> others;
  for (std::size_t i = 1; i < explaining.size(); ++i)
    if (!same_frequencies(m, first.spec, explaining[i]->spec) || explaining[i]->gain != first.gain)
      others.push_back(explaining[i]->text);
  if (!others.empty()) {
    out.ambiguous = true;
    out.text = fmt::format("ambiguous: {}; or {} (they differ only on pairs that turn too little to read)", first.text,
                           fmt::format("{}", fmt::join(others, "; or ")));
  }
  return out;
}

}  // namespace pecheck::dumpcheck
