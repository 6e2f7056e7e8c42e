// Theorem: every scaled inverse frequency lies between theta_p / s and theta_p (theta_p / stretch
// for dynamic NTK), and equals theta_p or theta_p / s exactly where the rule says: linear
// everywhere theta_p / s; NTK theta_p at p = 0 and theta_p / s at the last pair; YaRN theta_p below
// the fast correction dim and theta_p / s above the slow one; Llama 3 theta_p for wavelengths
// below L0 / high_freq_factor and theta_p / s above L0 / low_freq_factor; LongRoPE theta_p / e_p
// for every pair, e the long factors when L > L0, else the short ones (each reading within the
// stated contract's bound on the pair).
// Doc: docs/properties/rope.scaled_frequency_bounds.md
#include <cmath>
#include <numbers>
#include <optional>

#include "harness/rope_measure.hpp"
#include "harness/runner.hpp"
#include "harness/tolerance.hpp"
#include "properties/catalogue.hpp"
#include "properties/rope/rope_cases.hpp"
#include "reference/rope_scaling.hpp"

namespace pecheck::props {

namespace rope_scaled_frequency_bounds_detail {
namespace {

using K = RopeScalingKind;

/// Dynamic NTK's stretch sigma = s L / L0 - (s - 1) is held to at most kMaxStretch: its last pair is
/// pinned at theta / sigma, and even at position 2^24 - 1 that angle falls below the bound's
/// 2u rad once sigma passes a few hundred (bf16, base 1e7): a pin that could not fail.
constexpr double kMaxStretch = 64;

rc::Gen<RopeCase> cases(DType) {
  return rc::gen::map(
      rope_case_gen(rc::gen::just(std::vector<std::int64_t>{}),
                    rope_spec_scaled_as({K::linear, K::ntk, K::dynamic_ntk, K::yarn, K::llama3, K::longrope})),
      [](RopeCase c) {
        RopeScaling& sc = c.spec.scaling;
        if (sc.kind == K::dynamic_ntk) {
          const double longest = sc.original_max_position * (kMaxStretch + sc.factor - 1) / sc.factor;
          sc.seq_len = std::min(sc.seq_len, static_cast<std::int64_t>(std::floor(longest)));
        }
        return c;
      });
}

/// What the rule allows for pair p: an interval, and the exact value where the rule pins it.
struct Allowed {
  long double lo = 0, hi = 0;
  std::optional<long double> exact;
};

Allowed allowed(const RopeSpec& s, int p) {
  const RopeScaling& sc = s.scaling;
  const int pairs = s.rotary_dim / 2;
  const long double theta = ref::frequency<long double>(p, s.rotary_dim, s.base);
  long double shrink = sc.factor;  // the largest division the rule may apply
  if (sc.kind == K::dynamic_ntk)
    shrink = sc.seq_len <= sc.original_max_position
                 ? 1.0L
                 : sc.factor * static_cast<long double>(sc.seq_len) / sc.original_max_position - (sc.factor - 1);
  Allowed a{theta / shrink, theta, std::nullopt};
  switch (sc.kind) {
    case K::none:
      a.exact = theta;
      break;
    case K::linear:
      a.exact = theta / sc.factor;
      break;
    case K::ntk:
    case K::dynamic_ntk:  // theta_p stretch^(-2p/(d-2)): theta_0 and theta_last / stretch exactly
      if (p == 0) a.exact = theta;
      if (p == pairs - 1) a.exact = theta / shrink;
      break;
    case K::yarn: {
      const long double w = ref::yarn_extrapolation_weight<long double>(s, p);
      if (w == 1) a.exact = theta;
      if (w == 0) a.exact = theta / sc.factor;
      break;
    }
    case K::llama3: {
      const long double wavelen = 2 * std::numbers::pi_v<long double> / theta;
      if (wavelen < sc.original_max_position / sc.high_freq_factor) a.exact = theta;
      if (wavelen > sc.original_max_position / sc.low_freq_factor) a.exact = theta / sc.factor;
      break;
    }
    case K::longrope:  // per-pair divisors, not bounded by s: pinned exactly instead
      a.exact = theta / sc.longrope_factors()[static_cast<std::size_t>(p)];
      break;
  }
  return a;
}

/// The position that turns frequency f into an angle near pi/2 (at most pi/2).
std::int64_t probe_position(long double f) {
  const auto P = static_cast<std::int64_t>(std::min<long double>(std::floor(std::numbers::pi_v<long double> / 2 / f),
                                                                 static_cast<long double>(tol::kMaxPosition)));
  return std::max<std::int64_t>(P, 1);
}

/// One token of the probe: pair p's unit vector at position P. The first probe of each pair sits
/// where its unscaled frequency theta_p turns pi/2: every allowed frequency then reads back
/// without ambiguity. A pinned pair gets a second probe where its pinned frequency turns pi/2:
/// there a relative error of the pin moves the angle by that much of pi/2, where at the first
/// probe it moved only P theta_p / sigma, below the bound when the rule divides by a lot.
struct Probe {
  int pair;
  std::int64_t position;
  bool pin_only;    ///< the second probe: checks the pin, not the interval (a wrong f may alias)
  Allowed allowed;  ///< what the rule allows for the pair
};

std::vector<Probe> probes(const RopeSpec& s) {
  std::vector<Probe> out;
  for (int p = 0; p < s.rotary_dim / 2; ++p) {
    const Allowed a = allowed(s, p);
    const std::int64_t at_theta = probe_position(ref::frequency<long double>(p, s.rotary_dim, s.base));
    out.push_back({p, at_theta, false, a});
    if (a.exact)
      if (const std::int64_t at_pin = probe_position(*a.exact); at_pin != at_theta) out.push_back({p, at_pin, true, a});
  }
  return out;
}

/// How far a probe's angle may read from the rule's, in u radians: a unit pair rotated within
/// e u (normwise) has its angle within asin(e u) <= e u (1 + (e u)^2). e is E under the exact
/// contract, else the contract's bound on the pair at the probe's position.
double angle_bound(const RunParams& params, DType dt, const measure::ContractBounds& bounds, const Probe& pr) {
  if (params.contract == tol::Contract::exact) return tol::rope_angle(dt);
  const double e = bounds.at(params.contract, pr.pair, pr.position), eu = e * unit_roundoff(dt);
  return e * (1 + eu * eu);
}

Outcome check(Encoder& enc, DType dt, const RopeCase& c, const RunParams& params) {
  // Each token carries the unit vector e_a of its pair (the pair's first dim) and sits at the
  // probe's position; atan2 of the rotated pair reads back P * inv_freq_p.
  const std::vector<Probe> ps = probes(c.spec);
  const measure::ContractBounds bounds(dt, c.spec);
  Outcome o{.bound_u = angle_bound(params, dt, bounds, ps.front())};
  RopeCase probe = c;
  probe.heads = 1;
  probe.positions.clear();
  const std::size_t hd = static_cast<std::size_t>(c.spec.head_dim);
  std::vector<float> x(ps.size() * hd, 0.0f);
  for (std::size_t t = 0; t < ps.size(); ++t) {
    probe.positions.push_back(ps[t].position);
    x[t * hd + static_cast<std::size_t>(ref::rope_pair(c.spec, ps[t].pair).first)] = 1.0f;
  }
  const double u = unit_roundoff(dt);
  // A pin whose angle at its farthest probe is within that probe's bound of 0 could not tell its
  // frequency from 0: the case is trivial.
  std::vector<long double> pinned_angle(static_cast<std::size_t>(c.spec.rotary_dim / 2), -1);
  std::vector<double> pinned_bound(pinned_angle.size(), 0);
  for (const Probe& pr : ps)
    if (pr.allowed.exact) {
      const std::size_t i = static_cast<std::size_t>(pr.pair);
      if (pr.position * *pr.allowed.exact > pinned_angle[i])
        pinned_angle[i] = pr.position * *pr.allowed.exact, pinned_bound[i] = angle_bound(params, dt, bounds, pr);
    }
  for (std::size_t i = 0; i < pinned_angle.size(); ++i)
    o.trivial = o.trivial || (pinned_angle[i] >= 0 && pinned_angle[i] <= pinned_bound[i] * u);
  const auto y = encoder_rope(enc, dt, probe, x, probe.positions, o.failure);
  if (!o.failure.empty()) return o;
  WorstOf worst;  // of miss / bound: the probe closest to its own bound is the case's measurement
  for (std::size_t t = 0; t < ps.size(); ++t) {
    const int p = ps[t].pair;
    const auto [ia, ib] = ref::rope_pair(c.spec, p);
    const float* row = y.data() + t * hd;
    const long double P = static_cast<long double>(ps[t].position);
    const long double angle = std::atan2(static_cast<long double>(row[ib]), static_cast<long double>(row[ia]));
    const Allowed& a = ps[t].allowed;
    long double miss = 0;  // radians outside what the rule allows
    if (a.exact)
      miss = std::fabs(angle - P * *a.exact);
    else if (!ps[t].pin_only)
      miss = std::max({P * a.lo - angle, angle - P * a.hi, 0.0L});
    const double bound = angle_bound(params, dt, bounds, ps[t]), error = static_cast<double>(miss) / u;
    worst.offer(error / bound, [&] {
      o.error_u = error, o.bound_u = bound;
      return fmt::format("pair {} at position {}: inv_freq {:.9g}, rule allows {}", p, static_cast<std::int64_t>(P),
                         static_cast<double>(angle / P),
                         a.exact
                             ? fmt::format("exactly {:.9g}", static_cast<double>(*a.exact))
                             : fmt::format("[{:.9g}, {:.9g}]", static_cast<double>(a.lo), static_cast<double>(a.hi)));
    });
  }
  o.where = worst.where;
  return o;
}

}  // namespace
}  // namespace rope_scaled_frequency_bounds_detail

Property rope_scaled_frequency_bounds() {
  using namespace rope_scaled_frequency_bounds_detail;
  return make_property<RopeCase>(
      {.id = "rope.scaled_frequency_bounds",
       .statement = "Scaled inverse frequencies lie in [theta_p/s, theta_p] and equal theta_p or theta_p/s exactly "
                    "where the linear, NTK, YaRN or Llama 3 rule says; LongRoPE's equal theta_p/e_p for every pair.",
       .family = Family::rope,
       .op = Op::rope_apply},
      cases, check);
}

}  // namespace pecheck::props
