// Each relational law's bound under a weaker contract is near what that contract allows: an encoder
// whose errors are the contract's own model, amplified k times, passes the law at k = 1 and fails it
// at a small power of two K (the mutant just past the bound), K/2 still passing, at this file's seed.
// docs/error-model.md "Sharpness under a contract" holds the table and what each K says.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>

#include "harness/contract_ladder.hpp"
#include "harness/encoders.hpp"
#include "harness/runner.hpp"
#include "harness/tolerance.hpp"
#include "impl/angles.hpp"
#include "impl/mrope_by_axes.hpp"
#include "impl/rope2d_by_halves.hpp"
#include "impl/rope_frequencies.hpp"
#include "interface/encoder.hpp"
#include "mutants/forwarding_encoder.hpp"
#include "mutants/hand_written_softmax.hpp"
#include "properties/registry.hpp"

namespace pecheck {
namespace {

using tol::Contract;

/// v moved k times as far as rounding it to dt moves it: k = 1 is the rounding itself.
double amplified_rounding(double v, DType dt, double k) { return v + k * (static_cast<double>(round_to(dt, v)) - v); }

/// The angle pos * w as the contract's model forms it, its error amplified k times: under
/// fp32-angles the PyTorch formula's (w and the product in fp32), under dtype-trig none.
long double model_angle(Contract c, std::int64_t pos, long double w, double k) {
  const long double exact = static_cast<long double>(pos) * w;
  if (c != Contract::fp32_angles) return exact;
  const float fp32 = static_cast<float>(pos) * static_cast<float>(w);
  return exact + static_cast<long double>(k) * (static_cast<long double>(fp32) - exact);
}

/// RoPE (1-D, 2-D by axes, M-RoPE by axes) under the contract's model with its errors amplified k
/// times: the angle (fp32-angles), then cos and sin rounded to the dtype (as HF's caches are), the
/// pair rotated in double and rounded once. `only_scaled` amplifies only calls with a scaling rule,
/// for the laws that compare a scaled call with a plain one of the same angles (rope.linear_scaling,
/// rope.ntk_base): amplified alike, the two calls would agree to the bit.
class AmplifiedRope final : public Offering<RopeApply, Rope2dApply, MropeApply> {
 public:
  using Offering::run;
  AmplifiedRope(Contract c, double k, bool only_scaled) : contract_(c), k_(k), only_scaled_(only_scaled) {}
  std::string name() const override { return std::string(tol::contract_name(contract_)) + " amplified"; }
  void run(const RopeApply& c) override {
    const RopeSpec& s = c.spec;
    const double k = only_scaled_ && s.scaling.kind == RopeScalingKind::none ? 0.0 : k_;
    mutants::rope_with(s, s.layout, c.dtype, c.heads, c.positions, c.x, [&](std::int64_t pos, int p) {
      const long double a = model_angle(contract_, pos, angles::scaled_inv_freq(s, p), k);
      const double cs = amplified_rounding(static_cast<double>(std::cos(a)), c.dtype, k);
      const double sn = amplified_rounding(static_cast<double>(std::sin(a)), c.dtype, k);
      return std::pair{s.magnitude() * cs, s.magnitude() * sn};
    });
  }
  void run(const Rope2dApply& c) override {
    rope2d_by_halves(c, [&](const Rope2dSpec& s, std::span<float> x) {
      rope2d_as_two_ropes(s, c.dtype, c.heads, c.rows, c.cols, x, [&](const RopeApply& r) { run(r); });
    });
  }
  void run(const MropeApply& c) override {
    mrope_by_axes(c, [&](const RopeSpec& s, std::span<const std::int64_t> positions, std::span<float> x) {
      run(RopeApply{s, c.dtype, c.heads, positions, x});
    });
  }

 private:
  Contract contract_;
  double k_;
  bool only_scaled_;
};

/// A sinusoid table under the contract's model with its errors amplified k times: the angle
/// (fp32-angles), sin and cos of it, each stored in the dtype.
class AmplifiedSinusoid final : public Offering<SinusoidalTable> {
 public:
  using Offering::run;
  AmplifiedSinusoid(Contract c, double k) : contract_(c), k_(k) {}
  std::string name() const override { return std::string(tol::contract_name(contract_)) + " amplified sinusoid"; }
  void run(const SinusoidalTable& c) override {
    const SinusoidalSpec& s = c.spec;
    const int half = s.d_model / 2;
    std::vector<angles::Frequency> freq;  // half of them: fairseq's width is d_model - 2
    for (int i = 0; i < half; ++i) freq.push_back(angles::frequency(i, s.frequency_width(), s.base));
    for (std::size_t r = 0; r < c.positions.size(); ++r)
      for (int i = 0; i < half; ++i) {
        const angles::Frequency f = freq[static_cast<std::size_t>(i)];
        const long double a = model_angle(contract_, c.positions[r], static_cast<long double>(f.hi) + f.lo, k_);
        const bool pad = s.is_padding(c.positions[r]);
        const std::size_t row = r * static_cast<std::size_t>(s.d_model);
        const bool interleaved = s.layout == SinusoidalLayout::interleaved;
        const std::size_t sin_at = static_cast<std::size_t>(interleaved ? 2 * i : i);
        const std::size_t cos_at = static_cast<std::size_t>(interleaved ? 2 * i + 1 : half + i);
        c.out[row + sin_at] = pad ? 0.0f : round_to(c.dtype, amplified_rounding(std::sin(a), c.dtype, k_));
        c.out[row + cos_at] = pad ? 0.0f : round_to(c.dtype, amplified_rounding(std::cos(a), c.dtype, k_));
      }
  }

 private:
  Contract contract_;
  double k_;
};

/// FlashAttention-2's loop (tiles of 16 keys) with P's rounding to the dtype, where it meets V,
/// amplified k times: the rounded-P contract's own model. Cases outside plain attention (a PE,
/// grouped heads, a window) go to the correct kernel, so a law comparing such a case with plain
/// attention compares the correct kernel with this one.
struct AmplifiedP final : mutants::TiledOnlineSoftmax {
  explicit AmplifiedP(double k) : TiledOnlineSoftmax("rounded-p amplified", 16), k_(k) {}
  float p_at_v(float w, DType dt) const override {
    return static_cast<float>(amplified_rounding(static_cast<double>(w), dt, k_));
  }

 private:
  double k_;
};

/// Attention with RoPE inside whose RoPE is AmplifiedRope's: q and k rotated by it at their tokens'
/// positions, then the scalar backend's attention with no PE; every other PE goes to the scalar
/// backend as it is. What a contract that governs attention's RoPE (dtype-trig, fp32-angles) lets
/// the RoPE inside it err by, amplified k times.
class AmplifiedRopeInsideAttention final : public Offering<Attention> {
 public:
  using Offering::run;
  AmplifiedRopeInsideAttention(Contract c, double k) : rope_(c, k, false), scalar_(make_encoder("scalar")) {}
  std::string name() const override { return "attention with " + rope_.name() + " inside"; }
  void run(const Attention& c) override {
    if (c.spec.pe != AttentionPE::rope) return scalar_->run(c);
    const AttentionSpec& s = c.spec;
    const std::size_t n = c.positions.size(), offset = s.query_offset(n);
    std::vector<float> q(c.q.begin(), c.q.end()), k(c.k.begin(), c.k.end());
    rope_.run(RopeApply{s.rope(), c.dtype, s.heads, c.positions.subspan(offset), q});
    rope_.run(RopeApply{s.rope(), c.dtype, s.kv_count(), c.positions, k});
    AttentionSpec plain = s;
    plain.pe = AttentionPE::none;
    scalar_->run(Attention{plain, c.dtype, c.positions, q, k, c.v, c.pe_table, c.out});
  }

 private:
  AmplifiedRope rope_;
  std::unique_ptr<Encoder> scalar_;
};

struct Row {
  const char* law;
  Contract contract;
  DType dt;
  double just_past;  ///< K: the smallest power of two k whose amplified model the law fails
};

PropertyResult judge(const Row& row, double k) {
  const std::string law = row.law;
  // The ceilings the ladder draws below: RoPE's relational laws' (2^19), attention's RoPE's (2048).
  RunParams params{.seed = 5, .cases = 100};
  params.contract = row.contract;
  params.max_position = tol::rope_law_ceiling(row.contract, row.dt);
  if (law.starts_with("attention."))
    params = under_contract(Op::attention, row.contract, RunParams{.seed = 5, .cases = 100});
  const bool scaled_only = law == "rope.linear_scaling" || law == "rope.ntk_base";
  std::unique_ptr<Encoder> enc;
  if (law.starts_with("attention.") && row.contract == Contract::rounded_p)
    enc = std::make_unique<AmplifiedP>(k);
  else if (law.starts_with("attention."))
    enc = std::make_unique<AmplifiedRopeInsideAttention>(row.contract, k);
  else if (law.starts_with("sinusoidal."))
    enc = std::make_unique<AmplifiedSinusoid>(row.contract, k);
  else
    enc = std::make_unique<AmplifiedRope>(row.contract, k, scaled_only);
  return registered_property(law).run(*enc, row.dt, params);
}

constexpr Contract F = Contract::fp32_angles, T = Contract::dtype_trig, P = Contract::rounded_p;
constexpr DType f32 = DType::f32, bf16 = DType::bf16, f16 = DType::f16;

// Measured at seed 5, 100 cases (docs/error-model.md "Sharpness under a contract" quotes it).
constexpr Row kRows[] = {
    {"rope.relative", F, f32, 16},
    {"rope.relative", F, bf16, 32},
    {"rope.relative", F, f16, 32},
    {"rope.relative", T, f32, 32},
    {"rope.relative", T, bf16, 16},
    {"rope.relative", T, f16, 16},
    {"rope.offset_invariance", F, f32, 32},
    {"rope.offset_invariance", F, bf16, 8},
    {"rope.offset_invariance", F, f16, 16},
    {"rope.offset_invariance", T, f32, 32},
    {"rope.offset_invariance", T, bf16, 16},
    {"rope.offset_invariance", T, f16, 8},
    {"rope.composition", F, f32, 8},
    {"rope.composition", F, bf16, 16},
    {"rope.composition", F, f16, 8},
    {"rope.composition", T, f32, 16},
    {"rope.composition", T, bf16, 8},
    {"rope.composition", T, f16, 8},
    {"rope.linear_scaling", F, f32, 8},
    {"rope.linear_scaling", F, bf16, 16},
    {"rope.linear_scaling", F, f16, 16},
    {"rope.linear_scaling", T, f32, 32},
    {"rope.linear_scaling", T, bf16, 16},
    {"rope.linear_scaling", T, f16, 16},
    {"rope.ntk_base", F, f32, 16},
    {"rope.ntk_base", F, bf16, 16},
    {"rope.ntk_base", F, f16, 16},
    {"rope.ntk_base", T, f32, 32},
    {"rope.ntk_base", T, bf16, 16},
    {"rope.ntk_base", T, f16, 16},
    {"rope.scaled_frequency_bounds", F, f32, 8},
    {"rope.scaled_frequency_bounds", F, bf16, 8},
    {"rope.scaled_frequency_bounds", F, f16, 8},
    {"rope.scaled_frequency_bounds", T, f32, 16},
    {"rope.scaled_frequency_bounds", T, bf16, 8},
    {"rope.scaled_frequency_bounds", T, f16, 8},
    {"rope2d.relative", F, f32, 16},
    {"rope2d.relative", F, bf16, 32},
    {"rope2d.relative", F, f16, 32},
    {"rope2d.relative", T, f32, 64},
    {"rope2d.relative", T, bf16, 32},
    {"rope2d.relative", T, f16, 32},
    {"mrope.relative", F, f32, 32},
    {"mrope.relative", F, bf16, 64},
    {"mrope.relative", F, f16, 64},
    {"mrope.relative", T, f32, 32},
    {"mrope.relative", T, bf16, 32},
    {"mrope.relative", T, f16, 64},
    {"sinusoidal.shift_linearity", F, f32, 16},
    {"sinusoidal.shift_linearity", F, bf16, 8},
    {"sinusoidal.shift_linearity", F, f16, 8},
    {"sinusoidal.shift_linearity", T, bf16, 8},
    {"sinusoidal.shift_linearity", T, f16, 8},
    {"sinusoidal.shift_linearity", T, f32, 16},
    {"sinusoidal.offset_inner_product", F, f32, 32},
    {"sinusoidal.offset_inner_product", F, bf16, 16},
    {"sinusoidal.offset_inner_product", F, f16, 32},
    {"sinusoidal.offset_inner_product", T, bf16, 16},
    {"sinusoidal.offset_inner_product", T, f16, 16},
    {"sinusoidal.offset_inner_product", T, f32, 32},
    {"sinusoidal.injectivity", F, f32, 64},
    {"sinusoidal.injectivity", F, bf16, 16},
    {"sinusoidal.injectivity", F, f16, 32},
    {"sinusoidal.injectivity", T, bf16, 16},
    {"sinusoidal.injectivity", T, f16, 16},
    {"sinusoidal.injectivity", T, f32, 32},
    // Attention under rounded-P, in the dtypes where P's rounding is one (in f32 P is fp32 already).
    // Laws comparing two calls that form the same P (translation, permutation of queries or keys,
    // causal future independence, decode against prefill) see the amplified rounding alike in both
    // and pass at every k: no error that is a function of the call's scores alone can fail them.
    {"attention.tile_edges", P, bf16, 8},
    {"attention.tile_edges", P, f16, 8},
    {"attention.convex_combination", P, bf16, 8},
    {"attention.convex_combination", P, f16, 8},
    {"attention.gqa_repeat_equivalence", P, bf16, 16},
    {"attention.gqa_repeat_equivalence", P, f16, 16},
    {"attention.window_limits", P, bf16, 32},
    {"attention.window_limits", P, f16, 16},
    // Attention with RoPE inside under the contracts that govern its RoPE: the RoPE amplified, the
    // attention exact. Judged through the output, whose bound takes each rotated q and k's worst
    // case over every dim, so the RoPE may err 100 to 1000 times its contract's model before a law
    // sees it (docs/error-model.md, relational.sharpness). The laws comparing calls that rotate the
    // same positions alike (permutations, GQA, decode, causal future, window, batch, convex hull)
    // pass it at every k up to 4096, as every tile_edges case in f32 does.
    {"attention.translation_invariance", F, f32, 1024},
    {"attention.translation_invariance", F, bf16, 256},
    {"attention.translation_invariance", F, f16, 256},
    {"attention.translation_invariance", T, f32, 1024},
    {"attention.translation_invariance", T, bf16, 128},
    {"attention.translation_invariance", T, f16, 256},
    {"attention.tile_edges", F, bf16, 512},
    {"attention.tile_edges", F, f16, 512},
    {"attention.tile_edges", T, bf16, 512},
    {"attention.tile_edges", T, f16, 512},
    // Agreement itself under the same model, for comparison: not relational, the contract's own check.
    {"rope.agrees_with_reference", F, f32, 4},
    {"rope.agrees_with_reference", F, bf16, 8},
    {"rope.agrees_with_reference", F, f16, 8},
    {"rope.agrees_with_reference", T, f32, 8},
    {"rope.agrees_with_reference", T, bf16, 8},
    {"rope.agrees_with_reference", T, f16, 8},
    {"sinusoidal.agrees_with_reference", F, f32, 8},
    {"sinusoidal.agrees_with_reference", F, bf16, 4},
    {"sinusoidal.agrees_with_reference", F, f16, 4},
    {"sinusoidal.agrees_with_reference", T, f32, 8},
    {"sinusoidal.agrees_with_reference", T, bf16, 4},
    {"sinusoidal.agrees_with_reference", T, f16, 4},
    {"attention.agrees_with_reference", P, bf16, 8},
    {"attention.agrees_with_reference", P, f16, 16},
    {"attention.agrees_with_reference", F, f32, 256},
    {"attention.agrees_with_reference", F, bf16, 256},
    {"attention.agrees_with_reference", F, f16, 128},
    {"attention.agrees_with_reference", T, f32, 512},
    {"attention.agrees_with_reference", T, bf16, 256},
    {"attention.agrees_with_reference", T, f16, 128},
};

std::string label(const Row& row) {
  return std::string(row.law) + " " + std::string(tol::contract_name(row.contract)) + " " +
         std::string(dtype_name(row.dt));
}

TEST(ContractSharpness, TheContractsOwnModelHoldsEveryLaw) {
  for (const Row& row : kRows) {
    const PropertyResult r = judge(row, 1);
    EXPECT_EQ(verdict_name(r.verdict), "pass") << label(row) << ": " << r.message;
    EXPECT_GE(r.nontrivial_cases, 90) << label(row);
  }
}

TEST(ContractSharpness, EachLawFailsTheModelJustPastItsBound) {
  // K fails and K/2 passes: a bound loosened (or the law judged under another contract's bound)
  // moves K, and so does one tightened; either way this table and the page's must change together.
  for (const Row& row : kRows) {
    const PropertyResult past = judge(row, row.just_past);
    EXPECT_EQ(verdict_name(past.verdict), "fail") << label(row) << " at k = " << row.just_past;
    const PropertyResult within = judge(row, row.just_past / 2);
    EXPECT_EQ(verdict_name(within.verdict), "pass")
        << label(row) << " at k = " << row.just_past / 2 << ": " << within.message;
    std::printf("%-52s K = %-4g %.4g u against %.4g u\n", label(row).c_str(), row.just_past, past.max_error_u,
                past.bound_u);
  }
}

// The table's K measured afresh, for when a bound changes: build/tests/contract_sharpness_test
// --gtest_also_run_disabled_tests --gtest_filter='*Measure*' prints each row's smallest failing k.
TEST(ContractSharpness, DISABLED_MeasureTheTable) {
  for (const Row& row : kRows) {
    double k = 1;
    while (k < 4096 && judge(row, k).verdict == Verdict::pass) k *= 2;
    std::printf("%-52s K = %g (table: %g)\n", label(row).c_str(), k, row.just_past);
  }
}

}  // namespace
}  // namespace pecheck
