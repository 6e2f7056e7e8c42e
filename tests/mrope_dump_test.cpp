// M-RoPE dumps (dumpcheck/mrope_dump.cpp): the section, assignment, layout, rotary_dim and base are
// read back from data the reference made (Qwen2-VL, Qwen3-VL, GLM-4.1V), and agreement holds; the
// real bugs of M-RoPE kernels fail: the section ignored (every pair by the temporal position, as
// maxtext issue 4616), height and width exchanged, a stated section the data contradicts, and
// positions rounded to bf16. Text tokens alone cannot tell the axes apart: ambiguous, said so.
#include "dumpcheck/mrope_dump.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>

#include "dumpcheck/convention_fit.hpp"
#include "reference/mrope.hpp"
#include "reference/real.hpp"
#include "tensorfiles/array.hpp"

namespace pecheck::dumpcheck {
namespace {

using Real = ref::DefaultReal;
/// Turns one head's rotated dims of token t; the reference, or a planted bug.
using Turn = std::function<void(std::span<Real> head, std::int64_t t, std::int64_t h, std::int64_t w)>;

/// Text tokens at 0..15 and a sparse run out to 4000, then an image of rows x cols patches at
/// s = 4001 (Qwen2-VL's get_rope_index); text_only keeps the text.
std::array<std::vector<std::int64_t>, 3> qwen_positions(int rows, int cols, bool text_only = false) {
  std::array<std::vector<std::int64_t>, 3> axes;
  auto add = [&](std::int64_t t, std::int64_t h, std::int64_t w) {
    axes[0].push_back(t), axes[1].push_back(h), axes[2].push_back(w);
  };
  for (std::int64_t p = 0; p < 16; ++p) add(p, p, p);
  for (std::int64_t p = 100; p < 4000; p += 37) add(p, p, p);
  if (!text_only)
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) add(4001, 4001 + i, 4001 + j);
  return axes;
}

Dump make_dump(DType dt, int head_dim, int rotary_dim, const Turn& turn,
               const std::array<std::vector<std::int64_t>, 3>& axes) {
  Dump d;
  d.dir = "test", d.encoder = "test", d.kind = Kind::mrope, d.dtype = dt;
  d.heads = 2, d.width = head_dim, d.axes = axes, d.positions = axes[0];
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> uniform(-1, 1);
  const std::size_t D = static_cast<std::size_t>(head_dim), R = static_cast<std::size_t>(rotary_dim);
  for (std::size_t k = 0; k < d.tokens() * 2 * D; ++k) d.x.push_back(round_to(dt, uniform(rng)));
  d.y = d.x;
  std::vector<Real> head(R);
  for (std::size_t base = 0; base < d.x.size(); base += D) {
    const std::size_t tok = base / D / 2;
    for (std::size_t k = 0; k < R; ++k) head[k] = Real(d.x[base + k]);
    turn(head, axes[0][tok], axes[1][tok], axes[2][tok]);
    for (std::size_t k = 0; k < R; ++k) d.y[base + k] = round_to(dt, ref::to_double(head[k]));
  }
  return d;
}

Turn reference(const MropeSpec& s) {
  return [s](std::span<Real> head, std::int64_t t, std::int64_t h, std::int64_t w) {
    ref::mrope_apply<Real>(s, 1, {&t, 1}, {&h, 1}, {&w, 1}, head);
  };
}

void expect_read(const Dump& d, const MropeSpec& want, int rotary_dim) {
  const MropeFit f = fit_mrope(d);
  EXPECT_FALSE(f.ambiguous) << f.text;
  EXPECT_EQ(f.spec.mrope_section, want.mrope_section) << f.text;
  EXPECT_EQ(f.spec.assignment, want.assignment) << f.text;
  EXPECT_EQ(f.rope.layout, want.layout) << f.text;
  EXPECT_EQ(f.rope.rotary_dim, rotary_dim) << f.text;
  EXPECT_EQ(f.rope.base, want.base) << f.text;
  const Measurement m = mrope_agreement(d, f, tol::Contract::exact);
  EXPECT_TRUE(m.holds()) << m.summary;
  EXPECT_GT(m.max_u, 0) << "a check that measured nothing";
}

TEST(MropeDump, ReadsQwen2VlSections) {
  const MropeSpec s{.head_dim = 128, .base = 1e6, .mrope_section = {16, 24, 24}};
  expect_read(make_dump(DType::f32, 128, 128, reference(s), qwen_positions(8, 8)), s, 128);
}

TEST(MropeDump, ReadsQwen3VlRoundRobin) {
  const MropeSpec s{
      .head_dim = 128, .base = 5e6, .mrope_section = {24, 20, 20}, .assignment = MropeAssignment::interleaved};
  expect_read(make_dump(DType::f32, 128, 128, reference(s), qwen_positions(16, 12)), s, 128);
}

TEST(MropeDump, ReadsGlmPartialRotaryGptJPairsInBf16) {
  const MropeSpec s{.head_dim = 64, .base = 10000, .mrope_section = {8, 12, 12}, .layout = RopeLayout::interleaved};
  const Dump d = make_dump(DType::bf16, 128, 64, reference(s), qwen_positions(8, 8));
  const MropeFit f = fit_mrope(d);  // bf16 cannot tell every slow pair's axis: maybe ambiguous, never wrong
  EXPECT_EQ(f.rope.rotary_dim, 64) << f.text;
  EXPECT_EQ(f.rope.layout, RopeLayout::interleaved) << f.text;
  EXPECT_EQ(f.rope.base, 10000) << f.text;
  EXPECT_TRUE(mrope_agreement(d, f, tol::Contract::exact).holds());
}

TEST(MropeDump, TextTokensAloneAreAmbiguousAndStillAgree) {
  const MropeSpec s{.head_dim = 64, .base = 1e6, .mrope_section = {8, 12, 12}};
  const Dump d = make_dump(DType::f32, 64, 64, reference(s), qwen_positions(0, 0, true));
  const MropeFit f = fit_mrope(d);
  EXPECT_TRUE(f.ambiguous);
  EXPECT_NE(f.text.find("ambiguous"), std::string::npos) << f.text;
  EXPECT_TRUE(mrope_agreement(d, f, tol::Contract::exact).holds());
}

TEST(MropeDump, SectionIgnoredFails) {
  // Every pair turned by the temporal position: 1-D RoPE where the image needs its rows and columns.
  const MropeSpec s{.head_dim = 128, .base = 1e6};
  const Turn temporal_only = [s](std::span<Real> head, std::int64_t t, std::int64_t, std::int64_t) {
    ref::mrope_apply<Real>(s, 1, {&t, 1}, {&t, 1}, {&t, 1}, head);
  };
  const Dump d = make_dump(DType::f32, 128, 128, temporal_only, qwen_positions(8, 8));
  try {
    fit_mrope(d);
    FAIL() << "an M-RoPE fitted to 1-D RoPE by the temporal position";
  } catch (const FitError& e) {
    EXPECT_NE(std::string(e.what()).find("by temporal"), std::string::npos) << e.what();
  }
}

TEST(MropeDump, HeightAndWidthExchangedFails) {
  const MropeSpec s{.head_dim = 128, .base = 1e6, .mrope_section = {16, 24, 24}};
  const Turn exchanged = [s](std::span<Real> head, std::int64_t t, std::int64_t h, std::int64_t w) {
    ref::mrope_apply<Real>(s, 1, {&t, 1}, {&w, 1}, {&h, 1}, head);  // position_ids read as (t, w, h)
  };
  try {
    const MropeFit f = fit_mrope(make_dump(DType::f32, 128, 128, exchanged, qwen_positions(8, 8)));
    FAIL() << "fitted: " << f.text;
  } catch (const FitError& e) {
    EXPECT_NE(std::string(e.what()).find("16-39 by width"), std::string::npos) << e.what();
  }
}

TEST(MropeDump, StatedSectionTheDataContradictsFails) {
  const MropeSpec s{
      .head_dim = 128, .base = 1e6, .mrope_section = {24, 20, 20}, .assignment = MropeAssignment::interleaved};
  Dump d = make_dump(DType::f32, 128, 128, reference(s), qwen_positions(8, 8));
  d.mrope = {.section = std::array{16, 24, 24}, .assignment = MropeAssignment::sectioned};
  try {
    const MropeFit f = fit_mrope(d);
    FAIL() << "fitted: " << f.text;
  } catch (const FitError& e) {  // and says what the data do fit: the likely cause
    EXPECT_NE(std::string(e.what()).find("they fit interleaved [24, 20, 20]"), std::string::npos) << e.what();
  }
}

TEST(MropeDump, PositionsRoundedToBf16DoNotPass) {
  const MropeSpec s{.head_dim = 128, .base = 1e6, .mrope_section = {16, 24, 24}};
  const Turn bf16_positions = [s](std::span<Real> head, std::int64_t t, std::int64_t h, std::int64_t w) {
    const auto r = [](std::int64_t p) { return static_cast<std::int64_t>(round_to(DType::bf16, double(p))); };
    const std::int64_t rt = r(t), rh = r(h), rw = r(w);
    ref::mrope_apply<Real>(s, 1, {&rt, 1}, {&rh, 1}, {&rw, 1}, head);
  };
  Dump d = make_dump(DType::f32, 128, 128, bf16_positions, qwen_positions(8, 8));
  d.rope.base = 1e6, d.rope.layout = RopeLayout::half_split;
  d.mrope = {.section = std::array{16, 24, 24}, .assignment = MropeAssignment::sectioned};
  try {
    const MropeFit f = fit_mrope(d);
    EXPECT_FALSE(mrope_agreement(d, f, tol::Contract::exact).holds()) << f.text;
  } catch (const FitError&) {  // no assignment explains it: as much a failure
  }
}

TEST(MropeDump, ConventionReadFromHfRopeParameters) {
  Dump d;
  d.width = 128;
  read_mrope_convention(nlohmann::json::parse(R"({"rope_parameters": {"rope_type": "default", "rope_theta": 5000000,
      "mrope_section": [24, 20, 20], "mrope_interleaved": true}})"),
                        d, "convention");
  EXPECT_EQ(d.rope.base, 5e6);
  EXPECT_EQ(d.mrope.section, (std::array{24, 20, 20}));
  EXPECT_EQ(d.mrope.assignment, MropeAssignment::interleaved);
  Dump bad;
  bad.width = 128;
  EXPECT_THROW(read_mrope_convention(nlohmann::json::parse(R"({"mrope_section": [16, 24]})"), bad, "convention"),
               tensorfiles::FormatError);
  EXPECT_THROW(read_mrope_convention(nlohmann::json::parse(R"({"rope_parameters": {"rope_type": "yarn", "factor": 4,
      "rope_theta": 1e6}})"),
                                     bad, "convention"),
               tensorfiles::FormatError);
}

}  // namespace
}  // namespace pecheck::dumpcheck
