// pecheck manifest --from-hf-config config.json [--layer-type NAME]: the "convention" part of a
// dump manifest, from a model's config.json, in the manifest's HF vocabulary (docs/dumps.md). It
// reads what transformers 5 reads, from a config of either generation: head_dim (else
// hidden_size / num_attention_heads), rope_theta (GPT-NeoX's rotary_emb_base) and
// partial_rotary_factor (GPT-NeoX's rotary_pct) at the top level, and the RoPE dict verbatim:
// transformers 5's rope_parameters (flat, or keyed by layer type, one of which --layer-type
// names) or 4.x's rope_scaling. What transformers 5 fills in when the dict does not say is made
// explicit: the original context (L0) of YaRN, Llama 3 and LongRoPE from max_position_embeddings
// (LongRoPE's from a top-level original_max_position_embeddings first, as Phi3Config does),
// dynamic NTK's L0 as max_position_embeddings (which its rule reads), LongRoPE's factor as
// max_position_embeddings / L0. The result is checked by the manifest reader itself, so a key or
// a rule pecheck does not know is one line and exit 2 here, not later. A vision-language config's
// text_config is read when the top level has no RoPE of its own; a dict with mrope_section makes
// an M-RoPE manifest ("family": "mrope").
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/commands.hpp"
#include "dumpcheck/mrope_dump.hpp"
#include "dumpcheck/rope_manifest.hpp"
#include "tensorfiles/array.hpp"

namespace pecheck::cli {

namespace {

using Json = nlohmann::json;

std::optional<double> number(const Json& config, std::initializer_list<const char*> keys) {
  for (const char* k : keys)
    if (config.contains(k) && config.at(k).is_number()) return config.at(k).get<double>();
  return std::nullopt;
}

/// What transformers 5's standardize_rope_params and _compute_* functions take from the config
/// when RoPE dict `r` does not state it, written into `r`. `flat`: the config's only RoPE dict
/// (a top-level original_max_position_embeddings then counts for LongRoPE).
void fill_defaults(Json& r, const Json& config, bool flat) {
  if (!r.is_object()) return;  // the reader names what is wrong with it
  const Json type_field = r.value("rope_type", r.value("type", Json("default")));
  if (!type_field.is_string()) return;
  const std::string type = type_field.get<std::string>();
  const auto max = number(config, {"max_position_embeddings"}),
             top_l0 = number(config, {"original_max_position_embeddings"});
  const char* l0 = "original_max_position_embeddings";
  const bool stated = r.contains(l0) && !r.at(l0).is_null();
  if (type == "dynamic" && max) r[l0] = *max;  // _compute_dynamic_ntk_parameters reads max_position_embeddings
  if (type == "longrope" || type == "su") {
    if (flat && top_l0)  // Phi3Config gives its own original_max_position_embeddings priority
      r[l0] = *top_l0;
    else if (!stated && max)
      r[l0] = *max;
    if ((!r.contains("factor") || r.at("factor").is_null()) && max && r.contains(l0) && r.at(l0).is_number())
      r["factor"] = *max / r.at(l0).get<double>();  // _compute_longrope_parameters' default factor
  }
  if ((type == "yarn" || type == "llama3") && !stated && max) r[l0] = *max;
}

/// The layer types a rope_parameters dict is keyed by (empty: it is flat).
std::vector<std::string> layer_types(const Json& rp) {
  std::vector<std::string> out;
  if (rp.is_object())
    for (const auto& [key, value] : rp.items())
      if (value.is_object()) out.push_back(key);
  return out;
}

}  // namespace

int manifest_from_hf_config(const std::string& path, const std::optional<std::string>& layer_type) {
  std::ifstream in(path);
  if (!in) throw UsageError(fmt::format("{}: cannot be read", path));
  Json config;
  try {
    config = Json::parse(in);
  } catch (const Json::exception& e) {
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    throw UsageError(fmt::format("{}: not valid JSON: {}", path, what));
  }
  if (!config.is_object()) throw UsageError(fmt::format("{}: must be a JSON object", path));
  // A vision-language model's config (transformers 5's Qwen2-VL, Qwen3-VL...) keeps the language
  // model's RoPE in text_config.
  if (config.contains("text_config") && config.at("text_config").is_object() &&
      !(config.contains("rope_parameters") || config.contains("rope_scaling") || config.contains("head_dim") ||
        config.contains("hidden_size"))) {
    const Json text = config.at("text_config");
    config = text;
  }
  Json c = Json::object();
  if (const auto theta = number(config, {"rope_theta", "rotary_emb_base"})) c["rope_theta"] = *theta;
  if (const auto f = number(config, {"partial_rotary_factor", "rotary_pct"})) c["partial_rotary_factor"] = *f;
  int head_dim = 0;
  if (const auto h = number(config, {"head_dim"})) {
    head_dim = static_cast<int>(*h);
  } else if (const auto hidden = number(config, {"hidden_size"}), heads = number(config, {"num_attention_heads"});
             hidden && heads) {
    head_dim = static_cast<int>(*hidden / *heads);
  }
  if (head_dim <= 0) throw UsageError(fmt::format("{}: no head_dim, nor hidden_size and num_attention_heads", path));
  c["head_dim"] = head_dim;
  const auto dict = [&](const char* key) { return config.contains(key) && !config.at(key).is_null(); };
  if (dict("rope_scaling") && dict("rope_parameters") && config.at("rope_scaling") != config.at("rope_parameters"))
    throw UsageError(fmt::format(
        "{}: rope_scaling and rope_parameters both given and they differ (transformers 5 would take rope_scaling): "
        "keep one",
        path));
  const std::vector<std::string> layers =
      dict("rope_parameters") ? layer_types(config.at("rope_parameters")) : std::vector<std::string>{};
  if (layer_type && layers.empty())
    throw UsageError(
        fmt::format("--layer-type {}: {} has no rope_parameters keyed by layer type (one RoPE for every "
                    "layer)",
                    *layer_type, path));
  if (dict("rope_parameters")) {
    Json rp = config.at("rope_parameters");
    if (layers.empty()) {
      fill_defaults(rp, config, true);
    } else {
      if (!layer_type)
        throw UsageError(
            fmt::format("{}: rope_parameters is keyed by layer type ({}): choose one with --layer-type NAME", path,
                        fmt::join(layers, ", ")));
      if (std::find(layers.begin(), layers.end(), *layer_type) == layers.end())
        throw UsageError(fmt::format("--layer-type {}: {}'s rope_parameters has the layer types {}", *layer_type, path,
                                     fmt::join(layers, ", ")));
      for (const std::string& l : layers) fill_defaults(rp[l], config, false);
      // transformers 5's YaRN reads truncate from the top of rope_parameters, never a layer type's own.
      const Json& chosen = rp.at(*layer_type);
      if (chosen.value("rope_type", chosen.value("type", Json())) == "yarn" &&
          chosen.value("truncate", Json()) == false)
        throw UsageError(fmt::format(
            "{}: rope_parameters.{}.truncate is false, but transformers 5 reads truncate from the top of "
            "rope_parameters, not from a layer type's dict, and so truncates this layer's correction range: state "
            "the convention by hand",
            path, *layer_type));
      c["layer_type"] = *layer_type;
    }
    c["rope_parameters"] = rp;
  } else if (dict("rope_scaling")) {
    Json r = config.at("rope_scaling");
    fill_defaults(r, config, true);
    c["rope_scaling"] = r;
  }
  // M-RoPE: its dict carries mrope_section (Qwen2-VL's released configs, Qwen3-VL's, GLM-4.1V's).
  bool mrope = false;
  for (const char* key : {"rope_parameters", "rope_scaling"})
    if (c.contains(key) && c.at(key).is_object() && c.at(key).contains("mrope_section")) mrope = true;
  try {
    if (mrope) {
      dumpcheck::Dump d;
      d.width = head_dim;
      dumpcheck::read_mrope_convention(c, d, path);
    } else {
      dumpcheck::read_rope_convention(c, head_dim, path);
    }
  } catch (const tensorfiles::FormatError& e) {
    throw UsageError(e.what());
  }
  std::cout << Json{{"family", mrope ? "mrope" : "rope"}, {"convention", c}}.dump(2) << "\n";
  return 0;
}

}  // namespace pecheck::cli
