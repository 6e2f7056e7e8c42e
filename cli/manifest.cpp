// pecheck manifest --from-hf-config config.json: the "convention" part of a dump manifest, from a
// model's config.json, in the manifest's HF vocabulary (docs/dumps.md). It reads what
// transformers reads: rope_theta (GPT-NeoX's rotary_emb_base), partial_rotary_factor (GPT-NeoX's
// rotary_pct), head_dim (else hidden_size / num_attention_heads), and rope_scaling verbatim, with
// the original context transformers 4.49 falls back to (max_position_embeddings) made explicit
// for the rules that use one, and LongRoPE's factor formed from the two context lengths. The result is checked by the
// manifest reader itself, so a key or a rule pecheck does not know is one line and exit 2 here, not later.
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "dump/array.hpp"
#include "dumpcheck/rope_manifest.hpp"

namespace pecheck::cli {

int manifest_from_hf_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError(fmt::format("{}: cannot be read", path));
  nlohmann::json config;
  try {
    config = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    throw UsageError(fmt::format("{}: not valid JSON: {}", path, what));
  }
  if (!config.is_object()) throw UsageError(fmt::format("{}: must be a JSON object", path));
  auto number = [&](std::initializer_list<const char*> keys) -> std::optional<double> {
    for (const char* k : keys)
      if (config.contains(k) && config.at(k).is_number()) return config.at(k).get<double>();
    return std::nullopt;
  };
  nlohmann::json c = nlohmann::json::object();
  if (const auto theta = number({"rope_theta", "rotary_emb_base"})) c["rope_theta"] = *theta;
  if (const auto f = number({"partial_rotary_factor", "rotary_pct"})) c["partial_rotary_factor"] = *f;
  int head_dim = 0;
  if (const auto h = number({"head_dim"})) {
    head_dim = static_cast<int>(*h);
  } else if (const auto hidden = number({"hidden_size"}), heads = number({"num_attention_heads"}); hidden && heads) {
    head_dim = static_cast<int>(*hidden / *heads);
  }
  if (head_dim <= 0) throw UsageError(fmt::format("{}: no head_dim, nor hidden_size and num_attention_heads", path));
  c["head_dim"] = head_dim;
  if (config.contains("rope_scaling") && !config.at("rope_scaling").is_null()) {
    nlohmann::json r = config.at("rope_scaling");
    const std::string type = r.value("rope_type", r.value("type", std::string()));
    // transformers takes YaRN's and dynamic NTK's original context from max_position_embeddings
    // when rope_scaling does not give one (4.49 even ignores YaRN's own key).
    if ((type == "yarn" || type == "dynamic") && config.contains("max_position_embeddings"))
      r["original_max_position_embeddings"] = config.at("max_position_embeddings");
    // LongRoPE (HF _compute_longrope_parameters): L0 is the config's original_max_position_embeddings
    // (else max_position_embeddings, and the factor stays rope_scaling's), and the factor is
    // max_position_embeddings / original_max_position_embeddings.
    if ((type == "longrope" || type == "su") && !r.contains("original_max_position_embeddings")) {
      const auto l0 = number({"original_max_position_embeddings"}), max = number({"max_position_embeddings"});
      if (l0 && max) {
        r["original_max_position_embeddings"] = *l0;
        r["factor"] = *max / *l0;
      } else if (max) {
        r["original_max_position_embeddings"] = *max;
      }
    }
    c["rope_scaling"] = r;
  }
  try {
    dumpcheck::read_rope_convention(c, head_dim, path);
  } catch (const dump::FormatError& e) {
    throw UsageError(e.what());
  }
  std::cout << nlohmann::json{{"family", "rope"}, {"convention", c}}.dump(2) << "\n";
  return 0;
}

}  // namespace pecheck::cli
