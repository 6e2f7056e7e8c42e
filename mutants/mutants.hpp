// The mutation catalogue: deliberately wrong encoders, each a real bug class, so that the
// property catalogue is proven to catch them (`pecheck selftest`, tests/mutants_test.cpp). Each
// wraps the scalar backend and breaks one thing.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "interface/encoder.hpp"

namespace pecheck::mutants {

struct Mutant {
  std::string name;       ///< what is wrong, in a few words
  std::string source;     ///< where this bug class comes from
  std::string caught_by;  ///< the property that must fail on it (docs/mutants.md says why)
  std::unique_ptr<Encoder> (*make)();
};

/// The catalogue of mutants (mutants/mutants_absolute.cpp), the relational ones included.
const std::vector<Mutant>& mutants();

/// The catalogue's mutant whose encoder is named `encoder_name` ("mutant-rope-always-half-split");
/// std::invalid_argument when there is none.
std::unique_ptr<Encoder> make_mutant_named(std::string_view encoder_name);

/// Mutants that only the relational properties (inverse, offset, NaN parity, determinism, the
/// causal mask, translation) are there to catch (mutants/mutants_relational.cpp).
std::vector<Mutant> relational_mutants();

/// Mutants of numerical technique: angles, frequencies, pairings, softmax
/// (mutants/mutants_numeric.cpp).
std::vector<Mutant> numeric_mutants();

/// Mutants of RoPE scaling (linear, NTK, YaRN, Llama 3) and of rotary-kernel bookkeeping
/// (mutants/mutants_scaling.cpp).
std::vector<Mutant> scaling_mutants();

/// Mutants of LongRoPE: the factor lists and the attention factor (mutants/mutants_longrope.cpp).
std::vector<Mutant> longrope_mutants();

/// Mutants of position tables and score biases: fp16 positions, T5 buckets
/// (mutants/mutants_bias.cpp).
std::vector<Mutant> bias_mutants();

/// Mutants of multimodal RoPE: the assignment, the sections, the pair layout
/// (mutants/mutants_mrope.cpp).
std::vector<Mutant> mrope_mutants();

/// Mutants of attention as inference engines call it: the decode query's RoPE position, the
/// mask's alignment, RoPE's scaling and rotary_dim (mutants/mutants_inference.cpp).
std::vector<Mutant> inference_mutants();

/// Mutants of attention over key tiles, flash-style: the rescale, the ragged last tile, the causal
/// tile (mutants/mutants_tiles.cpp).
std::vector<Mutant> tile_mutants();

/// The scalar backend behind a forwarding wrapper, for mutants to override one operation.
std::unique_ptr<Encoder> make_forwarding_scalar(std::string name);

}  // namespace pecheck::mutants
