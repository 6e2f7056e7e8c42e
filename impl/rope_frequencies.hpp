// Host-side RoPE frequency tables under every scaling rule, in long double, split hi + lo for
// impl/angles.hpp. Written independently of reference/rope_scaling.hpp (which evaluates the same
// rules exactly) so that agreement between the two means something; shared by every backend.
#pragma once

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "impl/angles.hpp"
#include "spec/conventions.hpp"

namespace pecheck::angles {

/// YaRN: weight of the unscaled frequency for pair p, 1 - clamp((p - low) / (high - low), 0, 1)
/// with low = floor(c(beta_fast)), high = ceil(c(beta_slow)) (c itself when truncate is false)
/// clamped to [0, d-1].
inline long double yarn_weight(const RopeSpec& s, int p) {
  const RopeScaling& sc = s.scaling;
  const long double d = s.rotary_dim, two_pi = 2 * std::numbers::pi_v<long double>;
  const auto correction = [&](double rotations) {
    return d * std::log(static_cast<long double>(sc.original_max_position) / (rotations * two_pi)) /
           (2 * std::log(static_cast<long double>(s.base)));
  };
  long double low = correction(sc.beta_fast), high = correction(sc.beta_slow);
  if (sc.truncate) low = std::floor(low), high = std::ceil(high);
  low = std::max(low, 0.0L), high = std::min(high, d - 1);
  if (low == high) high += 0.001L;
  return 1 - std::clamp((p - low) / (high - low), 0.0L, 1.0L);
}

/// inv_freq of pair p under the scaling rule, to ~2^-60 relative; 0 past rotated_pairs (HF's
/// proportional rope_type: those pairs stay still).
inline long double scaled_inv_freq(const RopeSpec& s, int p) {
  const RopeScaling& sc = s.scaling;
  if (sc.rotated_pairs != 0 && p >= sc.rotated_pairs) return 0;
  const long double d = s.rotary_dim, base = s.base, factor = sc.factor;
  const long double exponent = -2.0L * p / d;
  const long double theta = std::pow(base, exponent);
  switch (sc.kind) {
    case RopeScalingKind::none:
      return theta;
    case RopeScalingKind::linear:
      return theta / factor;
    case RopeScalingKind::ntk:
      return std::pow(base * std::pow(factor, d / (d - 2)), exponent);
    case RopeScalingKind::dynamic_ntk: {
      if (sc.seq_len <= sc.original_max_position) return theta;
      const long double stretch =
          factor * static_cast<long double>(sc.seq_len) / static_cast<long double>(sc.original_max_position) -
          (factor - 1);
      return std::pow(base * std::pow(stretch, d / (d - 2)), exponent);
    }
    case RopeScalingKind::yarn: {
      const long double w = yarn_weight(s, p);
      return theta / factor * (1 - w) + theta * w;
    }
    case RopeScalingKind::llama3: {
      const long double wavelen = 2 * std::numbers::pi_v<long double> / theta;
      const long double l0 = static_cast<long double>(sc.original_max_position);
      if (wavelen < l0 / sc.high_freq_factor) return theta;
      if (wavelen > l0 / sc.low_freq_factor) return theta / factor;
      const long double smooth = (l0 / wavelen - sc.low_freq_factor) / (sc.high_freq_factor - sc.low_freq_factor);
      return (1 - smooth) * theta / factor + smooth * theta;
    }
    case RopeScalingKind::longrope:  // the list is the spec's choice (L > L0), the arithmetic ours
      return theta / static_cast<long double>(sc.longrope_factors()[static_cast<std::size_t>(p)]);
  }
  return theta;
}

inline Frequency split(long double f) {
  const double hi = static_cast<double>(f);
  return {hi, static_cast<double>(f - static_cast<long double>(hi))};
}

/// Frequencies of the rotary_dim / 2 pairs of a RoPE spec; computed once per call.
inline std::vector<Frequency> rope_frequencies(const RopeSpec& s) {
  std::vector<Frequency> f(static_cast<std::size_t>(s.rotary_dim / 2));
  for (int p = 0; p < s.rotary_dim / 2; ++p) f[static_cast<std::size_t>(p)] = split(scaled_inv_freq(s, p));
  return f;
}

}  // namespace pecheck::angles
