// What `validate --dump` measures on a dump: agreement with the 50-digit reference under the
// fitted (or stated) convention, reported per position octave, and the convention-free checks
// (a RoPE pair keeps its norm; a sinusoid entry stays in [-1, 1] and each row has |PE|^2 = d/2).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dumpcheck/dump_set.hpp"
#include "harness/tolerance.hpp"

namespace pecheck::dumpcheck {

/// Positions [lo, hi): [0,1), [1,2), [2,4), [4,8), ...
struct Octave {
  std::int64_t lo = 0, hi = 1;
  std::size_t tokens = 0;
  double max_u = 0;      ///< worst error in u of the dtype
  double max_abs = 0;    ///< worst absolute difference from the reference
  double max_ratio = 0;  ///< worst error over its bound (a contract's bound may grow with position)
  bool holds() const { return max_ratio <= 1; }
};

/// Agreement under the accuracy contracts (harness/tolerance.hpp) of RoPE or attention: which one
/// the check was judged by, the strongest one every pair (output) of the dump meets, and where the
/// exact one stops.
struct ContractReading {
  tol::Contract judged = tol::Contract::exact;
  tol::Contract weakest = tol::Contract::fp32_angles;  ///< the last rung of the ladder read
  std::optional<tol::Contract> met;                    ///< nullopt: not even fp32 angles (a wrong convention)
  std::optional<std::int64_t> exact_to;  ///< the exact contract holds below this position; nullopt: everywhere
  std::string text() const;              ///< "fp32-angles contract met; exact to position 4"
};

struct Measurement {
  std::string property;    ///< the catalogue id the check implements on a dump
  double bound_u = 0;      ///< the bound (for a contract that grows with position, at position 0)
  std::string bound_text;  ///< "2 u", or "the fp32-angles contract"
  double max_u = 0;
  double max_ratio = 0;  ///< worst error over its own bound: the check holds when <= 1
  std::string where;     ///< the worst place: position, token, head, dims, values
  std::vector<Octave> octaves;
  std::string filed_by = "position";         ///< what the octaves are of: "position", "distance", "key position"
  std::string summary;                       ///< the finding in plain words
  std::optional<ContractReading> contracts;  ///< RoPE agreement only
  bool holds() const { return max_ratio <= 1; }
};

Measurement rope_agreement(const Dump& d, const RopeSpec& s, tol::Contract judged = tol::Contract::exact);
/// The reference output of RoPE s for the dump's inputs, token t turned to positions[t].
std::vector<double> rope_exact(const Dump& d, const RopeSpec& s, std::span<const std::int64_t> positions);
/// The position that turned rotated pair `pair` of token `token` (M-RoPE: its axis's).
using PairPosition = std::function<std::int64_t(std::size_t token, int pair)>;
/// rope_agreement against a given exact output, each pair judged at the position that turned it
/// (contract bounds, octaves and the contracts met): what RoPE and M-RoPE dumps share.
Measurement rotation_agreement(const Dump& d, const RopeSpec& s, std::span<const double> exact,
                               const PairPosition& position_of, tol::Contract judged);
/// Norms move only by the trig and the arithmetic, never by the angle: exact, else dtype-trig.
Measurement rope_norms(const Dump& d, const RopeSpec& s, tol::Contract judged = tol::Contract::exact);
Measurement sinusoidal_agreement(const Dump& d, const SinusoidalSpec& s);
Measurement sinusoidal_bounds(const Dump& d, const SinusoidalSpec& s);
/// y = x + table[pos] rounded once, for positions in the table; a row at a position past it
/// means the encoder accepted it (a failure); a recorded refusal is stated in the summary.
Measurement learned_agreement(const Dump& d);

}  // namespace pecheck::dumpcheck
