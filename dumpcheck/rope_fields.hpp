// One Hugging Face RoPE dict read field by field: transformers 5's rope_parameters (flat, or one
// layer type's) or 4.x's rope_scaling. Each rope_type takes its own fields, as
// modeling_rope_utils.py's _compute_* functions read them; a field of another type, an unknown
// key or a value of the wrong type is a tensorfiles::FormatError naming the key (one line). What the
// dict states is kept with the key that stated it, so that two statements that contradict each
// other can be named (dumpcheck/rope_manifest.cpp merges them).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace pecheck::dumpcheck::fields {

/// A stated value and the key that stated it ("rope_parameters.factor", "linear_factor").
template <class T>
struct Said {
  std::optional<T> value;
  std::string key;
};

/// What one source (a dict, or the convention's top level) states of RoPE, in HF's terms.
struct RopeStatement {
  /// HF's rope_type: default, linear, dynamic, yarn, longrope (older: su), llama3, proportional,
  /// or pecheck's ntk.
  Said<std::string> rope_type;
  Said<double> rope_theta, partial_rotary_factor, factor;
  Said<std::int64_t> original_max_position_embeddings;
  Said<double> low_freq_factor, high_freq_factor;             ///< llama3
  Said<double> beta_fast, beta_slow, mscale, mscale_all_dim;  ///< yarn
  Said<bool> truncate;                                        ///< yarn
  Said<double> attention_factor;                              ///< yarn, longrope
  Said<std::vector<double>> short_factor, long_factor;        ///< longrope
};

/// Which dict: 4.x's rope_scaling names its rope_type (or older type) and holds only the rule's
/// fields; transformers 5's rope_parameters defaults rope_type to "default" and also holds
/// rope_theta and partial_rotary_factor.
enum class Dialect { rope_scaling, rope_parameters };

/// Reads dict `r`, stated under the key `path` ("rope_scaling", "rope_parameters.full_attention");
/// messages start "{where}: {path}: ".
RopeStatement read_rope_dict(const nlohmann::json& r, Dialect dialect, const std::string& path,
                             const std::string& where);

/// Adds what `from` states to `into`; a field both state with different values is a FormatError
/// naming both keys and values.
void merge(RopeStatement& into, const RopeStatement& from, const std::string& where);

/// A number stated under `key` of `j` (null: not stated): finite, or a FormatError naming it.
std::optional<double> number(const nlohmann::json& j, const std::string& key, const std::string& where);

}  // namespace pecheck::dumpcheck::fields
