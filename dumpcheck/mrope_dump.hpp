// M-RoPE dumps (Qwen2-VL, Qwen2.5-VL, Qwen3-VL, GLM-4.1V): the queries or keys before and after
// the rotation, with HF's position_ids (3, n). Each rotated pair turns by one axis's position, so
// the dump is read as three 1-D RoPEs: the pairing and the base as for RoPE, then, pair by pair,
// which axes' positions explain its output (docs/dumps.md, "M-RoPE"); the section is named only
// when one assignment of pairs to axes fits every pair.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dumpcheck/agreement.hpp"
#include "dumpcheck/dump_set.hpp"
#include "spec/mrope.hpp"

namespace pecheck::dumpcheck {

/// Reads the manifest's convention of family "mrope" into d.rope and d.mrope (d.width is the
/// head_dim): layout, rotary_dim, base or rope_theta, mrope_section and mrope_interleaved, at the
/// top level or in HF's rope_parameters or rope_scaling (whose type "mrope", transformers 4's,
/// means default). A scaling rule other than default is a FormatError: M-RoPE has none here.
void read_mrope_convention(const nlohmann::json& convention, Dump& d, const std::string& where);

struct MropeFit {
  MropeSpec spec;  ///< over the rotated dims: spec.head_dim is rope.rotary_dim
  RopeSpec rope;   ///< the dump's head: head_dim, rotary_dim, layout and base of the 1-D RoPE each pair is part of
  bool ambiguous = false;     ///< several assignments explain every pair and differ where the positions never tell
  std::vector<double> exact;  ///< the dump's output under spec, from the 50-digit reference (what agreement compares)
  std::string text;           ///< "M-RoPE half_split, rotary_dim 128 of 128, sectioned [16, 24, 24], base 1e+06 ..."
};

/// Throws FitError when no M-RoPE explains the pairs.
MropeFit fit_mrope(const Dump& d);

/// mrope.agrees_with_reference on the dump f was fitted to: RoPE's agreement against f.exact,
/// each pair judged at its axis's position.
Measurement mrope_agreement(const Dump& d, const MropeFit& f, tol::Contract judged);

}  // namespace pecheck::dumpcheck
