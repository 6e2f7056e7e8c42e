// Convention detection: which member of a family a dump's encoder is, found from the data alone
// by fitting it (RoPE: layout, rotary_dim, base, linear factor; sinusoid: layout, base), with
// every field the manifest states kept as stated.
#pragma once

#include <stdexcept>
#include <string>

#include "dumpcheck/dump_set.hpp"

namespace pecheck::dumpcheck {

struct RopeFit {
  RopeSpec spec;
  double fitted_base = 0, fitted_factor = 1;  ///< the raw fit, before rounding to a round value
  std::string text;                           ///< "RoPE half-split, rotary_dim 64 of 128, base 5e+05 (fit 500003)"
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
};

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
