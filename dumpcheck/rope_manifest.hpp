// The RoPE convention a dump's manifest states, in pecheck's words or in Hugging Face's: the
// "convention" object may hold layout, rotary_dim, base, linear_factor, and HF's rope_theta,
// partial_rotary_factor, head_dim and its rope_scaling dict verbatim. A key outside that
// vocabulary, a value that contradicts another or the data's shape, or a rule the catalogue does
// not model is a dump::FormatError naming it (one line, exit status 2): nothing is ignored.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "dumpcheck/dump_set.hpp"

namespace pecheck::dumpcheck {

/// The spec a statement makes on a pairing (head_dim, rotary_dim, layout): the stated base (else
/// 10000), rule and parameters, the unstated ones at HF's defaults (a dynamic rule at its L0).
RopeSpec stated_spec(const StatedRope& s, RopeSpec pairing);

/// Reads the "convention" object of a RoPE dump whose heads are head_dim wide.
StatedRope read_rope_convention(const nlohmann::json& convention, int head_dim, const std::string& where);

}  // namespace pecheck::dumpcheck
