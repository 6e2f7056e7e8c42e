// The RoPE convention a dump's manifest (or a Python pin, or `pecheck manifest`) states, in
// pecheck's words or in Hugging Face's: the "convention" object may hold layout, rotary_dim,
// base, linear_factor; transformers 4.x's rope_theta, partial_rotary_factor, head_dim and
// rope_scaling dict verbatim; transformers 5's rope_parameters dict verbatim, flat or keyed by
// layer type with "layer_type" naming the one meant (docs/dumps.md). A key outside that
// vocabulary, a field of another rope_type, two keys that state one thing differently, a value
// that contradicts the data's shape, or a rule the catalogue does not model is a
// tensorfiles::FormatError naming it (one line, exit status 2): nothing is ignored.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "dumpcheck/dump_set.hpp"

namespace pecheck::dumpcheck {

/// The spec a statement makes on a pairing (head_dim, rotary_dim, layout): the stated base (else
/// 10000), rule and parameters, the unstated ones at HF's defaults (a dynamic rule at its L0).
RopeSpec stated_spec(const StatedRope& s, RopeSpec pairing);

/// Reads a "convention" object for heads of head_dim; each message starts "{where}: " (where names
/// the object: "DIR/manifest.json: convention", "convention").
StatedRope read_rope_convention(const nlohmann::json& convention, int head_dim, const std::string& where);

}  // namespace pecheck::dumpcheck
