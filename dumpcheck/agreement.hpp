// What `validate --dump` measures on a dump: agreement with the 50-digit reference under the
// fitted (or stated) convention, reported per position octave, and the convention-free checks
// (a RoPE pair keeps its norm; a sinusoid entry stays in [-1, 1] and each row has |PE|^2 = d/2).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dumpcheck/dump_set.hpp"

namespace pecheck::dumpcheck {

/// Positions [lo, hi): [0,1), [1,2), [2,4), [4,8), ...
struct Octave {
  std::int64_t lo = 0, hi = 1;
  std::size_t tokens = 0;
  double max_u = 0;    ///< worst error in u of the dtype
  double max_abs = 0;  ///< worst absolute difference from the reference
};

struct Measurement {
  std::string property;  ///< the catalogue id the check implements on a dump
  double bound_u = 0;
  double max_u = 0;
  std::string where;  ///< the worst place: position, token, head, dims, values
  std::vector<Octave> octaves;
  std::string summary;  ///< the finding in plain words
  bool holds() const { return max_u <= bound_u; }
};

Measurement rope_agreement(const Dump& d, const RopeSpec& s);
Measurement rope_norms(const Dump& d, const RopeSpec& s);
Measurement sinusoidal_agreement(const Dump& d, const SinusoidalSpec& s);
Measurement sinusoidal_bounds(const Dump& d, const SinusoidalSpec& s);
/// y = x + table[pos] rounded once, for positions in the table; a row at a position past it
/// means the encoder accepted it (a failure); a recorded refusal is stated in the summary.
Measurement learned_agreement(const Dump& d);

}  // namespace pecheck::dumpcheck
