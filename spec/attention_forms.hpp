// The call forms of attention beyond the plain one (every token queries all n keys, K/V with the
// queries' heads, the default scale, full unscaled RoPE): what an attention encoder declares it
// takes. Serving kernels differ exactly here (grouped-query heads, sliding windows, a decode step
// against a cache, a model's own scale), so an encoder that states its forms is sent every case
// inside them and none outside: a property whose cases all need a form it lacks is not
// applicable, saying which form, never a silent skip.
#pragma once

#include <array>
#include <optional>
#include <string_view>

#include "spec/conventions.hpp"

namespace pecheck {

enum class AttentionForm {
  grouped_query,  ///< kv_heads < heads (GQA, MQA)
  window,         ///< a causal sliding window
  decode,         ///< fewer queries than keys: a decode step or a chunk against a cache
  scale,          ///< a scale the case states (else 1/sqrt(head_dim))
  rope_rules,     ///< RoPE with a partial rotary_dim or a scaling rule
};

inline constexpr std::array<AttentionForm, 5> kAttentionForms{AttentionForm::grouped_query, AttentionForm::window,
                                                              AttentionForm::decode, AttentionForm::scale,
                                                              AttentionForm::rope_rules};

inline std::string_view form_name(AttentionForm f) {
  switch (f) {
    case AttentionForm::grouped_query:
      return "grouped_query";
    case AttentionForm::window:
      return "window";
    case AttentionForm::decode:
      return "decode";
    case AttentionForm::scale:
      return "scale";
    case AttentionForm::rope_rules:
      return "rope_rules";
  }
  return "?";
}

/// What a form means, for a reason a user reads.
inline std::string_view form_meaning(AttentionForm f) {
  switch (f) {
    case AttentionForm::grouped_query:
      return "grouped-query heads (kv_heads < heads)";
    case AttentionForm::window:
      return "a sliding window";
    case AttentionForm::decode:
      return "fewer queries than keys (a decode step)";
    case AttentionForm::scale:
      return "a stated scale";
    case AttentionForm::rope_rules:
      return "partial or scaled RoPE";
  }
  return "?";
}

/// Whether a call with this spec is of form f.
inline bool needs(const AttentionSpec& s, AttentionForm f) {
  switch (f) {
    case AttentionForm::grouped_query:
      return s.kv_count() != s.heads;
    case AttentionForm::window:
      return s.window > 0;
    case AttentionForm::decode:
      return s.queries > 0;
    case AttentionForm::scale:
      return s.scale.has_value();
    case AttentionForm::rope_rules:
      return s.rope_extended();
  }
  return false;
}

/// A set of forms (a bit each).
struct AttentionForms {
  unsigned bits = 0;

  static AttentionForms all() { return {(1u << kAttentionForms.size()) - 1}; }
  bool has(AttentionForm f) const { return bits & (1u << static_cast<unsigned>(f)); }
  void add(AttentionForm f) { bits |= 1u << static_cast<unsigned>(f); }
  /// The first form a call with spec s needs and this set lacks, or nothing.
  std::optional<AttentionForm> lacking(const AttentionSpec& s) const {
    for (AttentionForm f : kAttentionForms)
      if (!has(f) && needs(s, f)) return f;
    return std::nullopt;
  }
};

/// The form named `name`, or nothing.
inline std::optional<AttentionForm> form_named(std::string_view name) {
  for (AttentionForm f : kAttentionForms)
    if (form_name(f) == name) return f;
  return std::nullopt;
}

}  // namespace pecheck
