// A Python convention (a dict) as pins (harness/pins.hpp): RoPE in Hugging Face's words, read as a
// dump's manifest reads them (dumpcheck/rope_manifest.hpp: transformers 5's rope_parameters, flat
// or keyed by layer type with layer_type; 4.x's rope_theta, partial_rotary_factor, head_dim,
// rope_scaling; pecheck's layout and rotary_dim); M-RoPE in Qwen-VL's (mrope_section at the top,
// in rope_scaling or in rope_parameters); the other operations in the field names of
// spec/conventions.hpp (2-D RoPE: base, layout, pairing, head_dim). An unknown key, a wrong type
// or a spec it cannot make is std::invalid_argument naming the key (ValueError), its message
// starting "convention: " once.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>

#include "harness/pins.hpp"

namespace pecheck::python {

/// The pins of `convention` for operation `op`; throws std::invalid_argument on anything wrong.
std::shared_ptr<const Pins> pins_from_convention(Op op, const nlohmann::json& convention);

}  // namespace pecheck::python
