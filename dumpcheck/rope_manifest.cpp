#include "dumpcheck/rope_manifest.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>

#include "dump/array.hpp"

namespace pecheck::dumpcheck {

namespace {

using dump::FormatError;
using Json = nlohmann::json;

constexpr std::array<std::string_view, 8> kConventionKeys = {
    "layout", "rotary_dim", "base", "linear_factor", "rope_theta", "partial_rotary_factor", "head_dim", "rope_scaling"};
constexpr std::array<std::string_view, 13> kScalingKeys = {"rope_type",        "type",
                                                           "factor",           "original_max_position_embeddings",
                                                           "low_freq_factor",  "high_freq_factor",
                                                           "beta_fast",        "beta_slow",
                                                           "attention_factor", "mscale",
                                                           "mscale_all_dim",   "short_factor",
                                                           "long_factor"};

template <std::size_t N>
void only_known_keys(const Json& j, const std::array<std::string_view, N>& known, const std::string& where,
                     std::string_view hint) {
  if (!j.is_object()) throw FormatError(fmt::format("{}: must be a JSON object", where));
  for (const auto& [key, value] : j.items())
    if (std::find(known.begin(), known.end(), key) == known.end())
      throw FormatError(fmt::format("{}: unknown key \"{}\"{}", where, key, hint));
}

template <class T>
T get(const Json& j, const char* key, const std::string& where) {
  try {
    return j.at(key).get<T>();
  } catch (const Json::exception&) {
    throw FormatError(fmt::format("{}: \"{}\" has the wrong type", where, key));
  }
}

std::optional<double> number(const Json& j, const char* key, const std::string& where) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  const double v = get<double>(j, key, where);
  if (!std::isfinite(v)) throw FormatError(fmt::format("{}: \"{}\" must be finite", where, key));
  return v;
}

RopeScalingKind rule_named(const std::string& name, const std::string& where) {
  if (name == "default") return RopeScalingKind::none;
  if (name == "linear") return RopeScalingKind::linear;
  if (name == "dynamic") return RopeScalingKind::dynamic_ntk;
  if (name == "ntk") return RopeScalingKind::ntk;
  if (name == "yarn") return RopeScalingKind::yarn;
  if (name == "llama3") return RopeScalingKind::llama3;
  if (name == "longrope" || name == "su") return RopeScalingKind::longrope;
  throw FormatError(
      fmt::format("{}: unknown rope_type \"{}\" (default, linear, dynamic, ntk, yarn, llama3, longrope)", where, name));
}

/// HF's YaRN attention factor: attention_factor, else mscale / mscale_all_dim, else 0.1 ln s + 1.
double yarn_attention_factor(const Json& r, double factor, const std::string& where) {
  auto mscale = [factor](double m) { return factor <= 1 ? 1.0 : 0.1 * m * std::log(factor) + 1.0; };
  if (const auto a = number(r, "attention_factor", where)) return *a;
  const auto m = number(r, "mscale", where), all = number(r, "mscale_all_dim", where);
  if (m && all && *m != 0 && *all != 0) return mscale(*m) / mscale(*all);
  return mscale(1.0);
}

/// A LongRoPE factor list: an array of finite numbers > 0.
std::vector<double> factor_list(const Json& r, const char* key, const std::string& where) {
  if (!r.contains(key) || !r.at(key).is_array() || r.at(key).empty())
    throw FormatError(fmt::format("{}: LongRoPE needs \"{}\", a non-empty array of numbers", where, key));
  std::vector<double> v;
  for (const Json& e : r.at(key)) {
    if (!e.is_number()) throw FormatError(fmt::format("{}: \"{}\" holds a value that is not a number", where, key));
    v.push_back(e.get<double>());
    if (!(std::isfinite(v.back()) && v.back() > 0))
      throw FormatError(fmt::format("{}: \"{}\" entries must be finite and > 0, got {}", where, key, v.back()));
  }
  return v;
}

/// LongRoPE's keys: both lists (which also give rotary_dim, two dims per entry), L0, and either
/// the factor (HF: max_position_embeddings / original_max_position_embeddings) or the attention
/// factor itself.
void read_longrope(const Json& r, StatedRope& s, const std::string& where) {
  s.short_factor = factor_list(r, "short_factor", where);
  s.long_factor = factor_list(r, "long_factor", where);
  if (s.short_factor->size() != s.long_factor->size())
    throw FormatError(fmt::format("{}: short_factor has {} entries, long_factor {}", where, s.short_factor->size(),
                                  s.long_factor->size()));
  if (!s.original_max_position)
    throw FormatError(fmt::format(
        "{}: LongRoPE needs \"original_max_position_embeddings\" (it picks the short or long factors)", where));
  s.attention_factor = number(r, "attention_factor", where);
  if (!s.factor && !s.attention_factor)
    throw FormatError(
        fmt::format("{}: LongRoPE needs \"factor\" (max_position_embeddings / "
                    "original_max_position_embeddings) or \"attention_factor\"",
                    where));
  for (const char* key : {"mscale", "mscale_all_dim", "beta_fast", "beta_slow", "low_freq_factor", "high_freq_factor"})
    if (r.contains(key)) throw FormatError(fmt::format("{}: \"{}\" does not belong to rope_type longrope", where, key));
}

void read_scaling(const Json& r, StatedRope& s, const std::string& where) {
  only_known_keys(r, kScalingKeys, where, "");
  if (!r.contains("rope_type") && !r.contains("type"))
    throw FormatError(fmt::format("{}: rope_scaling needs \"rope_type\" (or HF's older \"type\")", where));
  const std::string name = get<std::string>(r, r.contains("rope_type") ? "rope_type" : "type", where);
  s.rule = rule_named(name, where);
  s.factor = number(r, "factor", where);
  if (s.rule != RopeScalingKind::none && s.rule != RopeScalingKind::longrope && !s.factor)
    throw FormatError(fmt::format("{}: rope_type \"{}\" needs \"factor\"", where, name));
  if (const auto l0 = number(r, "original_max_position_embeddings", where)) {
    if (!(*l0 >= 1) || *l0 != std::floor(*l0))
      throw FormatError(fmt::format("{}: original_max_position_embeddings must be a positive integer", where));
    s.original_max_position = static_cast<std::int64_t>(*l0);
  }
  s.low_freq_factor = number(r, "low_freq_factor", where);
  s.high_freq_factor = number(r, "high_freq_factor", where);
  s.beta_fast = number(r, "beta_fast", where);
  s.beta_slow = number(r, "beta_slow", where);
  if (s.rule == RopeScalingKind::longrope) return read_longrope(r, s, where);
  if (r.contains("short_factor") || r.contains("long_factor"))
    throw FormatError(
        fmt::format("{}: short_factor/long_factor belong to LongRoPE, not to rope_type \"{}\"", where, name));
  if (s.rule == RopeScalingKind::yarn) {
    // The catalogue's YaRN scales cos and sin by 0.1 ln s + 1: another factor is another rule.
    const double f = yarn_attention_factor(r, *s.factor, where),
                 catalogue = *s.factor > 1 ? 0.1 * std::log(*s.factor) + 1 : 1;
    if (std::fabs(f - catalogue) > 1e-12 * catalogue)
      throw FormatError(fmt::format(
          "{}: YaRN attention factor {:.9g} (from attention_factor or mscale) is not the 0.1 ln(factor) + 1 = {:.9g} "
          "that pecheck's catalogue models yet",
          where, f, catalogue));
  } else {
    for (const char* key : {"attention_factor", "mscale", "mscale_all_dim"})
      if (r.contains(key))
        throw FormatError(
            fmt::format("{}: \"{}\" belongs to YaRN or LongRoPE, not to rope_type \"{}\"", where, key, name));
  }
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
    sc.seq_len = sc.original_max_position;
    if (*s.rule == RopeScalingKind::longrope) {  // the short factors (L = L0); the reader tries both
      sc.short_factor = s.short_factor.value_or(std::vector<double>{});
      sc.long_factor = s.long_factor.value_or(std::vector<double>{});
      sc.attention_factor = s.attention_factor.value_or(0);
    }
  }
  return r;
}

StatedRope read_rope_convention(const Json& c, int head_dim, const std::string& where) {
  only_known_keys(c, kConventionKeys, where + ": convention", " (HF's rope_scaling keys go inside \"rope_scaling\")");
  StatedRope s;
  if (c.contains("layout")) {
    const auto l = get<std::string>(c, "layout", where);
    if (l != "interleaved" && l != "half_split")
      throw FormatError(fmt::format("{}: RoPE layout must be interleaved or half_split, got '{}'", where, l));
    s.layout = l == "interleaved" ? RopeLayout::interleaved : RopeLayout::half_split;
  }
  if (c.contains("head_dim") && get<int>(c, "head_dim", where) != head_dim)
    throw FormatError(fmt::format("{}: convention head_dim {} but the arrays' heads are {} wide", where,
                                  get<int>(c, "head_dim", where), head_dim));
  if (c.contains("rotary_dim")) s.rotary_dim = get<int>(c, "rotary_dim", where);
  if (const auto f = number(c, "partial_rotary_factor", where)) {
    const int rot = static_cast<int>(head_dim * *f);  // HF: int(head_dim * partial_rotary_factor)
    if (s.rotary_dim && *s.rotary_dim != rot)
      throw FormatError(fmt::format("{}: rotary_dim {} contradicts partial_rotary_factor {} (rotary_dim {})", where,
                                    *s.rotary_dim, *f, rot));
    s.rotary_dim = rot;
  }
  if (c.contains("base") && c.contains("rope_theta") &&
      get<double>(c, "base", where) != get<double>(c, "rope_theta", where))
    throw FormatError(fmt::format("{}: base and rope_theta differ", where));
  s.base = number(c, c.contains("rope_theta") ? "rope_theta" : "base", where);
  if (c.contains("linear_factor")) {
    if (c.contains("rope_scaling"))
      throw FormatError(fmt::format("{}: linear_factor and rope_scaling both given", where));
    s.factor = number(c, "linear_factor", where);
    s.rule = s.factor == 1.0 ? RopeScalingKind::none : RopeScalingKind::linear;
  }
  if (c.contains("rope_scaling") && !c.at("rope_scaling").is_null())
    read_scaling(c.at("rope_scaling"), s, where + ": rope_scaling");
  if (s.short_factor && !s.rotary_dim)  // two rotated dims per LongRoPE factor
    s.rotary_dim = 2 * static_cast<int>(s.short_factor->size());
  // What pecheck can check of the statement alone: the spec it makes must be valid.
  try {
    stated_spec(s, RopeSpec{.head_dim = head_dim, .rotary_dim = s.rotary_dim.value_or(head_dim)}).validate();
  } catch (const std::invalid_argument& e) {
    throw FormatError(fmt::format("{}: convention: {}", where, e.what()));
  }
  return s;
}

}  // namespace pecheck::dumpcheck
