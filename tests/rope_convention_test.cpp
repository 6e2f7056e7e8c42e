// The RoPE convention reader (dumpcheck/rope_manifest.cpp) on what it accepts: transformers 5's
// rope_parameters, one test per rope_type with every field it takes, flat and keyed by layer type
// (layer_type selecting one); 4.x's rope_theta + rope_scaling stating the same spec; pecheck's
// own keys; v4 and v5 keys that agree. The error paths are in rope_convention_errors_test.cpp.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "dumpcheck/rope_manifest.hpp"

namespace pecheck::dumpcheck {
namespace {

StatedRope read(const std::string& json, int head_dim = 128) {
  return read_rope_convention(nlohmann::json::parse(json), head_dim, "convention");
}

/// The spec a convention states, at HF's rotate_half unless it states a layout (as a pin makes it).
RopeSpec spec_of(const std::string& json, int head_dim = 128) {
  const StatedRope s = read(json, head_dim);
  return stated_spec(s, RopeSpec{.head_dim = head_dim,
                                 .rotary_dim = s.rotary_dim.value_or(head_dim),
                                 .layout = s.layout.value_or(RopeLayout::half_split)});
}

TEST(RopeConvention, DefaultStatesBaseAndNoScaling) {
  const StatedRope s = read(R"({"rope_parameters": {"rope_type": "default", "rope_theta": 500000}})");
  EXPECT_EQ(s.rule, RopeScalingKind::none);
  EXPECT_EQ(s.base, 500000);
  // rope_type defaults to "default" in transformers 5: the rule is stated all the same.
  EXPECT_EQ(read(R"({"rope_parameters": {"rope_theta": 1e6}})").rule, RopeScalingKind::none);
}

TEST(RopeConvention, PartialRotaryFactorInsideRopeParameters) {
  const RopeSpec s = spec_of(R"({"rope_parameters": {"rope_theta": 10000, "partial_rotary_factor": 0.25}})");
  EXPECT_EQ(s.rotary_dim, 32);  // int(128 * 0.25)
  EXPECT_EQ(s.scaling.kind, RopeScalingKind::none);
}

TEST(RopeConvention, LinearTakesFactor) {
  const RopeSpec s = spec_of(R"({"rope_parameters": {"rope_type": "linear", "factor": 4, "rope_theta": 10000}})");
  EXPECT_EQ(s.scaling.kind, RopeScalingKind::linear);
  EXPECT_EQ(s.scaling.factor, 4);
}

TEST(RopeConvention, DynamicTakesFactorAndOriginalContext) {
  const RopeSpec s = spec_of(
      R"({"rope_parameters": {"rope_type": "dynamic", "factor": 2, "original_max_position_embeddings": 2048}})");
  EXPECT_EQ(s.scaling.kind, RopeScalingKind::dynamic_ntk);
  EXPECT_EQ(s.scaling.factor, 2);
  EXPECT_EQ(s.scaling.original_max_position, 2048);
}

TEST(RopeConvention, YarnTakesEveryField) {
  const RopeSpec s = spec_of(R"({"rope_parameters": {"rope_type": "yarn", "rope_theta": 10000, "factor": 4,
      "original_max_position_embeddings": 4096, "beta_fast": 16, "beta_slow": 2, "mscale": 0.8,
      "mscale_all_dim": 0.5, "truncate": false}})");
  const RopeScaling& sc = s.scaling;
  EXPECT_EQ(sc.kind, RopeScalingKind::yarn);
  EXPECT_EQ(sc.factor, 4);
  EXPECT_EQ(sc.original_max_position, 4096);
  EXPECT_EQ(sc.beta_fast, 16);
  EXPECT_EQ(sc.beta_slow, 2);
  EXPECT_FALSE(sc.truncate);
  EXPECT_EQ(sc.mscale, 0.8);
  EXPECT_EQ(sc.mscale_all_dim, 0.5);
  // HF: get_mscale(4, 0.8) / get_mscale(4, 0.5)
  EXPECT_DOUBLE_EQ(s.magnitude(), (0.08 * std::log(4.0) + 1) / (0.05 * std::log(4.0) + 1));
  // attention_factor, when stated, is the factor itself, whatever mscale says (HF's order).
  const RopeSpec a = spec_of(R"({"rope_parameters": {"rope_type": "yarn", "factor": 4, "attention_factor": 1.25,
      "mscale": 0.8, "mscale_all_dim": 0.5, "original_max_position_embeddings": 4096}})");
  EXPECT_EQ(a.magnitude(), 1.25);
  EXPECT_TRUE(a.scaling.truncate);  // HF's default
}

TEST(RopeConvention, YarnWithOneMscaleKeepsTheDefaultFactor) {
  // HF: `if mscale and mscale_all_dim` — one of them alone leaves 0.1 ln s + 1.
  const RopeSpec s = spec_of(
      R"({"rope_parameters": {"rope_type": "yarn", "factor": 4, "mscale": 0.8, "original_max_position_embeddings": 64}})");
  EXPECT_DOUBLE_EQ(s.magnitude(), 0.1 * std::log(4.0) + 1);
}

TEST(RopeConvention, LongropeTakesItsListsContextFactorAndAttentionFactor) {
  const RopeSpec s = spec_of(R"({"rope_parameters": {"rope_type": "longrope", "short_factor": [1, 1.5],
      "long_factor": [2, 3], "factor": 8, "original_max_position_embeddings": 4096, "attention_factor": 1.1}})",
                             4);
  const RopeScaling& sc = s.scaling;
  EXPECT_EQ(sc.kind, RopeScalingKind::longrope);
  EXPECT_EQ(sc.short_factor, (std::vector<double>{1, 1.5}));
  EXPECT_EQ(sc.long_factor, (std::vector<double>{2, 3}));
  EXPECT_EQ(sc.factor, 8);
  EXPECT_EQ(sc.original_max_position, 4096);
  EXPECT_EQ(s.magnitude(), 1.1);
}

TEST(RopeConvention, Llama3TakesItsFourFields) {
  const RopeSpec s = spec_of(R"({"rope_parameters": {"rope_type": "llama3", "rope_theta": 500000, "factor": 8,
      "low_freq_factor": 1, "high_freq_factor": 4, "original_max_position_embeddings": 8192}})");
  const RopeScaling& sc = s.scaling;
  EXPECT_EQ(sc.kind, RopeScalingKind::llama3);
  EXPECT_EQ(sc.factor, 8);
  EXPECT_EQ(sc.low_freq_factor, 1);
  EXPECT_EQ(sc.high_freq_factor, 4);
  EXPECT_EQ(sc.original_max_position, 8192);
}

TEST(RopeConvention, ProportionalTurnsTheFirstPairsOverTheWholeHead) {
  // Gemma 4's full-attention layers: int(0.25 * 256 // 2) = 32 pairs turn, the other 96 stay still.
  const RopeSpec s = spec_of(
      R"({"rope_parameters": {"rope_type": "proportional", "partial_rotary_factor": 0.25, "rope_theta": 1e6}})", 256);
  EXPECT_EQ(s.rotary_dim, 256);
  EXPECT_EQ(s.scaling.rotated_pairs, 32);
  EXPECT_EQ(s.scaling.kind, RopeScalingKind::none);  // factor defaults to 1
  const RopeSpec f =
      spec_of(R"({"rope_parameters": {"rope_type": "proportional", "partial_rotary_factor": 0.3, "factor": 2}})", 10);
  EXPECT_EQ(f.scaling.rotated_pairs, 1);  // int(0.3 * 10 // 2) = int(3.0 // 2)
  EXPECT_EQ(f.scaling.kind, RopeScalingKind::linear);
  EXPECT_EQ(f.scaling.factor, 2);
  EXPECT_EQ(spec_of(R"({"rope_parameters": {"rope_type": "proportional"}})", 8).scaling.rotated_pairs, 4);
}

TEST(RopeConvention, NtkTakesFactor) {
  EXPECT_EQ(spec_of(R"({"rope_parameters": {"rope_type": "ntk", "factor": 2}})").scaling.kind, RopeScalingKind::ntk);
}

TEST(RopeConvention, V4RopeScalingStatesWhatV5RopeParametersStates) {
  const RopeSpec v4 = spec_of(R"({"rope_theta": 10000, "partial_rotary_factor": 0.5, "rope_scaling": {"type": "yarn",
      "factor": 4, "original_max_position_embeddings": 4096, "beta_fast": 16, "beta_slow": 2, "mscale": 0.8,
      "mscale_all_dim": 0.5, "truncate": false}})");
  const RopeSpec v5 = spec_of(R"({"rope_parameters": {"rope_type": "yarn", "rope_theta": 10000,
      "partial_rotary_factor": 0.5, "factor": 4, "original_max_position_embeddings": 4096, "beta_fast": 16,
      "beta_slow": 2, "mscale": 0.8, "mscale_all_dim": 0.5, "truncate": false}})");
  EXPECT_EQ(v4, v5);
  EXPECT_EQ(v4.rotary_dim, 64);
  // Phi-3's first configs named LongRoPE "su".
  EXPECT_EQ(spec_of(R"({"rope_scaling": {"type": "su", "short_factor": [1], "long_factor": [2], "factor": 4,
      "original_max_position_embeddings": 64}})",
                    2)
                .scaling.kind,
            RopeScalingKind::longrope);
}

TEST(RopeConvention, PechecksOwnKeys) {
  const StatedRope s = read(R"({"layout": "interleaved", "rotary_dim": 64, "base": 5e5, "linear_factor": 2})");
  EXPECT_EQ(s.layout, RopeLayout::interleaved);
  EXPECT_EQ(s.rotary_dim, 64);
  EXPECT_EQ(s.base, 5e5);
  EXPECT_EQ(s.rule, RopeScalingKind::linear);
  EXPECT_EQ(s.factor, 2);
  EXPECT_EQ(read(R"({"linear_factor": 1})").rule, RopeScalingKind::none);
  EXPECT_FALSE(read("{}").rule);  // nothing stated: the dump reader fits it
}

TEST(RopeConvention, AgreeingV4AndV5KeysAreOneStatement) {
  const RopeSpec s = spec_of(R"({"rope_theta": 1e6, "base": 1e6, "linear_factor": 4, "partial_rotary_factor": 0.5,
      "rope_scaling": {"rope_type": "linear", "factor": 4},
      "rope_parameters": {"rope_type": "linear", "factor": 4, "rope_theta": 1e6, "partial_rotary_factor": 0.5}})");
  EXPECT_EQ(s.base, 1e6);
  EXPECT_EQ(s.rotary_dim, 64);
  EXPECT_EQ(s.scaling.kind, RopeScalingKind::linear);
}

TEST(RopeConvention, LayerTypeSelectsOneRopeOfSeveral) {
  // Gemma 3 in transformers 5, with a NoPE layer type beside (null: HF skips it).
  const std::string gemma = R"("rope_parameters": {"full_attention": {"rope_type": "linear", "factor": 8,
      "rope_theta": 1e6}, "sliding_attention": {"rope_type": "default", "rope_theta": 10000}, "no_rope": null})";
  const RopeSpec full = spec_of("{\"layer_type\": \"full_attention\", " + gemma + "}", 256);
  EXPECT_EQ(full.base, 1e6);
  EXPECT_EQ(full.scaling.kind, RopeScalingKind::linear);
  EXPECT_EQ(full.scaling.factor, 8);
  const RopeSpec sliding = spec_of("{\"layer_type\": \"sliding_attention\", " + gemma + "}", 256);
  EXPECT_EQ(sliding.base, 10000);
  EXPECT_EQ(sliding.scaling.kind, RopeScalingKind::none);
  // A top-level rope_theta that agrees with the chosen layer's is the same statement.
  EXPECT_EQ(spec_of("{\"rope_theta\": 10000, \"layer_type\": \"sliding_attention\", " + gemma + "}", 256).base, 10000);
}

TEST(RopeConvention, TheCaseStringShowsTheNewFields) {
  EXPECT_EQ(spec_of(R"({"rope_parameters": {"rope_type": "yarn", "factor": 4, "truncate": false,
      "original_max_position_embeddings": 4096, "mscale": 1, "mscale_all_dim": 0.5}})")
                .describe(),
            fmt::format("rope(layout=half_split,d=128,rot=128,base=10000,yarn(s=4,L0=4096,beta=32/1,truncate=false,"
                        "mscale=1/0.5,a={:.6g}))",
                        (0.1 * std::log(4.0) + 1) / (0.05 * std::log(4.0) + 1)));
  EXPECT_EQ(spec_of(R"({"rope_parameters": {"rope_type": "yarn", "factor": 4, "attention_factor": 1.25,
      "original_max_position_embeddings": 4096}})")
                .describe(),
            "rope(layout=half_split,d=128,rot=128,base=10000,yarn(s=4,L0=4096,beta=32/1,a=1.25))");
  EXPECT_EQ(spec_of(R"({"rope_parameters": {"rope_type": "proportional", "partial_rotary_factor": 0.25,
      "factor": 2}})")
                .describe(),
            "rope(layout=half_split,d=128,rot=128,base=10000,proportional(s=2,rotated=16))");
}

}  // namespace
}  // namespace pecheck::dumpcheck
