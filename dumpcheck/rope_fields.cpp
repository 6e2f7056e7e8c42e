#include "dumpcheck/rope_fields.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>

#include "tensorfiles/array.hpp"

namespace pecheck::dumpcheck::fields {

namespace {

using tensorfiles::FormatError;
using Json = nlohmann::json;

/// Each rope_type with the fields its _compute_* function in transformers 5 reads (beyond
/// rope_type, rope_theta and partial_rotary_factor, which every type takes).
struct TypeFields {
  std::string_view type;
  std::vector<std::string_view> fields;
};
const std::array<TypeFields, 8>& type_fields() {
  static const std::array<TypeFields, 8> table = {{
      {"default", {}},
      {"linear", {"factor"}},
      {"dynamic", {"factor", "original_max_position_embeddings"}},
      {"yarn",
       {"factor", "original_max_position_embeddings", "beta_fast", "beta_slow", "mscale", "mscale_all_dim",
        "attention_factor", "truncate"}},
      {"longrope", {"short_factor", "long_factor", "factor", "original_max_position_embeddings", "attention_factor"}},
      {"llama3", {"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"}},
      {"proportional", {"factor"}},
      {"ntk", {"factor"}},  // pecheck's: NTK-aware scaling at a fixed factor
  }};
  return table;
}

const TypeFields* type_named(std::string_view name) {
  for (const TypeFields& t : type_fields())
    if (t.type == name) return &t;
  return nullptr;
}

bool any_type_takes(std::string_view key) {
  for (const TypeFields& t : type_fields())
    if (std::find(t.fields.begin(), t.fields.end(), key) != t.fields.end()) return true;
  return false;
}

/// The fields a type takes, for a message: "factor, original_max_position_embeddings".
std::string takes(const TypeFields& t, Dialect d) {
  const bool v5 = d == Dialect::rope_parameters;
  if (t.fields.empty()) return v5 ? "only rope_theta, partial_rotary_factor" : "no field";
  return fmt::format("{}{}", fmt::join(t.fields, ", "), v5 ? ", rope_theta, partial_rotary_factor" : "");
}

/// A JSON value in a message: its text, cut to 40 characters.
std::string shown(const Json& v) {
  std::string s = v.dump();
  return s.size() > 40 ? s.substr(0, 37) + "..." : s;
}

std::optional<bool> boolean(const Json& r, const char* key, const std::string& at) {
  if (!r.contains(key) || r.at(key).is_null()) return std::nullopt;
  if (!r.at(key).is_boolean())
    throw FormatError(fmt::format("{}: \"{}\" must be true or false, got {}", at, key, shown(r.at(key))));
  return r.at(key).get<bool>();
}

/// A LongRoPE factor list: a non-empty array of finite numbers > 0.
std::optional<std::vector<double>> factor_list(const Json& r, const char* key, const std::string& at) {
  if (!r.contains(key) || r.at(key).is_null()) return std::nullopt;
  if (!r.at(key).is_array() || r.at(key).empty())
    throw FormatError(
        fmt::format("{}: \"{}\" must be a non-empty array of numbers, got {}", at, key, shown(r.at(key))));
  std::vector<double> v;
  for (const Json& e : r.at(key)) {
    if (!e.is_number()) throw FormatError(fmt::format("{}: \"{}\" holds {}, which is not a number", at, key, shown(e)));
    v.push_back(e.get<double>());
    if (!(std::isfinite(v.back()) && v.back() > 0))
      throw FormatError(fmt::format("{}: \"{}\" entries must be finite and > 0, got {}", at, key, v.back()));
  }
  return v;
}

template <class T>
std::string text(const T& v) {
  if constexpr (std::is_same_v<T, std::string>)
    return fmt::format("\"{}\"", v);
  else if constexpr (std::is_same_v<T, std::vector<double>>)
    return fmt::format("[{}{}] ({} entries)",
                       fmt::join(v.begin(), v.begin() + std::min<std::ptrdiff_t>(3, std::ssize(v)), ", "),
                       v.size() > 3 ? ", ..." : "", v.size());
  else
    return fmt::format("{}", v);
}

template <class T>
void take(Said<T>& into, const Said<T>& from, const std::string& where) {
  if (!from.value) return;
  if (into.value && !(*into.value == *from.value))
    throw FormatError(
        fmt::format("{}: {} {} contradicts {} {}", where, from.key, text(*from.value), into.key, text(*into.value)));
  if (!into.value) into = from;
}

}  // namespace

std::optional<double> number(const Json& j, const std::string& key, const std::string& where) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  if (!j.at(key).is_number())
    throw FormatError(fmt::format("{}: \"{}\" must be a number, got {}", where, key, shown(j.at(key))));
  const double v = j.at(key).get<double>();
  if (!std::isfinite(v)) throw FormatError(fmt::format("{}: \"{}\" must be finite", where, key));
  return v;
}

RopeStatement read_rope_dict(const Json& r, Dialect dialect, const std::string& path, const std::string& where) {
  const std::string at = fmt::format("{}: {}", where, path);
  if (!r.is_object()) throw FormatError(fmt::format("{}: must be a JSON object, got {}", at, shown(r)));
  const bool v5 = dialect == Dialect::rope_parameters;
  RopeStatement s;
  const auto said = [&](const char* key) { return fmt::format("{}.{}", path, key); };
  // The type first, so that every other key is judged against it.
  std::string type = v5 ? "default" : "";
  for (const char* key : {"type", "rope_type"})  // HF: rope_type, else the older type
    if (r.contains(key)) {
      if (!r.at(key).is_string())
        throw FormatError(fmt::format("{}: \"{}\" must be a string, got {}", at, key, shown(r.at(key))));
      const std::string name = r.at(key).get<std::string>();
      if (std::string_view(key) == "rope_type" && r.contains("type") && r.at("type") != r.at("rope_type"))
        throw FormatError(fmt::format("{}: rope_type \"{}\" contradicts type {}", at, name, shown(r.at("type"))));
      type = name == "su" ? "longrope" : name;  // su: LongRoPE's name in Phi-3's first configs
    }
  if (type.empty()) throw FormatError(fmt::format("{}: needs \"rope_type\" (or HF's older \"type\")", at));
  const TypeFields* t = type_named(type);
  if (!t)
    throw FormatError(
        fmt::format("{}: unknown rope_type \"{}\" (default, linear, dynamic, yarn, longrope, llama3, proportional, and "
                    "pecheck's ntk)",
                    at, type));
  s.rope_type = {type, said("rope_type")};
  for (const auto& [key, value] : r.items()) {
    if (key == "rope_type" || key == "type") continue;
    if (v5 && (key == "rope_theta" || key == "partial_rotary_factor")) continue;
    if (std::find(t->fields.begin(), t->fields.end(), key) != t->fields.end()) continue;
    if (!v5 && (key == "rope_theta" || key == "partial_rotary_factor"))
      throw FormatError(
          fmt::format("{}: \"{}\" goes beside rope_scaling, at the convention's top level (or inside transformers 5's "
                      "rope_parameters)",
                      at, key));
    if (any_type_takes(key))
      throw FormatError(fmt::format("{}: \"{}\" does not belong to rope_type \"{}\", which takes {}", at, key, t->type,
                                    takes(*t, dialect)));
    throw FormatError(
        fmt::format("{}: unknown key \"{}\" (rope_type \"{}\" takes {})", at, key, t->type, takes(*t, dialect)));
  }
  const auto num = [&](Said<double>& into, const char* key) { into = {number(r, key, at), said(key)}; };
  num(s.rope_theta, "rope_theta");
  num(s.partial_rotary_factor, "partial_rotary_factor");
  num(s.factor, "factor");
  if (const auto l0 = number(r, "original_max_position_embeddings", at)) {
    if (!(*l0 >= 1 && *l0 <= 1e15) || *l0 != std::floor(*l0))
      throw FormatError(
          fmt::format("{}: \"original_max_position_embeddings\" must be a positive integer, got {}", at, *l0));
    s.original_max_position_embeddings = {static_cast<std::int64_t>(*l0), said("original_max_position_embeddings")};
  }
  num(s.low_freq_factor, "low_freq_factor");
  num(s.high_freq_factor, "high_freq_factor");
  num(s.beta_fast, "beta_fast");
  num(s.beta_slow, "beta_slow");
  num(s.mscale, "mscale");
  num(s.mscale_all_dim, "mscale_all_dim");
  s.truncate = {boolean(r, "truncate", at), said("truncate")};
  num(s.attention_factor, "attention_factor");
  if (s.attention_factor.value && !(*s.attention_factor.value > 0))
    throw FormatError(fmt::format("{}: \"attention_factor\" must be > 0 (it multiplies cos and sin), got {}", at,
                                  *s.attention_factor.value));
  s.short_factor = {factor_list(r, "short_factor", at), said("short_factor")};
  s.long_factor = {factor_list(r, "long_factor", at), said("long_factor")};
  if (type == "longrope") {
    for (const char* key : {"short_factor", "long_factor"})
      if (!(std::string_view(key) == "short_factor" ? s.short_factor : s.long_factor).value)
        throw FormatError(fmt::format("{}: LongRoPE needs \"{}\", a non-empty array of numbers", at, key));
    if (s.short_factor.value->size() != s.long_factor.value->size())
      throw FormatError(fmt::format("{}: short_factor has {} entries, long_factor {}", at, s.short_factor.value->size(),
                                    s.long_factor.value->size()));
    if (!s.original_max_position_embeddings.value)
      throw FormatError(fmt::format(
          "{}: LongRoPE needs \"original_max_position_embeddings\" (it picks the short or long factors)", at));
    if (!s.factor.value && !s.attention_factor.value)
      throw FormatError(
          fmt::format("{}: LongRoPE needs \"factor\" (max_position_embeddings / original_max_position_embeddings) or "
                      "\"attention_factor\"",
                      at));
  } else if (type != "default" && type != "proportional" && !s.factor.value) {
    throw FormatError(fmt::format("{}: rope_type \"{}\" needs \"factor\"", at, type));
  }
  return s;
}

void merge(RopeStatement& into, const RopeStatement& from, const std::string& where) {
  take(into.rope_type, from.rope_type, where);
  take(into.rope_theta, from.rope_theta, where);
  take(into.partial_rotary_factor, from.partial_rotary_factor, where);
  take(into.factor, from.factor, where);
  take(into.original_max_position_embeddings, from.original_max_position_embeddings, where);
  take(into.low_freq_factor, from.low_freq_factor, where);
  take(into.high_freq_factor, from.high_freq_factor, where);
  take(into.beta_fast, from.beta_fast, where);
  take(into.beta_slow, from.beta_slow, where);
  take(into.mscale, from.mscale, where);
  take(into.mscale_all_dim, from.mscale_all_dim, where);
  take(into.truncate, from.truncate, where);
  take(into.attention_factor, from.attention_factor, where);
  take(into.short_factor, from.short_factor, where);
  take(into.long_factor, from.long_factor, where);
}

}  // namespace pecheck::dumpcheck::fields
