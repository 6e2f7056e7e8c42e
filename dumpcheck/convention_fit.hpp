// Convention detection: which member of a family a dump's encoder is, found from the data alone
// by fitting it (RoPE: layout, rotary_dim, base, the scaling rule and its parameters, see
// dumpcheck/rope_rules.hpp; sinusoid: layout, base), with every field the manifest states kept
// as stated.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include "dumpcheck/dump_set.hpp"
#include "dumpcheck/rope_rules.hpp"

namespace pecheck::dumpcheck {

struct RopeFit {
  RopeSpec spec;
  RuleReading reading;                  ///< every scaling rule tried, and how well each explains the pairs
  std::vector<PairFrequency> measured;  ///< each rotated pair's frequency as the dump gives it
  std::string text;  ///< "RoPE half_split, rotary_dim 64 of 128, base 500000 (fit 500003.1), no scaling"
};

struct SinusoidalFit {
  SinusoidalSpec spec;
  double fitted_base = 0;
  std::string text;
};

/// No member of the family fits the data (the encoder is not a RoPE, or every position is 0 and
/// nothing is stated): a finding about the encoder, not bad input.
struct FitError : std::runtime_error {
  using std::runtime_error::runtime_error;
  FitError(const std::string& what, RuleReading r) : std::runtime_error(what), reading(std::move(r)) {}
  std::optional<RuleReading> reading;  ///< RoPE: every rule tried, when the pairs were measured
};

/// One pair's angle at each distinct position, from the (token, head) where the pair is largest.
using Angles = std::map<std::int64_t, double>;

/// Frequency of a pair from its angles: unwrapped over increasing positions, starting at a
/// position small enough (pos * 1 < pi) that the first angle cannot have wrapped. Returns the
/// frequency and the position it was last refined at (its precision), or nothing.
std::optional<std::pair<double, std::int64_t>> unwrap(const Angles& angles);

/// RoPE's rotary_dim (the dims past it come out bitwise unchanged) and layout (the pairing that
/// keeps each pair's norm), stated or fitted; base 10000 and no scaling until fit_rope.
RopeSpec fit_rope_pairing(const Dump& d);

/// Throws FitError when no convention fits.
RopeFit fit_rope(const Dump& d);
SinusoidalFit fit_sinusoidal(const Dump& d);

/// A fitted value rounded to 2 significant digits (bases and factors are round numbers: 10000,
/// 5e5, 1e6, 8) when it is that close: within 4 of its relative standard errors, at least 1e-4
/// and at most 3e-3. A value that is not round lands within 1e-4 of a round one about once in a
/// hundred; within 3e-3 (a fit from few, slowly turning bf16 pairs) a few times in ten.
double snap(double fitted, double relative_error = 0);

}  // namespace pecheck::dumpcheck
