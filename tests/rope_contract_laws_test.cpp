// RoPE's relational laws under a weaker accuracy contract (properties/rope/rope_contract_laws.hpp,
// docs/error-model.md "The relational laws under a contract"): an encoder with fp32 angles, which
// the exact contract's bounds fail, holds rope.relative, rope.composition, rope.offset_invariance,
// rope.linear_scaling and rope.ntk_base under the fp32-angles contract below its ceiling, and reads
// its scaled frequencies within it (rope.scaled_frequency_bounds), in every dtype, on non-trivial
// cases; the bugs those laws catch are still caught under it. Axial 2-D RoPE
// with fp32 angles per axis holds rope2d.relative under fp32-angles too, HF's M-RoPE mrope.relative.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "harness/runner.hpp"
#include "harness/tolerance.hpp"
#include "impl/rope2d_by_halves.hpp"
#include "mutants/mutants.hpp"
#include "properties/registry.hpp"
#include "reference/rope.hpp"
#include "spec/mrope.hpp"

namespace pecheck {
namespace {

const Property& property(const std::string& id) { return registered_property(id); }

std::unique_ptr<Encoder> mutant(const std::string& name) {
  for (const auto& m : mutants::mutants())
    if (m.name == name) return m.make();
  throw std::logic_error("no mutant " + name);
}

RunParams under_fp32_angles(DType dt) {
  RunParams params{.seed = 5, .cases = 100};
  params.contract = tol::Contract::fp32_angles;
  params.max_position = tol::rope_law_ceiling(params.contract, dt);
  return params;
}

constexpr const char* kLaws[] = {"rope.relative",       "rope.composition", "rope.offset_invariance",
                                 "rope.linear_scaling", "rope.ntk_base",    "rope.scaled_frequency_bounds"};

TEST(RopeContractLaws, OnlyTheFp32AnglesContractHasACeiling) {
  for (DType dt : {DType::f32, DType::bf16, DType::f16}) {
    EXPECT_EQ(tol::rope_law_ceiling(tol::Contract::exact, dt), 0);
    EXPECT_EQ(tol::rope_law_ceiling(tol::Contract::dtype_trig, dt), 0);
    const std::int64_t top = tol::rope_law_ceiling(tol::Contract::fp32_angles, dt);
    // Four calls' bounds on the fastest pair within 1/u at the ceiling, and past it at twice that.
    EXPECT_LE(4 * tol::rope_pair_fp32_angles(dt, static_cast<double>(top), 0), 1 / unit_roundoff(dt));
    EXPECT_GT(4 * tol::rope_pair_fp32_angles(dt, 2.0 * static_cast<double>(top), 0), 1 / unit_roundoff(dt));
    EXPECT_GE(top, std::int64_t{1} << 16);  // far past the positions where fp32 angles leave exact
  }
}

TEST(RopeContractLaws, Fp32AnglesHoldEveryLawUnderTheirContract) {
  const auto enc = mutant("RoPE angles in fp32 (the PyTorch formula)");
  for (DType dt : {DType::f32, DType::bf16, DType::f16})
    for (const char* id : kLaws) {
      const PropertyResult r = property(id).run(*enc, dt, under_fp32_angles(dt));
      EXPECT_EQ(r.verdict, Verdict::pass) << id << " " << dtype_name(dt) << ": " << r.message;
      EXPECT_GE(r.nontrivial_cases, 90) << id << " " << dtype_name(dt);
    }
}

/// Axial 2-D RoPE as HF's vision towers form it: each half-head a 1-D RoPE of width d/2 at its
/// axis's coordinate, by the given 1-D encoder (a mutant's way of forming the angles).
class PerAxisRope2d final : public Offering<Rope2dApply> {
 public:
  using Offering::run;
  explicit PerAxisRope2d(std::unique_ptr<Encoder> one_d) : one_d_(std::move(one_d)) {}
  std::string name() const override { return "per-axis " + one_d_->name(); }
  void run(const Rope2dApply& c) override {
    rope2d_by_halves(c, [&](const Rope2dSpec& s, std::span<float> x) {
      const std::size_t d = static_cast<std::size_t>(s.head_dim), half = d / 2;
      for (std::size_t head = 0; head < x.size(); head += d) {
        const std::size_t token = head / d / static_cast<std::size_t>(c.heads);
        for (const bool by_column : {false, true}) {
          const std::int64_t at = by_column ? c.cols[token] : c.rows[token];
          one_d_->run(RopeApply{s.axis(by_column), c.dtype, 1, std::span(&at, 1),
                                x.subspan(head + (by_column ? half : 0), half)});
        }
      }
    });
  }

 private:
  std::unique_ptr<Encoder> one_d_;
};

TEST(RopeContractLaws, Rope2dRelativeHoldsUnderFp32AnglesAndFailsTheExactBound) {
  PerAxisRope2d enc(mutant("RoPE angles in fp32 (the PyTorch formula)"));
  for (DType dt : {DType::f32, DType::bf16, DType::f16}) {
    const PropertyResult r = property("rope2d.relative").run(enc, dt, under_fp32_angles(dt));
    EXPECT_EQ(r.verdict, Verdict::pass) << dtype_name(dt) << ": " << r.message;
    EXPECT_GE(r.nontrivial_cases, 90) << dtype_name(dt);
  }
  const PropertyResult exact = property("rope2d.relative").run(enc, DType::f32, RunParams{.seed = 5, .cases = 100});
  EXPECT_EQ(exact.verdict, Verdict::fail) << exact.message;
  // Angles in bf16 on each axis are far outside what fp32 angles allow.
  PerAxisRope2d bf16_angles(mutant("RoPE angles in bf16"));
  EXPECT_EQ(property("rope2d.relative").run(bf16_angles, DType::f32, under_fp32_angles(DType::f32)).verdict,
            Verdict::fail);
}

/// M-RoPE as HF's Qwen-VL forms it: inv_freq and each pair's angle (its section's axis position
/// times inv_freq) in fp32, cos and sin of that angle, the result stored in the dtype. `bf16`
/// rounds the angle to bf16 as well (a model whose position ids live in bf16).
class Fp32AnglesMrope final : public Offering<MropeApply> {
 public:
  using Offering::run;
  explicit Fp32AnglesMrope(bool bf16) : bf16_(bf16) {}
  std::string name() const override { return bf16_ ? "bf16-angles-mrope" : "fp32-angles-mrope"; }
  void run(const MropeApply& c) override {
    c.check();
    const RopeSpec s = c.spec.rope();
    const std::size_t d = static_cast<std::size_t>(s.head_dim), H = static_cast<std::size_t>(c.heads);
    const std::span<const std::int64_t> axes[3] = {c.temporal, c.height, c.width};
    for (std::size_t t = 0; t < c.temporal.size(); ++t)
      for (std::size_t h = 0; h < H; ++h) {
        float* x = c.x.data() + (t * H + h) * d;
        for (int p = 0; p < s.rotary_dim / 2; ++p) {
          const float inv =
              1.0f / std::pow(static_cast<float>(s.base), static_cast<float>(2 * p) / static_cast<float>(s.rotary_dim));
          const auto pos = static_cast<float>(axes[mrope_axis(c.spec, p)][t]);
          double angle = static_cast<double>(pos * inv);
          if (bf16_) angle = round_to(DType::bf16, angle);
          const auto [i, j] = ref::rope_pair(s, p);
          const double xi = x[i], xj = x[j], cs = std::cos(angle), sn = std::sin(angle);
          x[i] = round_to(c.dtype, xi * cs - xj * sn);
          x[j] = round_to(c.dtype, xi * sn + xj * cs);
        }
      }
  }

 private:
  bool bf16_;
};

TEST(RopeContractLaws, MropeRelativeHoldsUnderFp32AnglesAndFailsTheExactBound) {
  Fp32AnglesMrope enc(false);
  for (DType dt : {DType::f32, DType::bf16, DType::f16}) {
    const PropertyResult r = property("mrope.relative").run(enc, dt, under_fp32_angles(dt));
    EXPECT_EQ(r.verdict, Verdict::pass) << dtype_name(dt) << ": " << r.message;
    EXPECT_GE(r.nontrivial_cases, 90) << dtype_name(dt);
  }
  const PropertyResult exact = property("mrope.relative").run(enc, DType::f32, RunParams{.seed = 5, .cases = 100});
  EXPECT_EQ(exact.verdict, Verdict::fail) << exact.message;
  Fp32AnglesMrope bf16_angles(true);
  EXPECT_EQ(property("mrope.relative").run(bf16_angles, DType::f32, under_fp32_angles(DType::f32)).verdict,
            Verdict::fail);
}

/// NTK with fp32 frequencies, formed one of two ways: HF's (_compute_dynamic_ntk_parameters), the
/// scaled base b' in double and inv_freq = 1 / b'^(2p/d) in fp32, the power taken of the larger
/// base; or by stretch, theta_p = b^(-2p/d) times sigma^(-2p/(d-2)), each power in fp32 (a path
/// that plain RoPE at b' does not share). Then pos * inv_freq in fp32, cos and sin of that angle,
/// the result stored in the dtype.
class Fp32NtkRope final : public Offering<RopeApply> {
 public:
  using Offering::run;
  explicit Fp32NtkRope(bool by_stretch) : by_stretch_(by_stretch) {}
  std::string name() const override { return by_stretch_ ? "fp32-ntk-by-stretch" : "hf-fp32-ntk"; }
  void run(const RopeApply& c) override {
    const RopeSpec& s = c.spec;
    const RopeScaling& sc = s.scaling;
    if (sc.kind != RopeScalingKind::none && sc.kind != RopeScalingKind::ntk && sc.kind != RopeScalingKind::dynamic_ntk)
      throw Unsupported("only NTK and plain RoPE");
    const double d = s.rotary_dim;
    double stretch = 1;
    if (sc.kind == RopeScalingKind::ntk) stretch = sc.factor;
    if (sc.kind == RopeScalingKind::dynamic_ntk && sc.seq_len > sc.original_max_position)
      stretch =
          sc.factor * static_cast<double>(sc.seq_len) / static_cast<double>(sc.original_max_position) - (sc.factor - 1);
    const double base = s.base * std::pow(stretch, d / (d - 2));
    const std::size_t hd = static_cast<std::size_t>(s.head_dim), H = static_cast<std::size_t>(c.heads);
    for (int p = 0; p < s.rotary_dim / 2; ++p) {
      const float inv =
          by_stretch_
              ? std::pow(static_cast<float>(s.base), static_cast<float>(-2 * p) / static_cast<float>(d)) *
                    std::pow(static_cast<float>(stretch), static_cast<float>(-2 * p) / static_cast<float>(d - 2))
              : 1.0f / std::pow(static_cast<float>(base), static_cast<float>(2 * p) / static_cast<float>(d));
      const auto [i, j] = ref::rope_pair(s, p);
      for (std::size_t t = 0; t < c.positions.size(); ++t) {
        const double angle = static_cast<double>(static_cast<float>(c.positions[t]) * inv);
        const double cs = std::cos(angle), sn = std::sin(angle);
        for (std::size_t h = 0; h < H; ++h) {
          float* x = c.x.data() + (t * H + h) * hd;
          const double xi = x[i], xj = x[j];
          x[i] = round_to(c.dtype, xi * cs - xj * sn);
          x[j] = round_to(c.dtype, xi * sn + xj * cs);
        }
      }
    }
  }

 private:
  bool by_stretch_;
};

TEST(RopeContractLaws, NtkBaseHoldsForFp32NtkUnderItsContract) {
  for (const bool by_stretch : {false, true}) {
    Fp32NtkRope enc(by_stretch);
    for (DType dt : {DType::f32, DType::bf16, DType::f16}) {
      const PropertyResult r = property("rope.ntk_base").run(enc, dt, under_fp32_angles(dt));
      EXPECT_EQ(r.verdict, Verdict::pass) << enc.name() << " " << dtype_name(dt) << ": " << r.message;
      EXPECT_GE(r.nontrivial_cases, 90) << enc.name() << " " << dtype_name(dt);
    }
  }
  // HF's way shares the plain call's path (one fp32 power of b'), so it may pass the exact bound
  // too; by stretch it does not, and the exact contract's constant fails it.
  Fp32NtkRope by_stretch(true);
  const PropertyResult exact =
      property("rope.ntk_base").run(by_stretch, DType::f32, RunParams{.seed = 5, .cases = 100});
  EXPECT_EQ(exact.verdict, Verdict::fail) << exact.message;
}

TEST(RopeContractLaws, TheExactContractsBoundsFailFp32Angles) {
  // What the contract-aware bounds are for: judged by the exact constants, a correct fp32-angle
  // encoder fails a law that compares calls.
  const auto enc = mutant("RoPE angles in fp32 (the PyTorch formula)");
  for (const char* id : {"rope.relative", "rope.linear_scaling"}) {
    const PropertyResult r = property(id).run(*enc, DType::f32, RunParams{.seed = 5, .cases = 100});
    EXPECT_EQ(r.verdict, Verdict::fail) << id;
  }
}

TEST(RopeContractLaws, TheLawsStillCatchTheirBugsUnderFp32Angles) {
  // bf16 angles are far outside what fp32 angles allow; a cache clamped at 8192 positions breaks
  // offset invariance well below the ceiling.
  EXPECT_EQ(
      property("rope.relative").run(*mutant("RoPE angles in bf16"), DType::f32, under_fp32_angles(DType::f32)).verdict,
      Verdict::fail);
  // The linear factor applied twice (ggml issue 835) turns s m by m theta / s, not m theta.
  EXPECT_EQ(property("rope.linear_scaling")
                .run(*mutant("RoPE scale applied twice: linear/YaRN interpolation at inv_freq / s^2"), DType::f32,
                     under_fp32_angles(DType::f32))
                .verdict,
            Verdict::fail);
  EXPECT_EQ(property("rope.offset_invariance")
                .run(*mutant("RoPE cache clamped at 8192 positions"), DType::f32, under_fp32_angles(DType::f32))
                .verdict,
            Verdict::fail);
  // llama.cpp PR 8676 (Llama 3's rule ignored) and the factor applied twice: each scaled frequency
  // read back at a quarter turn is far outside the rule under fp32 angles too.
  for (const char* name :
       {"Llama 3 scaling ignored", "RoPE scale applied twice: linear/YaRN interpolation at inv_freq / s^2"})
    EXPECT_EQ(
        property("rope.scaled_frequency_bounds").run(*mutant(name), DType::f32, under_fp32_angles(DType::f32)).verdict,
        Verdict::fail)
        << name;
  // vLLM issue 3488: dynamic NTK's base formed once, for the longest length, short prompts included.
  EXPECT_EQ(property("rope.ntk_base")
                .run(*mutant("dynamic NTK computed once at max length"), DType::f32, under_fp32_angles(DType::f32))
                .verdict,
            Verdict::fail);
}

}  // namespace
}  // namespace pecheck
