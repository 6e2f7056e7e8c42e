// Which RoPE scaling rule made a dump's pair frequencies: every rule the catalogue knows (none,
// linear, NTK, dynamic NTK, YaRN with its attention factor, Llama 3) is fitted to the measured
// frequencies, and a rule is named only when it explains every pair within that pair's own
// tolerance (docs/error-model.md, "Reading a RoPE convention from a dump"). Nothing is weighted
// away: a frequency set no rule explains reads as "no known rule", with the nearest candidates.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dumpcheck/dump_set.hpp"

namespace pecheck::dumpcheck {

/// One rotated pair as measured from a dump: its angular frequency (radians per position), the
/// last position that refined it, and the magnitude it gives the rotated pair (|y| / |x|).
struct PairFrequency {
  double freq = 0;         ///< 0 when the pair never turned measurably
  std::int64_t reach = 0;  ///< the frequency is good to (angle error) / reach
  bool measured() const { return freq > 0 && reach > 0; }
};

/// The allowed |ln w_measured - ln w_rule| for a pair: the angle error of one reading (8u of the
/// dtype, see docs/error-model.md) over the angle turned by `reach`, plus the frequency error of a
/// framework that forms its frequencies in fp32 (8 u_f32). Infinite for an unmeasured pair.
double frequency_tolerance(const PairFrequency& p, DType dt);

/// The allowed |gain - expected| for the magnitude of the rotated pairs.
double gain_tolerance(DType dt);

/// A rule with its fitted parameters, and how well it explains the pairs.
struct RuleCandidate {
  RopeSpec spec;
  double worst = 0;    ///< max over measured pairs of |ln w - ln w_rule| / tolerance (<= 1: explained)
  int worst_pair = 0;  ///< where
  double gain = 1;     ///< the magnitude the rule gives the rotated pairs
  bool explains = false;
  std::string text;  ///< "Llama 3, factor 8, L0/low_freq_factor 8192, L0/high_freq_factor 2048"
};

struct RuleReading {
  /// The named rule (spec with base and scaling) when one explains every pair, or when several
  /// do and give the same frequency to every pair; nullopt otherwise.
  std::optional<RopeSpec> spec;
  bool ambiguous = false;            ///< several rules explain the measured pairs and differ elsewhere
  std::vector<RuleCandidate> tried;  ///< every rule fitted, those that explain first, then nearest first
  double gain = 1;                   ///< measured magnitude of the rotated pairs
  std::string text;                  ///< the reading in one line
};

/// Reads the rule from measured pairs. `pairing` gives head_dim, rotary_dim and layout; `stated`
/// fixes what the manifest states (base, rule, parameters). Stated values are kept: a stated rule
/// the pairs contradict is a reading with no spec that says so.
RuleReading read_rope_rule(const std::vector<PairFrequency>& pairs, double gain, const RopeSpec& pairing,
                           const StatedRope& stated, DType dt);

}  // namespace pecheck::dumpcheck
