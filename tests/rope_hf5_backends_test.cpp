// Every encoder under test (scalar, AVX2, AVX-512, CUDA, reference-double, cuda-emulated) on the
// rules transformers 5 added, each pinned the way a Python convention pins it: YaRN with truncate
// false, YaRN with a non-default attention factor (mscale / mscale_all_dim, and stated), and
// proportional RoPE (16 of 64 pairs turn). The pinnable RoPE properties (agreement with the
// 50-digit reference, relativity, composition, orthogonality, inverse) must hold in f32 and bf16:
// the kernels share impl/rope_frequencies.hpp, so one frequency rule serves them all. An
// unavailable backend is skipped with its reason, never dropped.
#include <gtest/gtest.h>

#include <cctype>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "harness/encoders.hpp"
#include "properties/registry.hpp"
#include "tests/test_seed.hpp"

namespace pecheck {
namespace {

struct Rule {
  std::string name;
  RopeSpec spec;
};

std::vector<Rule> rules() {
  const RopeScaling yarn{.kind = RopeScalingKind::yarn, .factor = 8, .original_max_position = 2048};
  RopeScaling untruncated = yarn, mscale = yarn, stated = yarn;
  untruncated.truncate = false;
  mscale.mscale = 0.8, mscale.mscale_all_dim = 0.5;
  stated.attention_factor = 0.9, stated.truncate = false;
  return {
      {"yarn_untruncated", {64, 64, 10000, RopeLayout::half_split, untruncated}},
      {"yarn_mscale", {64, 64, 10000, RopeLayout::half_split, mscale}},
      {"yarn_attention_factor", {64, 48, 5e5, RopeLayout::interleaved, stated}},
      {"proportional",
       {64, 64, 1e6, RopeLayout::half_split, {.kind = RopeScalingKind::linear, .factor = 2, .rotated_pairs = 16}}},
  };
}

std::shared_ptr<const Pins> pinned(const RopeSpec& spec) {
  auto pins = std::make_shared<Pins>();
  pins->rope = [spec](RopeSpec& s) { s = spec; };
  return pins;
}

class RopeHf5Backends : public ::testing::TestWithParam<std::string> {};

TEST_P(RopeHf5Backends, PinnedRulesHoldOnEveryProperty) {
  const Backend* backend = nullptr;
  for (const Backend& b : encoders_under_test())
    if (b.name == GetParam()) backend = &b;
  ASSERT_NE(backend, nullptr);
  const Availability a = backend->probe();
  if (!a.available) GTEST_SKIP() << backend->name << ": " << a.reason;
  const auto enc = backend->make();
  std::set<std::string> ran;
  for (const Rule& rule : rules()) {
    rule.spec.validate();
    const RunParams params{.seed = testing::test_seed(), .cases = 25, .pins = pinned(rule.spec)};
    for (const Property& p : property_registry()) {
      if (p.op != Op::rope_apply || !p.pinnable) continue;
      for (const DType dt : {DType::f32, DType::bf16}) {
        const PropertyResult r = p.run(*enc, dt, params);
        if (r.verdict == Verdict::skip) continue;  // the backend does not offer this dtype
        ran.insert(p.id);
        EXPECT_EQ(r.verdict, Verdict::pass) << rule.name << " " << p.id << " " << dtype_name(dt) << ": " << r.message;
        EXPECT_GT(r.nontrivial_cases, 0) << rule.name << " " << p.id;
      }
    }
  }
  for (const char* id :
       {"rope.agrees_with_reference", "rope.relative", "rope.composition", "rope.orthogonal", "rope.inverse"})
    EXPECT_TRUE(ran.contains(id)) << id << " did not run";
}

std::vector<std::string> backend_names() {
  std::vector<std::string> out;
  for (const Backend& b : encoders_under_test()) out.push_back(b.name);
  return out;
}

INSTANTIATE_TEST_SUITE_P(EveryBackend, RopeHf5Backends, ::testing::ValuesIn(backend_names()), [](const auto& info) {
  std::string n = info.param;
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
});

}  // namespace
}  // namespace pecheck
