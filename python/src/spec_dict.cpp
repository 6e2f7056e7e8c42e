#include "spec_dict.hpp"

#include <string>

namespace pecheck::python {

using Json = nlohmann::json;

namespace {
std::string str(std::string_view s) { return std::string(s); }
std::string name(SinusoidalFrequencies f) { return f == SinusoidalFrequencies::fairseq ? "fairseq" : "vaswani"; }
}  // namespace

Json spec_json(const SinusoidalSpec& s) {
  return {{"d_model", s.d_model},
          {"base", s.base},
          {"layout", str(layout_name(s.layout))},
          {"frequencies", name(s.frequencies)},
          {"padding_idx", s.padding_idx}};
}

Json spec_json(const LearnedSpec& s) { return {{"max_len", s.max_len}, {"d_model", s.d_model}}; }

Json spec_json(const RopeSpec& s) {
  const RopeScaling& c = s.scaling;
  Json scaling = {{"kind", str(scaling_name(c.kind))},
                  {"factor", c.factor},
                  {"original_max_position", c.original_max_position},
                  {"seq_len", c.seq_len},
                  {"beta_fast", c.beta_fast},
                  {"beta_slow", c.beta_slow},
                  {"low_freq_factor", c.low_freq_factor},
                  {"high_freq_factor", c.high_freq_factor},
                  {"short_factor", c.short_factor},
                  {"long_factor", c.long_factor},
                  {"attention_factor", c.attention_factor},
                  {"mscale", c.mscale},
                  {"mscale_all_dim", c.mscale_all_dim},
                  {"truncate", c.truncate},
                  {"rotated_pairs", c.rotated_pairs}};
  return {{"head_dim", s.head_dim}, {"rotary_dim", s.rotary_dim},
          {"base", s.base},         {"layout", str(layout_name(s.layout))},
          {"scaling", scaling},     {"magnitude", s.magnitude()}};
}

Json spec_json(const AlibiSpec& s) { return {{"heads", s.heads}, {"causal", s.causal}}; }

Json spec_json(const ShawSpec& s) { return {{"max_distance", s.max_distance}, {"head_dim", s.head_dim}}; }

Json spec_json(const T5Spec& s) {
  return {{"heads", s.heads},
          {"num_buckets", s.num_buckets},
          {"max_distance", s.max_distance},
          {"bidirectional", s.bidirectional}};
}

Json spec_json(const AttentionSpec& s) {
  // RoPE's whole spec (rotary_dim, scaling rule) as the rope operation's, as a plugin's `rope`.
  Json rope = s.pe == AttentionPE::rope ? spec_json(s.rope()) : Json(nullptr);
  // T5's bucketing as the t5 operation's (its table arrives as t5_table), as a plugin's `t5`.
  Json t5 = s.pe == AttentionPE::t5 ? spec_json(s.t5()) : Json(nullptr);
  return {{"heads", s.heads},
          {"rope", rope},
          {"t5", t5},
          {"kv_heads", s.kv_count()},
          {"window", s.window},
          {"queries", s.queries},
          {"head_dim", s.head_dim},
          {"causal", s.causal},
          {"scale", s.effective_scale()},
          {"pe", str(pe_name(s.pe))},
          {"pe_base", s.pe_base},
          {"rope_layout", str(layout_name(s.rope_layout))},
          {"shaw_max_distance", s.shaw_max_distance}};
}

Json spec_json(const Sinusoidal2dSpec& s) {
  return {{"d_model", s.d_model}, {"base", s.base}, {"layout", str(layout_name(s.layout))}};
}

Json spec_json(const Rope2dSpec& s) {
  return {{"head_dim", s.head_dim},
          {"base", s.base},
          {"layout", str(layout_name(s.layout))},
          {"pairing", str(pairing_name(s.pairing))},
          {"frequencies", str(frequencies_name(s.frequencies))}};
}

Json spec_json(const MropeSpec& s) {
  return {{"head_dim", s.head_dim},
          {"base", s.base},
          {"mrope_section", s.mrope_section},
          {"assignment", str(assignment_name(s.assignment))},
          {"layout", str(layout_name(s.layout))}};
}

Json spec_json(const RelativeBias2dSpec& s) {
  return {{"heads", s.heads},
          {"window_rows", s.window_rows},
          {"window_cols", s.window_cols},
          {"class_token", s.class_token}};
}

}  // namespace pecheck::python
