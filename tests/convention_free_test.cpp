// The convention_free flag is what lets pecheck check an encoder that states no convention (a
// plugin's opaque operation), so it must be true: every flagged property holds for an encoder
// that ignores the spec's convention and applies its own, and the agreement properties, which
// are never flagged, catch that same encoder.
#include <gtest/gtest.h>

#include <algorithm>

#include "harness/property.hpp"
#include "mutants/forwarding_encoder.hpp"
#include "properties/registry.hpp"

namespace pecheck {
namespace {

/// Reads only the sizes from the spec: RoPE half-split over the whole head with base 5e5 and no
/// scaling, the sinusoid concatenated with base 777, the 2-D relative bias's offsets column-major
/// (dc before dr) with the class token's three rows in reverse — whatever was asked.
class OwnConvention final : public mutants::Forwarding {
 public:
  OwnConvention() : Forwarding("own-convention") {}
  void run(const RopeApply& c) override {
    const auto& [s, dt, h, p, x] = c;
    const RopeSpec own{.head_dim = s.head_dim, .rotary_dim = s.head_dim, .base = 5e5, .layout = RopeLayout::half_split};
    inner_->run(RopeApply{own, dt, h, p, x});
  }
  void run(const SinusoidalTable& c) override {
    const auto& [s, dt, p, o] = c;
    inner_->run(
        SinusoidalTable{{.d_model = s.d_model, .base = 777, .layout = SinusoidalLayout::concatenated}, dt, p, o});
  }
  void run(const MropeApply& c) override {  // its own base, pairing and assignment; the sizes kept
    MropeApply own = c;
    own.spec.base = 5e5;
    own.spec.layout = RopeLayout::half_split;
    own.spec.assignment = MropeAssignment::interleaved;
    inner_->run(own);
  }
  void run(const RelativeBias2d& c) override {
    const auto& [s, dt, table, rows, cols, out] = c;
    c.check();
    const std::size_t n = rows.size(), H = static_cast<std::size_t>(s.heads), first = s.class_token ? 1 : 0;
    const auto last = static_cast<std::size_t>(s.table_rows()) - 1;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        const std::size_t r =
            i < first || j < first
                ? last - (i < first && j < first ? 2
                          : i < first            ? 0
                                                 : 1)
                : static_cast<std::size_t>((cols[i] - cols[j] + s.window_cols - 1) * (2 * s.window_rows - 1) + rows[i] -
                                           rows[j] + s.window_rows - 1);
        for (std::size_t h = 0; h < H; ++h) out[(h * n + i) * n + j] = table[r * H + h];
      }
  }
};

const Property& property(const std::string& id) {
  const auto& all = property_registry();
  const auto it = std::find_if(all.begin(), all.end(), [&](const Property& p) { return p.id == id; });
  EXPECT_NE(it, all.end()) << id;
  return *it;
}

TEST(ConventionFree, FlaggedPropertiesHoldForAnEncoderWithItsOwnConvention) {
  int flagged = 0;
  for (const Property& p : property_registry()) {
    if (!p.convention_free) continue;
    EXPECT_FALSE(p.id.ends_with(".agrees_with_reference")) << p.id << ": agreement needs a convention";
    ++flagged;
    for (DType dt : {DType::f32, DType::bf16}) {
      OwnConvention enc;
      const PropertyResult r = p.run(enc, dt, {.seed = 11, .cases = 60});
      EXPECT_EQ(r.verdict, Verdict::pass)
          << p.id << " / " << dtype_name(dt) << ": " << r.message << " " << r.counterexample;
      EXPECT_GT(r.cases, 0) << p.id;
    }
  }
  EXPECT_GE(flagged, 5);
  EXPECT_TRUE(property("rope.relative").convention_free);
  EXPECT_TRUE(property("sinusoidal.offset_inner_product").convention_free);
}

TEST(ConventionFree, AgreementCatchesTheSameEncoder) {
  for (const char* id : {"rope.agrees_with_reference", "sinusoidal.agrees_with_reference",
                         "mrope.agrees_with_reference", "relative_bias_2d.agrees_with_reference"}) {
    const Property& p = property(id);
    EXPECT_FALSE(p.convention_free);
    OwnConvention enc;
    const PropertyResult r = p.run(enc, DType::f32, {.seed = 11, .cases = 60});
    EXPECT_EQ(r.verdict, Verdict::fail) << id;
  }
}

TEST(ConventionFree, ConventionDependentFamilyPropertiesAreNotFlagged) {
  // Each compares two conventions or reads the pairs from the layout: an opaque encoder would
  // fail them without being wrong.
  for (const char* id : {"rope.layout_conjugacy", "rope.linear_scaling", "rope.ntk_base", "rope.orthogonal",
                         "rope.composition", "sinusoidal.layout_permutation", "sinusoidal.shift_linearity"})
    EXPECT_FALSE(property(id).convention_free) << id;
}

}  // namespace
}  // namespace pecheck
