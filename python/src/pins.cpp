#include "pins.hpp"

#include <fmt/format.h>

#include <array>
#include <set>
#include <stdexcept>
#include <string>

#include "dump/array.hpp"
#include "dumpcheck/rope_manifest.hpp"

namespace pecheck::python {

namespace {

using Json = nlohmann::json;

[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument("convention: " + what); }

void only_keys(const Json& c, const std::set<std::string>& known, Op op) {
  for (const auto& [key, value] : c.items())
    if (!known.contains(key))
      bad(fmt::format("unknown key '{}' for {} (known: {})", key, op_name(op), fmt::join(known, ", ")));
}

template <class T>
std::optional<T> field(const Json& c, const char* key) {
  if (!c.contains(key)) return std::nullopt;
  try {
    return c.at(key).get<T>();
  } catch (const Json::exception&) {
    bad(fmt::format("'{}' has the wrong type", key));
  }
}

template <class Enum>
std::optional<Enum> named(const Json& c, const char* key, std::initializer_list<std::pair<const char*, Enum>> names) {
  const auto text = field<std::string>(c, key);
  if (!text) return std::nullopt;
  std::string known;
  for (const auto& [n, value] : names) {
    if (*text == n) return value;
    known += known.empty() ? n : std::string(", ") + n;
  }
  bad(fmt::format("'{}' must be one of {}, got '{}'", key, known, *text));
}

/// Checks that the pinned spec is valid for at least one size, so that a bad pin is a ValueError
/// at check(), never an exception inside a generator.
template <class Spec>
void validate_pinned(const Pins& pins, Spec probe) {
  pins.apply(probe);
  try {
    probe.validate();
  } catch (const std::invalid_argument& e) {
    bad(e.what());
  }
}

void pin_rope(Pins& pins, const Json& c) {
  // HF's vocabulary, read as a dump's manifest reads it; the layout is HF's rotate_half unless stated.
  const auto head_dim = field<int>(c, "head_dim");
  if (head_dim && (*head_dim <= 0 || *head_dim % 2))
    bad(fmt::format("head_dim must be even and > 0, got {}", *head_dim));
  auto stated = [c](int hd) {
    try {
      return dumpcheck::read_rope_convention(c, hd, "convention");
    } catch (const dump::FormatError& e) {
      throw std::invalid_argument(e.what());
    }
  };
  const dumpcheck::StatedRope first = stated(head_dim.value_or(64));
  if (first.rule == RopeScalingKind::dynamic_ntk)
    bad("rope_type 'dynamic' rescales by each call's length (HF: max(position_ids) + 1), which a pinned spec "
        "cannot state yet: check it with convention=None (the convention-free properties)");
  // Nothing is fitted for a pinned function: a rule's L0 must be the one the code uses. (transformers
  // 4.49's YaRN takes it from config.max_position_embeddings, not from rope_scaling.)
  const bool needs_l0 = first.rule == RopeScalingKind::yarn || first.rule == RopeScalingKind::llama3 ||
                        first.rule == RopeScalingKind::longrope;
  if (needs_l0 && !first.original_max_position)
    bad("this rope_scaling needs 'original_max_position_embeddings' (L0), stated as your code uses it: "
        "transformers 4.49's YaRN takes it from config.max_position_embeddings");
  if ((first.short_factor || first.rule == RopeScalingKind::yarn) && !head_dim && !first.rotary_dim)
    bad("this rope_scaling needs 'head_dim' (its frequencies are sized by it)");
  pins.rope = [c, head_dim, stated](RopeSpec& s) {
    if (head_dim) s.head_dim = *head_dim;
    const dumpcheck::StatedRope r = stated(s.head_dim);
    s = dumpcheck::stated_spec(r, RopeSpec{.head_dim = s.head_dim,
                                           .rotary_dim = r.rotary_dim.value_or(s.head_dim),
                                           .layout = r.layout.value_or(RopeLayout::half_split)});
  };
  validate_pinned(pins, RopeSpec{.head_dim = head_dim.value_or(64)});
}

void pin_sinusoidal(Pins& pins, const Json& c) {
  only_keys(c, {"d_model", "base", "layout", "frequencies", "padding_idx"}, Op::sinusoidal_table);
  const auto d_model = field<int>(c, "d_model");
  const auto base = field<double>(c, "base");
  const auto padding = field<std::int64_t>(c, "padding_idx");
  const auto layout = named<SinusoidalLayout>(
      c, "layout", {{"interleaved", SinusoidalLayout::interleaved}, {"concatenated", SinusoidalLayout::concatenated}});
  const auto freqs = named<SinusoidalFrequencies>(
      c, "frequencies", {{"vaswani", SinusoidalFrequencies::vaswani}, {"fairseq", SinusoidalFrequencies::fairseq}});
  pins.sinusoidal = [=](SinusoidalSpec& s) {
    if (d_model) s.d_model = *d_model;
    s.base = base.value_or(10000.0);
    s.layout = layout.value_or(SinusoidalLayout::interleaved);
    s.frequencies = freqs.value_or(SinusoidalFrequencies::vaswani);
    s.padding_idx = padding.value_or(-1);
    if (s.frequencies == SinusoidalFrequencies::fairseq && s.d_model < 4) s.d_model = 4;
  };
  validate_pinned(pins, SinusoidalSpec{});
}

void pin_alibi(Pins& pins, const Json& c) {
  only_keys(c, {"heads", "causal"}, Op::alibi_bias);
  const auto heads = field<int>(c, "heads");
  const auto causal = field<bool>(c, "causal");
  if (!causal) bad("ALiBi needs 'causal' (true: -inf above the diagonal; false: symmetric -|i - j| slopes)");
  pins.alibi = [=](AlibiSpec& s) {
    if (heads) s.heads = *heads;
    s.causal = *causal;
  };
  validate_pinned(pins, AlibiSpec{});
}

void pin_shaw(Pins& pins, const Json& c) {
  only_keys(c, {"max_distance", "head_dim"}, Op::shaw_scores);
  const auto k = field<int>(c, "max_distance");
  const auto head_dim = field<int>(c, "head_dim");
  if (!k) bad("Shaw needs 'max_distance' (K: relative distances are clipped to [-K, K])");
  pins.shaw = [=](ShawSpec& s) {
    s.max_distance = *k;
    if (head_dim) s.head_dim = *head_dim;
  };
  validate_pinned(pins, ShawSpec{});
}

void pin_t5(Pins& pins, const Json& c) {
  only_keys(c, {"heads", "num_buckets", "max_distance", "bidirectional"}, Op::t5_bias);
  const auto heads = field<int>(c, "heads");
  const auto buckets = field<int>(c, "num_buckets");
  const auto max_distance = field<int>(c, "max_distance");
  const auto bidirectional = field<bool>(c, "bidirectional");
  if (!buckets || !max_distance || !bidirectional)
    bad("T5 needs 'num_buckets', 'max_distance' and 'bidirectional' (HF: relative_attention_num_buckets, "
        "relative_attention_max_distance, is_decoder = not bidirectional)");
  pins.t5 = [=](T5Spec& s) {
    if (heads) s.heads = *heads;
    s.num_buckets = *buckets;
    s.max_distance = *max_distance;
    s.bidirectional = *bidirectional;
  };
  validate_pinned(pins, T5Spec{});
}

void pin_mrope(Pins& pins, const Json& c) {
  // HF's Qwen2-VL vocabulary: rope_theta, head_dim, rope_scaling {"type": "mrope", "mrope_section": [t, h, w]}
  // (or mrope_section at the top level); the assignment and layout are pecheck's names.
  only_keys(c, {"rope_theta", "head_dim", "mrope_section", "rope_scaling", "layout", "assignment"}, Op::mrope_apply);
  Json section = c.contains("mrope_section") ? c.at("mrope_section") : Json();
  if (c.contains("rope_scaling")) {
    const Json& r = c.at("rope_scaling");
    if (!r.is_object()) bad("'rope_scaling' must be a dict");
    for (const auto& [key, value] : r.items())
      if (key != "type" && key != "rope_type" && key != "mrope_section")
        bad(fmt::format("rope_scaling key '{}' is not M-RoPE's (type, rope_type, mrope_section)", key));
    const std::string type = r.value("rope_type", r.value("type", std::string("mrope")));
    if (type != "mrope" && type != "default")
      bad(fmt::format("rope_scaling type '{}': M-RoPE states \"mrope\" (or \"default\", as HF rewrites it)", type));
    if (r.contains("mrope_section")) section = r.at("mrope_section");
  }
  if (!section.is_array() || section.size() != 3)
    bad("M-RoPE needs 'mrope_section': three pair counts (temporal, height, width), e.g. [16, 24, 24]");
  std::array<int, 3> sections{};
  for (std::size_t i = 0; i < 3; ++i) {
    if (!section[i].is_number_integer()) bad("'mrope_section' entries must be integers");
    sections[i] = section[i].get<int>();
  }
  const auto head_dim = field<int>(c, "head_dim");
  const auto theta = field<double>(c, "rope_theta");
  const auto layout = named<RopeLayout>(
      c, "layout", {{"half_split", RopeLayout::half_split}, {"interleaved", RopeLayout::interleaved}});
  const auto assignment = named<MropeAssignment>(
      c, "assignment", {{"sectioned", MropeAssignment::sectioned}, {"interleaved", MropeAssignment::interleaved}});
  pins.mrope = [=](MropeSpec& s) {
    s.head_dim = head_dim.value_or(2 * (sections[0] + sections[1] + sections[2]));
    s.base = theta.value_or(10000.0);
    s.mrope_section = sections;
    s.layout = layout.value_or(RopeLayout::half_split);
    s.assignment = assignment.value_or(MropeAssignment::sectioned);
  };
  validate_pinned(pins, MropeSpec{});
}

}  // namespace

std::shared_ptr<const Pins> pins_from_convention(Op op, const Json& convention) {
  if (!convention.is_object()) bad("must be a dict");
  auto pins = std::make_shared<Pins>();
  switch (op) {
    case Op::rope_apply:
      pin_rope(*pins, convention);
      break;
    case Op::sinusoidal_table:
      pin_sinusoidal(*pins, convention);
      break;
    case Op::alibi_bias:
      pin_alibi(*pins, convention);
      break;
    case Op::shaw_scores:
      pin_shaw(*pins, convention);
      break;
    case Op::t5_bias:
      pin_t5(*pins, convention);
      break;
    case Op::mrope_apply:
      pin_mrope(*pins, convention);
      break;
    case Op::learned_add:  // x + table[positions]: nothing to state beyond the inputs
      if (convention.empty()) return nullptr;
      bad("learned_add has no convention to state: pass {} (its inputs say it all)");
    default:
      bad(
          fmt::format("{} takes no pinned convention yet: pass convention=\"spec\" (the function honours every "
                      "spec it is given) or None",
                      op_name(op)));
  }
  return pins;
}

}  // namespace pecheck::python
