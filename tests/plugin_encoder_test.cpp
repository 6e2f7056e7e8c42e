// The plugin host in-process: the C example plugin (examples/plugin-c) agrees with the
// reference through the encoder interface in every dtype, declares what it offers, and each fence
// (trailing sentinel, guard page, poisoned output, status codes) reports what the plugin did.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "harness/isolation.hpp"
#include "harness/reference_encoder.hpp"
#include "plugin/plugin_host.hpp"

namespace pecheck {
namespace {

std::unique_ptr<Encoder> example(const char* path = PECHECK_EXAMPLE_PLUGIN) { return plugin::make_encoder(path); }

TEST(PluginHost, DeclaresWhatTheExampleOffers) {
  const plugin::Declaration d = plugin::probe(PECHECK_EXAMPLE_PLUGIN, 30);
  EXPECT_EQ(d.name, "example-c-rope-sinusoidal");
  EXPECT_EQ(d.ops,
            (1u << PECHECK_OP_ROPE_APPLY) | (1u << PECHECK_OP_SINUSOIDAL_TABLE) | (1u << PECHECK_OP_MROPE_APPLY));
  EXPECT_EQ(d.conventions, d.ops);
  EXPECT_EQ(d.dtypes, 7u);
  const auto enc = example();
  EXPECT_TRUE(enc->supports(Op::rope_apply, DType::bf16).ok);
  EXPECT_TRUE(enc->supports(Op::mrope_apply, DType::f16).ok);
  const Support alibi = enc->supports(Op::alibi_bias, DType::f32);
  EXPECT_FALSE(alibi.ok);
  EXPECT_NE(alibi.reason.find("does not offer alibi_bias"), std::string::npos) << alibi.reason;
  EXPECT_NE(enc->supports(Op::rope2d_apply, DType::f32).reason.find("plugin ABI 1 has no"), std::string::npos);
}

TEST(PluginHost, RopeAgreesWithTheReferenceInEveryDtype) {
  const auto enc = example();
  const auto ref = make_reference_double_encoder();
  const RopeSpec spec{.head_dim = 12, .rotary_dim = 8, .base = 10000, .layout = RopeLayout::half_split};
  const std::vector<std::int64_t> positions{0, 1, 4097, (1 << 24) - 1};
  for (DType dt : kAllDTypes) {
    std::vector<float> x(positions.size() * 2 * 12);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = round_to(dt, std::sin(0.37 * double(i) + 0.1));
    std::vector<float> got = x, want = x;
    enc->run(RopeApply{spec, dt, 2, positions, got});
    ref->run(RopeApply{spec, dt, 2, positions, want});
    double worst = 0;
    for (std::size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::fabs(double(got[i]) - want[i]));
    EXPECT_LE(worst, 2 * unit_roundoff(dt) * 2) << dtype_name(dt);  // |x| <= sqrt(2) per pair
    for (std::size_t t = 0; t < positions.size() * 2; ++t)          // pass-through dims bit-identical
      for (std::size_t j = 8; j < 12; ++j) EXPECT_EQ(got[t * 12 + j], x[t * 12 + j]);
    EXPECT_NE(got, x) << "nothing rotated";
  }
}

TEST(PluginHost, SinusoidalTableMatchesTheReference) {
  const auto enc = example();
  const auto ref = make_reference_double_encoder();
  const SinusoidalSpec spec{.d_model = 10, .layout = SinusoidalLayout::concatenated, .padding_idx = 3};
  const std::vector<std::int64_t> positions{0, 3, 77, 1 << 20};
  std::vector<float> got(40), want(40);
  enc->run(SinusoidalTable{spec, DType::f32, positions, got});
  ref->run(SinusoidalTable{spec, DType::f32, positions, want});
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 2 * 0x1p-24) << i;
}

TEST(PluginHost, UnsupportedStatusIsASkipWithThePluginsReason) {
  const auto enc = example();
  RopeSpec spec{.head_dim = 8, .rotary_dim = 8};
  spec.scaling = {.kind = RopeScalingKind::yarn, .factor = 4};
  std::vector<float> x(8, 0.5f);
  try {
    enc->run(RopeApply{spec, DType::f32, 1, std::vector<std::int64_t>{5}, x});
    FAIL() << "no Unsupported";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("only unscaled and linearly scaled RoPE"), std::string::npos) << e.what();
  }
}

// The example sets no abi_revision: pecheck itself declines LongRoPE, so the plugin never sees a
// scaling number (6) or spec fields its header did not have.
TEST(PluginHost, LongropeIsNeverSentBelowAbiRevision1) {
  const auto enc = example();
  RopeSpec spec{.head_dim = 8, .rotary_dim = 8};
  spec.scaling = {
      .kind = RopeScalingKind::longrope, .factor = 4, .short_factor = {1, 1.1, 1.2, 1.3}, .long_factor = {1, 2, 3, 4}};
  std::vector<float> x(8, 0.5f);
  try {
    enc->run(RopeApply{spec, DType::f32, 1, std::vector<std::int64_t>{5}, x});
    FAIL() << "no Unsupported";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("abi_revision is below 1"), std::string::npos) << e.what();
  }
  EXPECT_EQ(x, std::vector<float>(8, 0.5f));
}

TEST(PluginHost, WriteIntoTheSentinelsIsReported) {
  const auto enc = example(PECHECK_EXAMPLE_PLUGIN_OOB);
  std::vector<float> out(6);  // 24 bytes: the stray element lands in the 40 bytes of sentinels
  try {
    enc->run(SinusoidalTable{{.d_model = 6}, DType::f32, std::vector<std::int64_t>{2}, out});
    FAIL() << "the stray write went unseen";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("sentinel overwritten 1 bytes past the end of out"), std::string::npos)
        << e.what();
  }
}

TEST(PluginHost, WriteIntoTheGuardPageIsNamedInTheChild) {
  // 64 bytes of output end exactly at the guard page: the stray element faults there.
  const ChildOutcome child = run_in_child(
      [] {
        std::vector<float> out(16);
        example(PECHECK_EXAMPLE_PLUGIN_OOB)
            ->run(SinusoidalTable{{.d_model = 16}, DType::f32, std::vector<std::int64_t>{1}, out});
        return std::string("returned");
      },
      30);
  EXPECT_FALSE(child.reported);
  EXPECT_NE(child.failure.find("out-of-bounds access 1 bytes past the end of out (guard page)"), std::string::npos)
      << child.failure;
  EXPECT_NE(child.failure.find("signal 11"), std::string::npos) << child.failure;
}

TEST(PluginHost, UnwrittenOutputIsCaughtByThePoison) {
  const auto enc = example(PECHECK_EXAMPLE_PLUGIN_UNWRITTEN);
  for (DType dt : kAllDTypes) {
    std::vector<float> out(2 * 8);
    try {
      enc->run(SinusoidalTable{{.d_model = 8}, dt, std::vector<std::int64_t>{1, 2}, out});
      ADD_FAILURE() << "unwritten element not seen in " << dtype_name(dt);
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("left out[15]"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace pecheck
