// Theorem: every scaled inverse frequency lies between theta_p / s and theta_p (theta_p / stretch
// for dynamic NTK), and equals theta_p or theta_p / s exactly where the rule says: linear
// everywhere theta_p / s; NTK theta_p at p = 0 and theta_p / s at the last pair; YaRN theta_p below
// the fast correction dim and theta_p / s above the slow one; Llama 3 theta_p for wavelengths
// below L0 / high_freq_factor and theta_p / s above L0 / low_freq_factor; LongRoPE theta_p / e_p
// for every pair, e the long factors when L > L0, else the short ones.
// Doc: docs/properties/rope.scaled_frequency_bounds.md
#include <cmath>
#include <numbers>
#include <optional>

#include "harness/runner.hpp"
#include "harness/tolerance.hpp"
#include "properties/catalogue.hpp"
#include "properties/rope_cases.hpp"
#include "reference/rope_scaling.hpp"

namespace pecheck::props {

namespace rope_scaled_frequency_bounds_detail {
namespace {

using K = RopeScalingKind;

rc::Gen<RopeCase> cases(DType) {
  return rope_case_gen(rc::gen::just(std::vector<std::int64_t>{}),
                       rope_spec_scaled_as({K::linear, K::ntk, K::dynamic_ntk, K::yarn, K::llama3, K::longrope}));
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

/// The position that turns pair p's unscaled frequency into an angle near pi/2 (at most pi/2).
std::int64_t probe_position(const RopeSpec& s, int p) {
  const long double theta = ref::frequency<long double>(p, s.rotary_dim, s.base);
  const auto P = static_cast<std::int64_t>(std::floor(std::numbers::pi_v<long double> / 2 / theta));
  return std::clamp<std::int64_t>(P, 1, tol::kMaxPosition);
}

Outcome check(Encoder& enc, DType dt, const RopeCase& c) {
  Outcome o{.bound_u = tol::rope_angle(dt)};
  // Token p carries the unit vector e_a of pair p (its first dim) and sits at pair p's probe
  // position; atan2 of the rotated pair reads back P * inv_freq_p.
  const int pairs = c.spec.rotary_dim / 2;
  RopeCase probe = c;
  probe.heads = 1;
  probe.positions.clear();
  const std::size_t hd = static_cast<std::size_t>(c.spec.head_dim);
  std::vector<float> x(static_cast<std::size_t>(pairs) * hd, 0.0f);
  for (int p = 0; p < pairs; ++p) {
    probe.positions.push_back(probe_position(c.spec, p));
    x[static_cast<std::size_t>(p) * hd + static_cast<std::size_t>(ref::rope_pair(c.spec, p).first)] = 1.0f;
  }
  const auto y = encoder_rope(enc, dt, probe, x, probe.positions, o.failure);
  if (!o.failure.empty()) return o;
  const double u = unit_roundoff(dt);
  WorstOf worst;
  for (int p = 0; p < pairs; ++p) {
    const auto [ia, ib] = ref::rope_pair(c.spec, p);
    const float* row = y.data() + static_cast<std::size_t>(p) * hd;
    const long double P = static_cast<long double>(probe.positions[static_cast<std::size_t>(p)]);
    const long double angle = std::atan2(static_cast<long double>(row[ib]), static_cast<long double>(row[ia]));
    const Allowed a = allowed(c.spec, p);
    long double miss = 0;  // radians outside what the rule allows
    if (a.exact)
      miss = std::fabs(angle - P * *a.exact);
    else
      miss = std::max({P * a.lo - angle, angle - P * a.hi, 0.0L});
    worst.offer(static_cast<double>(miss) / u, [&] {
      return fmt::format("pair {} at position {}: inv_freq {:.9g}, rule allows {}", p, static_cast<std::int64_t>(P),
                         static_cast<double>(angle / P),
                         a.exact
                             ? fmt::format("exactly {:.9g}", static_cast<double>(*a.exact))
                             : fmt::format("[{:.9g}, {:.9g}]", static_cast<double>(a.lo), static_cast<double>(a.hi)));
    });
  }
  return worst.store(o);
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
