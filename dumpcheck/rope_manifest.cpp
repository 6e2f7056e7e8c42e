#include "dumpcheck/rope_manifest.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>

#include "dumpcheck/rope_fields.hpp"
#include "tensorfiles/array.hpp"

namespace pecheck::dumpcheck {

namespace {

using fields::Dialect;
using fields::RopeStatement;
using tensorfiles::FormatError;
using Json = nlohmann::json;

constexpr std::array<std::string_view, 10> kConventionKeys = {
    "layout",       "rotary_dim",      "base",      "linear_factor", "rope_theta", "partial_rotary_factor", "head_dim",
    "rope_scaling", "rope_parameters", "layer_type"};

int integer(const Json& c, const char* key, const std::string& where) {
  const Json& v = c.at(key);
  if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > 1 << 20)
    throw FormatError(fmt::format("{}: \"{}\" must be a non-negative integer, got {}", where, key, v.dump()));
  return v.get<int>();
}

/// The rope_parameters dict the convention states, with the key it sits under: the flat one, or
/// the layer type's that "layer_type" selects when it is keyed by layer type (transformers 5's
/// Gemma 2/3, ModernBERT: {"full_attention": {...}, "sliding_attention": {...}}).
std::optional<std::pair<const Json*, std::string>> selected_parameters(const Json& c, const std::string& where) {
  const bool selects = c.contains("layer_type");
  if (selects && !c.at("layer_type").is_string())
    throw FormatError(fmt::format("{}: \"layer_type\" must be a string, got {}", where, c.at("layer_type").dump()));
  if (!c.contains("rope_parameters") || c.at("rope_parameters").is_null()) {
    if (selects)
      throw FormatError(
          fmt::format("{}: \"layer_type\" selects a layer type of rope_parameters, but there is none", where));
    return std::nullopt;
  }
  const Json& rp = c.at("rope_parameters");
  if (!rp.is_object())
    throw FormatError(fmt::format("{}: rope_parameters: must be a JSON object, got {}", where, rp.dump()));
  std::vector<std::string> layers, others;
  for (const auto& [key, value] : rp.items()) (value.is_object() ? layers : others).push_back(key);
  if (layers.empty()) {
    if (selects)
      throw FormatError(fmt::format(
          "{}: \"layer_type\" selects a layer type, but rope_parameters is not keyed by layer type (it is one RoPE "
          "for every layer)",
          where));
    return std::pair{&rp, std::string("rope_parameters")};
  }
  for (const std::string& key : others)
    if (!rp.at(key).is_null())  // null: a layer type without RoPE (HF skips it)
      throw FormatError(fmt::format(
          "{}: rope_parameters mixes layer types ({}) with \"{}\": keyed by layer type, each value is one layer "
          "type's RoPE dict",
          where, fmt::join(layers, ", "), key));
  for (const std::string& key : others) layers.push_back(key);
  std::sort(layers.begin(), layers.end());
  if (!selects)
    throw FormatError(fmt::format("{}: rope_parameters is keyed by layer type ({}): choose one with \"layer_type\"",
                                  where, fmt::join(layers, ", ")));
  const std::string layer = c.at("layer_type").get<std::string>();
  if (!rp.contains(layer))
    throw FormatError(fmt::format("{}: layer_type \"{}\" is not among rope_parameters' layer types ({})", where, layer,
                                  fmt::join(layers, ", ")));
  if (rp.at(layer).is_null())
    throw FormatError(fmt::format("{}: layer_type \"{}\" has no RoPE (its rope_parameters entry is null: a NoPE layer)",
                                  where, layer));
  return std::pair{&rp.at(layer), "rope_parameters." + layer};
}

/// What the top level states in pecheck's words (base, linear_factor) and in 4.x's (rope_theta,
/// partial_rotary_factor beside rope_scaling).
RopeStatement top_level(const Json& c, const std::string& where) {
  RopeStatement s;
  s.rope_theta = {fields::number(c, "base", where), "base"};
  fields::merge(s, RopeStatement{.rope_theta = {fields::number(c, "rope_theta", where), "rope_theta"}}, where);
  s.partial_rotary_factor = {fields::number(c, "partial_rotary_factor", where), "partial_rotary_factor"};
  if (const auto f = fields::number(c, "linear_factor", where)) {
    s.rope_type = {*f == 1.0 ? "default" : "linear", "linear_factor"};
    s.factor = {f, "linear_factor"};
  }
  return s;
}

RopeScalingKind kind_of(const std::string& type) {
  if (type == "linear") return RopeScalingKind::linear;
  if (type == "dynamic") return RopeScalingKind::dynamic_ntk;
  if (type == "ntk") return RopeScalingKind::ntk;
  if (type == "yarn") return RopeScalingKind::yarn;
  if (type == "llama3") return RopeScalingKind::llama3;
  if (type == "longrope") return RopeScalingKind::longrope;
  return RopeScalingKind::none;  // default (proportional is resolved apart)
}

/// The merged statement as pecheck's StatedRope for heads of head_dim: partial_rotary_factor
/// gives rotary_dim (HF: int(head_dim * f)), or, for the proportional rope_type, the pairs that
/// turn (int(f * head_dim // 2)) over the whole head.
void resolve(const RopeStatement& m, int head_dim, StatedRope& s, const std::string& where) {
  s.base = m.rope_theta.value;
  s.factor = m.factor.value;
  s.original_max_position = m.original_max_position_embeddings.value;
  s.low_freq_factor = m.low_freq_factor.value, s.high_freq_factor = m.high_freq_factor.value;
  s.beta_fast = m.beta_fast.value, s.beta_slow = m.beta_slow.value;
  s.truncate = m.truncate.value;
  s.mscale = m.mscale.value, s.mscale_all_dim = m.mscale_all_dim.value;
  s.attention_factor = m.attention_factor.value;
  s.short_factor = m.short_factor.value, s.long_factor = m.long_factor.value;
  if (m.rope_type.value) s.rule = kind_of(*m.rope_type.value);
  const auto& prf = m.partial_rotary_factor;
  if (prf.value && !(*prf.value > 0 && *prf.value <= 1))
    throw FormatError(fmt::format("{}: {} must be in (0, 1], got {}", where, prf.key, *prf.value));
  if (m.rope_type.value == "proportional") {
    if (s.rotary_dim && *s.rotary_dim != head_dim)
      throw FormatError(fmt::format(
          "{}: rotary_dim {} contradicts {} \"proportional\", which turns pairs over the whole head (head_dim {}, "
          "frequencies base^(-2i/head_dim))",
          where, *s.rotary_dim, m.rope_type.key, head_dim));
    s.rotary_dim = head_dim;
    const double f = prf.value.value_or(1.0);
    const int pairs = static_cast<int>(std::floor(f * head_dim / 2));  // HF: int(f * head_dim // 2)
    if (pairs < 1)
      throw FormatError(fmt::format("{}: {} {} leaves rope_type \"proportional\" no pair to turn at head_dim {}", where,
                                    prf.key, f, head_dim));
    s.rotated_pairs = pairs;
    s.factor = s.factor.value_or(1.0);
    s.rule = *s.factor == 1.0 ? RopeScalingKind::none : RopeScalingKind::linear;
  } else if (prf.value) {
    const int rot = static_cast<int>(head_dim * *prf.value);  // HF: int(head_dim * partial_rotary_factor)
    if (s.rotary_dim && *s.rotary_dim != rot)
      throw FormatError(fmt::format("{}: rotary_dim {} contradicts {} {} (rotary_dim {})", where, *s.rotary_dim,
                                    prf.key, *prf.value, rot));
    s.rotary_dim = rot;
  }
  if (s.short_factor && !s.rotary_dim)  // two rotated dims per LongRoPE factor
    s.rotary_dim = 2 * static_cast<int>(s.short_factor->size());
}

}  // namespace

RopeSpec stated_spec(const StatedRope& s, RopeSpec pairing) {
  RopeSpec r = pairing;
  r.base = s.base.value_or(10000);
  if (s.layout) r.layout = *s.layout;
  if (s.rotary_dim) r.rotary_dim = *s.rotary_dim;
  if (s.rule && *s.rule != RopeScalingKind::none) {
    RopeScaling& sc = r.scaling;
    sc = {.kind = *s.rule, .factor = s.factor.value_or(1)};
    if (*s.rule == RopeScalingKind::llama3) sc.original_max_position = 8192;
    sc.original_max_position = s.original_max_position.value_or(sc.original_max_position);
    sc.low_freq_factor = s.low_freq_factor.value_or(sc.low_freq_factor);
    sc.high_freq_factor = s.high_freq_factor.value_or(sc.high_freq_factor);
    sc.beta_fast = s.beta_fast.value_or(sc.beta_fast);
    sc.beta_slow = s.beta_slow.value_or(sc.beta_slow);
    sc.truncate = s.truncate.value_or(true);
    sc.mscale = s.mscale.value_or(0), sc.mscale_all_dim = s.mscale_all_dim.value_or(0);
    sc.attention_factor = s.attention_factor.value_or(0);
    sc.seq_len = sc.original_max_position;
    if (*s.rule == RopeScalingKind::longrope) {  // the short factors (L = L0); the reader tries both
      sc.short_factor = s.short_factor.value_or(std::vector<double>{});
      sc.long_factor = s.long_factor.value_or(std::vector<double>{});
    }
  }
  r.scaling.rotated_pairs = s.rotated_pairs.value_or(0);
  return r;
}

StatedRope read_rope_convention(const Json& c, int head_dim, const std::string& where) {
  if (!c.is_object()) throw FormatError(fmt::format("{}: must be a JSON object, got {}", where, c.dump()));
  for (const auto& [key, value] : c.items())
    if (std::find(kConventionKeys.begin(), kConventionKeys.end(), key) == kConventionKeys.end())
      throw FormatError(
          fmt::format("{}: unknown key \"{}\" (the convention takes {}; a rule's fields go inside rope_parameters or "
                      "rope_scaling)",
                      where, key, fmt::join(kConventionKeys, ", ")));
  StatedRope s;
  if (c.contains("layout")) {
    const Json& l = c.at("layout");
    if (l != "interleaved" && l != "half_split")
      throw FormatError(fmt::format("{}: layout must be interleaved or half_split, got {}", where, l.dump()));
    s.layout = l == "interleaved" ? RopeLayout::interleaved : RopeLayout::half_split;
  }
  if (c.contains("head_dim") && integer(c, "head_dim", where) != head_dim)
    throw FormatError(
        fmt::format("{}: head_dim {} but the heads are {} wide", where, c.at("head_dim").dump(), head_dim));
  if (c.contains("rotary_dim")) s.rotary_dim = integer(c, "rotary_dim", where);
  // Every source of the statement, merged: two that state one field differently are an error.
  RopeStatement stated = top_level(c, where);
  if (c.contains("rope_scaling") && !c.at("rope_scaling").is_null())
    fields::merge(stated, fields::read_rope_dict(c.at("rope_scaling"), Dialect::rope_scaling, "rope_scaling", where),
                  where);
  if (const auto p = selected_parameters(c, where))
    fields::merge(stated, fields::read_rope_dict(*p->first, Dialect::rope_parameters, p->second, where), where);
  resolve(stated, head_dim, s, where);
  // What pecheck can check of the statement alone: the spec it makes must be valid.
  try {
    stated_spec(s, RopeSpec{.head_dim = head_dim, .rotary_dim = s.rotary_dim.value_or(head_dim)}).validate();
  } catch (const std::invalid_argument& e) {
    throw FormatError(fmt::format("{}: {}", where, e.what()));
  }
  return s;
}

}  // namespace pecheck::dumpcheck
