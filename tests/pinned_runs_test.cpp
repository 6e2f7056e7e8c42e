// What a Python function needs from the runner (issue 16), checked on pecheck's own encoders:
// pins (harness/pins.hpp) rewrite every drawn spec to the one convention an encoder implements
// and refuse the properties that vary it; a position ceiling keeps every drawn position (and the
// sums a property forms of two) within it; a weaker RoPE contract passes fp32 angles that the exact
// one fails; M-RoPE takes a pin as RoPE does; a pin whose length follows each call (transformers'
// dynamic NTK) reaches only the properties that call at a case's own positions.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <type_traits>
#include <vector>

#include "harness/encoders.hpp"
#include "harness/generators.hpp"
#include "harness/runner.hpp"
#include "mutants/mutants.hpp"
#include "properties/registry.hpp"

namespace pecheck {
namespace {

std::unique_ptr<Encoder> scalar_encoder() { return make_encoder("scalar"); }

const Property& property(const std::string& id) { return registered_property(id); }

/// Forwards to the scalar backend and records every RoPE call's spec and positions.
class Recording final : public HandledBy<Recording> {
 public:
  explicit Recording(std::unique_ptr<Encoder> inner) : inner_(std::move(inner)) {}
  std::string name() const override { return "recording"; }
  Support supports(Op op, DType dt) const override { return inner_->supports(op, dt); }
  template <class Call>
  void handle(const Call& call) {
    if constexpr (std::is_same_v<Call, RopeApply>) {
      specs.push_back(call.spec);
      std::int64_t top = 0;
      for (auto p : call.positions) largest = std::max(largest, p < 0 ? -p : p), top = std::max(top, p);
      call_lengths.push_back(top + 1);
    }
    if constexpr (std::is_same_v<Call, MropeApply>) mrope_specs.push_back(call.spec);
    inner_->run(call);
  }
  std::vector<RopeSpec> specs;
  std::vector<std::int64_t> call_lengths;  ///< max(position) + 1 of each RoPE call
  std::vector<MropeSpec> mrope_specs;
  std::int64_t largest = 0;

 private:
  std::unique_ptr<Encoder> inner_;
};

std::shared_ptr<const Pins> interleaved_half_million() {
  auto pins = std::make_shared<Pins>();
  pins->rope = [](RopeSpec& s) {
    s.head_dim = 32, s.rotary_dim = 16, s.base = 500000, s.layout = RopeLayout::interleaved, s.scaling = {};
  };
  return pins;
}

TEST(PinnedRuns, EveryCallGetsThePinnedSpec) {
  Recording enc(scalar_encoder());
  const RunParams params{.seed = 3, .cases = 40, .pins = interleaved_half_million()};
  for (const char* id : {"rope.agrees_with_reference", "rope.relative", "rope.composition", "rope.inverse"}) {
    const PropertyResult r = property(id).run(enc, DType::f32, params);
    EXPECT_EQ(r.verdict, Verdict::pass) << id << ": " << r.message;
    EXPECT_EQ(r.cases, 40) << id;
  }
  ASSERT_GT(enc.specs.size(), 160u);
  for (const RopeSpec& s : enc.specs) {
    EXPECT_EQ(s.base, 500000);
    EXPECT_EQ(s.rotary_dim, 16);
    EXPECT_EQ(s.layout, RopeLayout::interleaved);
    EXPECT_EQ(s.scaling.kind, RopeScalingKind::none);
  }
}

TEST(PinnedRuns, EveryMropeCallGetsThePinnedSpec) {
  // Qwen2-VL's convention (HF: rope_theta 1e6, mrope_section [16, 24, 24], rotate_half pairs).
  Recording enc(scalar_encoder());
  auto pins = std::make_shared<Pins>();
  pins->mrope = [](MropeSpec& s) { s = MropeSpec{.head_dim = 128, .base = 1e6, .mrope_section = {16, 24, 24}}; };
  const RunParams params{.seed = 5, .cases = 30, .pins = pins};
  for (const char* id : {"mrope.agrees_with_reference", "mrope.relative"}) {
    const PropertyResult r = property(id).run(enc, DType::f32, params);
    EXPECT_EQ(r.verdict, Verdict::pass) << id << ": " << r.message;
  }
  ASSERT_GT(enc.mrope_specs.size(), 60u);
  for (const MropeSpec& s : enc.mrope_specs) EXPECT_EQ(s, (MropeSpec{.head_dim = 128, .base = 1e6}));
}

TEST(PinnedRuns, APropertyThatVariesTheConventionRefusesAPin) {
  const auto enc = scalar_encoder();
  const RunParams params{.seed = 3, .cases = 5, .pins = interleaved_half_million()};
  for (const Property& p : property_registry()) {
    if (p.op != Op::rope_apply) continue;
    if (p.pinnable)
      EXPECT_NO_THROW(p.run(*enc, DType::f32, params)) << p.id;
    else
      EXPECT_THROW(p.run(*enc, DType::f32, params), std::logic_error) << p.id;
  }
  // The ones that rewrite the layout, the scaling or the base within a case are not pinnable.
  for (const char* id : {"rope.layout_conjugacy", "rope.linear_scaling", "rope.ntk_base"})
    EXPECT_FALSE(property(id).pinnable) << id;
}

TEST(PinnedRuns, ALengthPerCallPinJudgesEachCallAtItsOwnLength) {
  auto pins = std::make_shared<Pins>();
  pins->rope = [](RopeSpec& s) {
    s.head_dim = 64, s.rotary_dim = 64, s.layout = RopeLayout::half_split;
    s.scaling = {.kind = RopeScalingKind::dynamic_ntk, .factor = 4, .original_max_position = 256};
  };
  pins->rope_length_per_call = true;
  Recording enc(scalar_encoder());
  const RunParams params{.seed = 13, .cases = 40, .pins = pins};
  for (const Property& p : property_registry()) {
    if (p.op != Op::rope_apply || !p.pinnable) continue;
    if (!p.calls_at_case_positions) {  // relative, composition, inverse, offset invariance
      EXPECT_NE(pinned_skip(p, *pins).value_or("").find("each call's own length"), std::string::npos) << p.id;
      EXPECT_THROW(p.run(enc, DType::f32, params), std::logic_error) << p.id;
      continue;
    }
    const PropertyResult r = p.run(enc, DType::f32, params);
    EXPECT_EQ(r.verdict, Verdict::pass) << p.id << ": " << r.message;
  }
  for (const char* id : {"rope.relative", "rope.composition", "rope.inverse", "rope.offset_invariance"})
    EXPECT_FALSE(property(id).calls_at_case_positions) << id;
  ASSERT_GT(enc.specs.size(), 100u);
  int stretched = 0;
  for (std::size_t i = 0; i < enc.specs.size(); ++i) {
    EXPECT_EQ(enc.specs[i].scaling.seq_len, std::max<std::int64_t>(1, enc.call_lengths[i]));
    stretched += enc.specs[i].scaling.seq_len > 256;
  }
  EXPECT_GT(stretched, 50);  // most calls reach past L0, where the base depends on the length
}

TEST(PinnedRuns, APinnedWrongConventionIsCaught) {
  // The scalar backend honours the spec; pinned to interleaved, a half-split encoder is wrong:
  // a mutant that always rotates half-split pairs must fail agreement under this pin.
  for (const auto& m : mutants::mutants()) {
    if (m.name != "RoPE pairing hard-coded to half-split") continue;
    const auto enc = m.make();
    const RunParams params{.seed = 3, .cases = 40, .pins = interleaved_half_million()};
    EXPECT_EQ(property("rope.agrees_with_reference").run(*enc, DType::f32, params).verdict, Verdict::fail);
    return;
  }
  FAIL() << "no half-split mutant in the catalogue";
}

TEST(PinnedRuns, ACeilingBoundsEveryPositionAndItsSums) {
  Recording enc(scalar_encoder());
  const RunParams params{.seed = 9, .cases = 60, .max_position = 1000};
  for (const Property& p : property_registry())
    if (p.op == Op::rope_apply && p.convention_free) {
      EXPECT_NE(p.run(enc, DType::f32, params).verdict, Verdict::crash);
    }
  EXPECT_GT(enc.largest, 200);  // the ceiling is used, not just respected
  EXPECT_LE(enc.largest, 1000);
  {
    const gen::PositionCeiling ceiling(99);
    const auto g = gen::position();
    for (int i = 0; i < 200; ++i) EXPECT_LE(g(rc::Random(static_cast<std::uint64_t>(i)), 50).value(), 49);
  }
  // Out of its scope, the catalogue's range again.
  bool beyond = false;
  const auto g = gen::position();
  for (int i = 0; i < 200 && !beyond; ++i) beyond = g(rc::Random(static_cast<std::uint64_t>(i)), 50).value() > 1000;
  EXPECT_TRUE(beyond);
}

TEST(PinnedRuns, TheFp32AnglesContractPassesFp32AnglesTheExactOneFails) {
  for (const auto& m : mutants::mutants()) {
    if (m.name != "RoPE angles in fp32 (the PyTorch formula)") continue;
    const auto enc = m.make();
    RunParams params{.seed = 11, .cases = 100};
    const Property& agrees = property("rope.agrees_with_reference");
    EXPECT_EQ(agrees.run(*enc, DType::f32, params).verdict, Verdict::fail);
    params.contract = tol::Contract::fp32_angles;
    const PropertyResult r = agrees.run(*enc, DType::f32, params);
    EXPECT_EQ(r.verdict, Verdict::pass) << r.counterexample << " " << r.message;
    EXPECT_GT(r.max_error_u, 2);  // what exact refused, fp32 angles allow
    for (const char* id : {"rope.orthogonal", "rope.inverse"})
      EXPECT_EQ(property(id).run(*enc, DType::f32, params).verdict, Verdict::pass) << id;
    // And the weakest contract still refuses a wrong base.
    for (const auto& w : mutants::mutants())
      if (w.name.find("base 1000") != std::string::npos) {
        EXPECT_EQ(agrees.run(*w.make(), DType::f32, params).verdict, Verdict::fail);
      }
    return;
  }
  FAIL() << "no fp32-angles mutant in the catalogue";
}

}  // namespace
}  // namespace pecheck
