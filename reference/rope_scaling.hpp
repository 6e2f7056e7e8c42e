// Exact inverse frequencies of RoPE under every scaling rule (linear, NTK, dynamic NTK, YaRN,
// Llama 3, LongRoPE, HF's proportional), written from the papers' and HF's formulas, evaluated in
// Real.
#pragma once

#include <algorithm>
#include <cmath>

#include "reference/sinusoidal.hpp"
#include "spec/conventions.hpp"

namespace pecheck::ref {

template <class Real>
Real pi_value() {
  using std::acos;
  return acos(Real(-1));
}

/// base^(-2p/d) for a base given by its logarithm (the NTK bases are products of powers).
template <class Real>
Real frequency_from_log_base(int p, int d, const Real& log_base) {
  using std::exp;
  return exp(-(Real(2 * p) / Real(d)) * log_base);
}

/// The logarithm of the base whose powers base^(-2p/d) the rule's frequencies start from: NTK's
/// base b s^(d/(d-2)) and dynamic NTK's b sigma^(d/(d-2)) past L0 (sigma = s L / L0 - (s - 1)), b
/// itself for every other rule (which divide or blend b's powers afterwards).
template <class Real>
Real rope_log_base(const RopeSpec& s) {
  using std::log;
  const RopeScaling& sc = s.scaling;
  const int d = s.rotary_dim;
  const Real factor(sc.factor);
  switch (sc.kind) {
    case RopeScalingKind::ntk:
      return log(Real(s.base)) + Real(d) / Real(d - 2) * log(factor);
    case RopeScalingKind::dynamic_ntk: {
      if (sc.seq_len <= sc.original_max_position) break;
      const Real stretch = factor * Real(sc.seq_len) / Real(sc.original_max_position) - (factor - 1);
      return log(Real(s.base)) + Real(d) / Real(d - 2) * log(stretch);
    }
    default:
      break;
  }
  return log(Real(s.base));
}

/// YaRN's correction dimension: the pair index whose wavelength fits `rotations` times into L0,
/// d log(L0 / (2 pi rotations)) / (2 log base).
template <class Real>
Real yarn_correction_dim(double rotations, int d, double base, std::int64_t original_max_position) {
  using std::log;
  return Real(d) * log(Real(original_max_position) / (Real(rotations) * 2 * pi_value<Real>())) / (2 * log(Real(base)));
}

/// YaRN's blend weight of the unscaled frequency for pair p: 1 below the fast correction dim,
/// 0 above the slow one, linear between (HF find_correction_range, with floor and ceil of the two
/// dims unless truncate is false, then linear_ramp_factor).
template <class Real>
Real yarn_extrapolation_weight(const RopeSpec& s, int p) {
  using std::ceil;
  using std::floor;
  const RopeScaling& sc = s.scaling;
  const int d = s.rotary_dim;
  Real low = yarn_correction_dim<Real>(sc.beta_fast, d, s.base, sc.original_max_position);
  Real high = yarn_correction_dim<Real>(sc.beta_slow, d, s.base, sc.original_max_position);
  if (sc.truncate) low = floor(low), high = ceil(high);
  if (low < 0) low = 0;
  if (high > Real(d - 1)) high = Real(d - 1);
  if (low == high) high += Real(1) / 1000;
  Real ramp = (Real(p) - low) / (high - low);
  if (ramp < 0) ramp = 0;
  if (ramp > 1) ramp = 1;
  return 1 - ramp;
}

/// The inverse frequency of pair p (0 <= p < rotary_dim / 2) under the spec's scaling rule: 0 for
/// the pairs past rotated_pairs (HF's proportional rope_type keeps them still).
template <class Real>
Real rope_inv_freq(const RopeSpec& s, int p) {
  const RopeScaling& sc = s.scaling;
  if (sc.rotated_pairs != 0 && p >= sc.rotated_pairs) return Real(0);
  const int d = s.rotary_dim;
  const Real factor(sc.factor);
  const Real theta = frequency<Real>(p, d, s.base);
  switch (sc.kind) {
    case RopeScalingKind::none:
      return theta;
    case RopeScalingKind::linear:
      return theta / factor;
    case RopeScalingKind::ntk:  // base' = base * s^(d/(d-2))
      return frequency_from_log_base<Real>(p, d, rope_log_base<Real>(s));
    case RopeScalingKind::dynamic_ntk:
      if (sc.seq_len <= sc.original_max_position) return theta;
      return frequency_from_log_base<Real>(p, d, rope_log_base<Real>(s));
    case RopeScalingKind::yarn: {
      const Real w = yarn_extrapolation_weight<Real>(s, p);
      return theta / factor * (1 - w) + theta * w;
    }
    case RopeScalingKind::llama3: {
      const Real wavelen = 2 * pi_value<Real>() / theta;
      const Real l0(static_cast<double>(sc.original_max_position));
      if (wavelen < l0 / Real(sc.high_freq_factor)) return theta;
      if (wavelen > l0 / Real(sc.low_freq_factor)) return theta / factor;
      const Real smooth =
          (l0 / wavelen - Real(sc.low_freq_factor)) / (Real(sc.high_freq_factor) - Real(sc.low_freq_factor));
      return (1 - smooth) * theta / factor + smooth * theta;
    }
    case RopeScalingKind::longrope:  // HF: 1 / (ext_factors * base^(2i/d)), ext chosen by L > L0
      return theta / Real(sc.longrope_factors()[static_cast<std::size_t>(p)]);
  }
  return theta;
}

/// HF's get_mscale(s, m) in Real: 0.1 m ln s + 1 for s > 1, else 1.
template <class Real>
Real yarn_mscale(double factor, double m) {
  using std::log;
  if (factor <= 1.0) return Real(1);
  return Real(m) / 10 * log(Real(factor)) + 1;
}

/// The attention factor on cos and sin, in Real: YaRN's stated one, else get_mscale(s, mscale) /
/// get_mscale(s, mscale_all_dim) when both are stated, else 0.1 ln(s) + 1 (s > 1); LongRoPE's
/// stated one, else sqrt(1 + ln s / ln L0) (s > 1); 1 otherwise.
template <class Real>
Real rope_magnitude(const RopeSpec& s) {
  using std::log;
  using std::sqrt;
  const RopeScaling& sc = s.scaling;
  if (sc.kind == RopeScalingKind::yarn) {
    if (sc.attention_factor > 0) return Real(sc.attention_factor);
    if (!sc.yarn_default_attention())
      return yarn_mscale<Real>(sc.factor, sc.mscale) / yarn_mscale<Real>(sc.factor, sc.mscale_all_dim);
    return yarn_mscale<Real>(sc.factor, 1.0);
  }
  if (sc.kind == RopeScalingKind::longrope) {
    if (sc.attention_factor > 0) return Real(sc.attention_factor);
    if (sc.factor > 1.0)
      return sqrt(1 + log(Real(sc.factor)) / log(Real(static_cast<double>(sc.original_max_position))));
  }
  return Real(1);
}

}  // namespace pecheck::ref
