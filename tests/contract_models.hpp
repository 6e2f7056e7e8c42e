// The error models of tests/contract_sharpness_test.cpp and tests/attention_rope_sharpness_test.cpp:
// encoders whose errors are a contract's own model amplified k times, or a contract's whole budget
// pointed the worst way, and the table of K (the smallest power of two k a law fails) both files
// hold, with the three checks each makes of its rows.
#pragma once

#include <cmath>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "harness/encoders.hpp"
#include "harness/rope_measure.hpp"
#include "harness/runner.hpp"
#include "harness/tolerance.hpp"
#include "impl/angles.hpp"
#include "impl/mrope_by_axes.hpp"
#include "impl/rope2d_by_halves.hpp"
#include "impl/rope_frequencies.hpp"
#include "interface/encoder.hpp"
#include "mutants/forwarding_encoder.hpp"
#include "mutants/hand_written_softmax.hpp"

namespace pecheck::sharpness {

using tol::Contract;

/// v moved k times as far as rounding it to dt moves it: k = 1 is the rounding itself.
inline double amplified_rounding(double v, DType dt, double k) {
  return v + k * (static_cast<double>(round_to(dt, v)) - v);
}

/// The angle pos * w as the contract's model forms it, its error amplified k times: under
/// fp32-angles the PyTorch formula's (w and the product in fp32), under dtype-trig none.
inline long double model_angle(Contract c, std::int64_t pos, long double w, double k) {
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

/// Attention with RoPE inside whose RoPE errs by the contract's whole per-pair budget, pointed the
/// worst way for one output and scaled k times: the budget section 6's T charges, e_p u max(|x'_p|,
/// |x_p|) on pair p (e_p the contract's pair bound there, measure::ContractBounds). For
/// each K/V head, the query row and dim of its first query head whose output a logit move shifts
/// most (the largest sum_j p_j |v_jd - o_d|) is the target: each key it sees is pushed along that
/// query's pairs, raising its logit where v_jd is above o_d and lowering it where below, and the
/// query along sum_j p_j |v_jd - o_d| s_j k'_j, pair by pair; all of it the other way where the first
/// position is odd, so two calls an odd shift apart err opposite ways. Then attention in double,
/// rounded once.
/// An amplified model's errors point every way and mostly cancel in q.k and in the sum over keys;
/// these do not, so K here says how far the bound is from the worst error its contract allows.
class AlignedRopeInsideAttention final : public Offering<Attention> {
 public:
  using Offering::run;
  AlignedRopeInsideAttention(Contract c, double k) : contract_(c), k_(k), scalar_(make_encoder("scalar")) {}
  std::string name() const override {
    return "attention with its RoPE's " + std::string(tol::contract_name(contract_)) + " budget aligned";
  }
  void run(const Attention& c) override;

 private:
  Contract contract_;
  double k_;
  std::unique_ptr<Encoder> scalar_;
};

/// One row of a sharpness table.
struct Row {
  const char* law;
  Contract contract;
  DType dt;
  double just_past;      ///< K: the smallest power of two k whose model the law fails
  bool aligned = false;  ///< the model is AlignedRopeInsideAttention's, not an amplified one
};

/// The law run at seed 5 with 100 cases on the row's model scaled k times.
PropertyResult judge(const Row& row, double k);

/// Every row passes its model at k = 1, on at least 90 non-trivial cases of 100.
void expect_the_model_holds(std::span<const Row> rows);
/// Every row fails its model at K and passes it at K/2.
void expect_each_fails_just_past(std::span<const Row> rows);
/// Prints each row's smallest failing k, for when a bound changes.
void measure_the_table(std::span<const Row> rows);

}  // namespace pecheck::sharpness
