// Every way the RoPE convention reader (dumpcheck/rope_manifest.cpp, rope_fields.cpp) refuses a
// statement, each as its exact one-line message under the prefix the caller gives ("convention",
// as a Python pin gives it: never "convention: convention: "): unknown keys, fields of another
// rope_type, wrong types, v4 and v5 keys that contradict each other, rope_parameters keyed by
// layer type without a valid selection, and statements that make no valid spec.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "dumpcheck/rope_manifest.hpp"
#include "spec/rope_scaling.hpp"
#include "tensorfiles/array.hpp"

namespace pecheck::dumpcheck {
namespace {

/// The reader's message for a convention (heads of head_dim), or "accepted".
std::string error_of(const std::string& json, int head_dim = 128) {
  try {
    read_rope_convention(nlohmann::json::parse(json), head_dim, "convention");
  } catch (const tensorfiles::FormatError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    EXPECT_EQ(m.find("convention: convention"), std::string::npos) << m;
    return m;
  }
  return "accepted";
}

TEST(RopeConventionErrors, UnknownTopLevelKey) {
  EXPECT_EQ(error_of(R"({"rope_type": "llama3"})"),
            "convention: unknown key \"rope_type\" (the convention takes layout, rotary_dim, base, linear_factor, "
            "rope_theta, partial_rotary_factor, head_dim, rope_scaling, rope_parameters, layer_type; a rule's fields "
            "go inside rope_parameters or rope_scaling)");
}

TEST(RopeConventionErrors, UnknownFieldNamesTheTypeAndWhatItTakes) {
  EXPECT_EQ(error_of(R"({"rope_parameters": {"rope_type": "yarn", "factor": 4, "beta": 2}})"),
            "convention: rope_parameters: unknown key \"beta\" (rope_type \"yarn\" takes factor, "
            "original_max_position_embeddings, beta_fast, beta_slow, mscale, mscale_all_dim, attention_factor, "
            "truncate, rope_theta, partial_rotary_factor)");
  EXPECT_EQ(error_of(R"({"rope_scaling": {"rope_type": "linear", "factor": 4, "finetuned": true}})"),
            "convention: rope_scaling: unknown key \"finetuned\" (rope_type \"linear\" takes factor)");
}

TEST(RopeConventionErrors, FieldOfAnotherType) {
  EXPECT_EQ(error_of(R"({"rope_parameters": {"rope_type": "yarn", "factor": 4, "low_freq_factor": 1}})"),
            "convention: rope_parameters: \"low_freq_factor\" does not belong to rope_type \"yarn\", which takes "
            "factor, original_max_position_embeddings, beta_fast, beta_slow, mscale, mscale_all_dim, "
            "attention_factor, truncate, rope_theta, partial_rotary_factor");
  EXPECT_EQ(
      error_of(R"({"rope_scaling": {"rope_type": "linear", "factor": 4, "original_max_position_embeddings": 64}})"),
      "convention: rope_scaling: \"original_max_position_embeddings\" does not belong to rope_type \"linear\", "
      "which takes factor");
  EXPECT_EQ(error_of(R"({"rope_parameters": {"truncate": false}})"),
            "convention: rope_parameters: \"truncate\" does not belong to rope_type \"default\", which takes only "
            "rope_theta, partial_rotary_factor");
  EXPECT_EQ(error_of(R"({"rope_scaling": {"rope_type": "linear", "factor": 4, "rope_theta": 10000}})"),
            "convention: rope_scaling: \"rope_theta\" goes beside rope_scaling, at the convention's top level (or "
            "inside transformers 5's rope_parameters)");
}

TEST(RopeConventionErrors, RopeType) {
  EXPECT_EQ(error_of(R"({"rope_parameters": {"rope_type": "axial"}})"),
            "convention: rope_parameters: unknown rope_type \"axial\" (default, linear, dynamic, yarn, longrope, "
            "llama3, proportional, and pecheck's ntk)");
  EXPECT_EQ(error_of(R"({"rope_scaling": {"factor": 4}})"),
            "convention: rope_scaling: needs \"rope_type\" (or HF's older \"type\")");
  EXPECT_EQ(error_of(R"({"rope_scaling": {"rope_type": "linear", "type": "yarn", "factor": 4}})"),
            "convention: rope_scaling: rope_type \"linear\" contradicts type \"yarn\"");
  EXPECT_EQ(error_of(R"({"rope_parameters": {"rope_type": 3}})"),
            "convention: rope_parameters: \"rope_type\" must be a string, got 3");
  EXPECT_EQ(error_of(R"({"rope_parameters": {"rope_type": "llama3"}})"),
            "convention: rope_parameters: rope_type \"llama3\" needs \"factor\"");
}

TEST(RopeConventionErrors, WrongTypes) {
  EXPECT_EQ(error_of(R"({"rope_parameters": {"rope_type": "yarn", "factor": 4, "truncate": "no"}})"),
            "convention: rope_parameters: \"truncate\" must be true or false, got \"no\"");
  EXPECT_EQ(error_of(R"({"rope_parameters": {"rope_type": "linear", "factor": true}})"),
            "convention: rope_parameters: \"factor\" must be a number, got true");
  EXPECT_EQ(error_of(R"({"rope_parameters": {"rope_type": "yarn", "factor": 4, "attention_factor": 0}})"),
            "convention: rope_parameters: \"attention_factor\" must be > 0 (it multiplies cos and sin), got 0");
  EXPECT_EQ(error_of(R"({"rope_parameters": {"rope_type": "dynamic", "factor": 2,
      "original_max_position_embeddings": 2048.5}})"),
            "convention: rope_parameters: \"original_max_position_embeddings\" must be a positive integer, got "
            "2048.5");
  EXPECT_EQ(error_of(R"({"rope_parameters": [1]})"), "convention: rope_parameters: must be a JSON object, got [1]");
  EXPECT_EQ(error_of(R"({"head_dim": 64})"), "convention: head_dim 64 but the heads are 128 wide");
  EXPECT_EQ(error_of(R"({"layout": "neox"})"), "convention: layout must be interleaved or half_split, got \"neox\"");
}

TEST(RopeConventionErrors, LongropeNeedsItsListsAndContext) {
  EXPECT_EQ(error_of(R"({"rope_scaling": {"rope_type": "longrope", "factor": 4}})"),
            "convention: rope_scaling: LongRoPE needs \"short_factor\", a non-empty array of numbers");
  EXPECT_EQ(error_of(R"({"rope_scaling": {"rope_type": "longrope", "factor": 4, "short_factor": [1],
      "long_factor": [2]}})"),
            "convention: rope_scaling: LongRoPE needs \"original_max_position_embeddings\" (it picks the short or "
            "long factors)");
  EXPECT_EQ(error_of(R"({"rope_parameters": {"rope_type": "longrope", "short_factor": [1], "long_factor": [2, 2],
      "original_max_position_embeddings": 64, "factor": 4}})"),
            "convention: rope_parameters: short_factor has 1 entries, long_factor 2");
  EXPECT_EQ(error_of(R"({"rope_parameters": {"rope_type": "longrope", "short_factor": [1], "long_factor": [2],
      "original_max_position_embeddings": 64}})"),
            "convention: rope_parameters: LongRoPE needs \"factor\" (max_position_embeddings / "
            "original_max_position_embeddings) or \"attention_factor\"");
  EXPECT_EQ(error_of(R"({"rope_parameters": {"rope_type": "longrope", "short_factor": [1, -1],
      "long_factor": [2, 2], "original_max_position_embeddings": 64, "factor": 4}})"),
            "convention: rope_parameters: \"short_factor\" entries must be finite and > 0, got -1");
}

TEST(RopeConventionErrors, V4AndV5KeysThatContradictEachOther) {
  EXPECT_EQ(error_of(R"({"rope_theta": 10000, "rope_parameters": {"rope_theta": 500000}})"),
            "convention: rope_parameters.rope_theta 500000 contradicts rope_theta 10000");
  EXPECT_EQ(error_of(R"({"base": 10000, "rope_theta": 500000})"),
            "convention: rope_theta 500000 contradicts base 10000");
  EXPECT_EQ(error_of(R"({"rope_scaling": {"rope_type": "linear", "factor": 4},
      "rope_parameters": {"rope_type": "linear", "factor": 8}})"),
            "convention: rope_parameters.factor 8 contradicts rope_scaling.factor 4");
  EXPECT_EQ(error_of(R"({"rope_scaling": {"rope_type": "yarn", "factor": 4}, "rope_parameters": {}})"),
            "convention: rope_parameters.rope_type \"default\" contradicts rope_scaling.rope_type \"yarn\"");
  EXPECT_EQ(error_of(R"({"linear_factor": 2, "rope_parameters": {"rope_type": "linear", "factor": 4}})"),
            "convention: rope_parameters.factor 4 contradicts linear_factor 2");
  EXPECT_EQ(error_of(R"({"partial_rotary_factor": 0.5, "rope_parameters": {"partial_rotary_factor": 0.25}})"),
            "convention: rope_parameters.partial_rotary_factor 0.25 contradicts partial_rotary_factor 0.5");
  EXPECT_EQ(error_of(R"({"rotary_dim": 64, "rope_parameters": {"partial_rotary_factor": 0.25}})"),
            "convention: rotary_dim 64 contradicts rope_parameters.partial_rotary_factor 0.25 (rotary_dim 32)");
  EXPECT_EQ(error_of(R"({"rope_scaling": {"rope_type": "longrope", "short_factor": [1], "long_factor": [2],
      "original_max_position_embeddings": 64, "factor": 4}, "rope_parameters": {"rope_type": "longrope",
      "short_factor": [1.5], "long_factor": [2], "original_max_position_embeddings": 64, "factor": 4}})",
                     2),
            "convention: rope_parameters.short_factor [1.5] (1 entries) contradicts rope_scaling.short_factor [1] (1 "
            "entries)");
}

TEST(RopeConventionErrors, LayerTypeSelection) {
  const std::string keyed = R"("rope_parameters": {"full_attention": {"rope_theta": 1e6},
      "sliding_attention": {"rope_theta": 10000}, "no_rope": null})";
  EXPECT_EQ(error_of("{" + keyed + "}"),
            "convention: rope_parameters is keyed by layer type (full_attention, no_rope, sliding_attention): choose "
            "one with \"layer_type\"");
  EXPECT_EQ(error_of(R"({"layer_type": "global", )" + keyed + "}"),
            "convention: layer_type \"global\" is not among rope_parameters' layer types (full_attention, no_rope, "
            "sliding_attention)");
  EXPECT_EQ(error_of(R"({"layer_type": "no_rope", )" + keyed + "}"),
            "convention: layer_type \"no_rope\" has no RoPE (its rope_parameters entry is null: a NoPE layer)");
  EXPECT_EQ(error_of(R"({"layer_type": 1, )" + keyed + "}"), "convention: \"layer_type\" must be a string, got 1");
  EXPECT_EQ(error_of(R"({"layer_type": "full_attention", "rope_parameters": {"rope_theta": 1e6}})"),
            "convention: \"layer_type\" selects a layer type, but rope_parameters is not keyed by layer type (it is "
            "one RoPE for every layer)");
  EXPECT_EQ(error_of(R"({"layer_type": "full_attention"})"),
            "convention: \"layer_type\" selects a layer type of rope_parameters, but there is none");
  EXPECT_EQ(error_of(R"({"rope_parameters": {"full_attention": {"rope_theta": 1e6}, "rope_theta": 10000}})"),
            "convention: rope_parameters mixes layer types (full_attention) with \"rope_theta\": keyed by layer "
            "type, each value is one layer type's RoPE dict");
  EXPECT_EQ(error_of(R"({"layer_type": "full_attention", "rope_parameters": {"full_attention": {"rope_type": "yarn",
      "factor": 2, "beta": 1}}})"),
            "convention: rope_parameters.full_attention: unknown key \"beta\" (rope_type \"yarn\" takes factor, "
            "original_max_position_embeddings, beta_fast, beta_slow, mscale, mscale_all_dim, attention_factor, "
            "truncate, rope_theta, partial_rotary_factor)");
}

TEST(RopeConventionErrors, StatementsThatMakeNoValidSpec) {
  EXPECT_EQ(error_of(R"({"rotary_dim": 64, "rope_parameters": {"rope_type": "proportional"}})"),
            "convention: rotary_dim 64 contradicts rope_parameters.rope_type \"proportional\", which turns pairs over "
            "the whole head (head_dim 128, frequencies base^(-2i/head_dim))");
  EXPECT_EQ(error_of(R"({"rope_parameters": {"rope_type": "proportional", "partial_rotary_factor": 0.1}})", 8),
            "convention: rope_parameters.partial_rotary_factor 0.1 leaves rope_type \"proportional\" no pair to turn "
            "at head_dim 8");
  EXPECT_EQ(error_of(R"({"partial_rotary_factor": 1.5})"),
            "convention: partial_rotary_factor must be in (0, 1], got 1.5");
  EXPECT_EQ(error_of(R"({"rope_parameters": {"rope_type": "linear", "factor": 0.5}})"),
            "convention: RoPE linear scaling needs a finite factor >= 1, got 0.5");
  EXPECT_EQ(error_of(R"({"rope_parameters": {"rope_type": "yarn", "factor": 4, "beta_fast": 1, "beta_slow": 2}})"),
            "convention: YaRN needs beta_fast > beta_slow > 0, got 1 and 2");
  // mscale -20 makes get_mscale(4, -20) negative: no attention factor.
  EXPECT_EQ(error_of(R"({"rope_parameters": {"rope_type": "yarn", "factor": 4, "mscale": -20, "mscale_all_dim": 1}})"),
            fmt::format("convention: YaRN attention factor must be finite and > 0, got {} (mscale -20 / "
                        "mscale_all_dim 1 at factor 4)",
                        yarn_get_mscale(4, -20) / yarn_get_mscale(4, 1)));
  EXPECT_EQ(error_of(R"({"rope_scaling": {"rope_type": "dynamic", "factor": 2}})", 2),
            "convention: NTK scaling needs rotary_dim >= 4 (d/(d-2)), got 2");
}

}  // namespace
}  // namespace pecheck::dumpcheck
