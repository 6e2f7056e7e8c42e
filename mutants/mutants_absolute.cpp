#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "impl/fp32_angle_rope.hpp"
#include "impl/rope_frequencies.hpp"
#include "impl/scalar/kernels.hpp"
#include "mutants/forwarding_encoder.hpp"
#include "mutants/mutants.hpp"

namespace pecheck::mutants {

namespace {

/// pe[:,0::2] = cos, pe[:,1::2] = sin: the two halves of every pair swapped.
struct SinCosSwapped : Forwarding {
  SinCosSwapped() : Forwarding("mutant-sin-cos-swapped") {}
  void run(const SinusoidalTable& c) override {
    const auto& [s, dt, p, o] = c;
    inner_->run(c);
    const std::size_t d = static_cast<std::size_t>(s.d_model), half = d / 2;
    for (std::size_t r = 0; r < p.size(); ++r)
      for (std::size_t i = 0; i < half; ++i) {
        const bool inter = s.layout == SinusoidalLayout::interleaved;
        std::swap(o[r * d + (inter ? 2 * i : i)], o[r * d + (inter ? 2 * i + 1 : half + i)]);
      }
  }
};

/// RoPE with base 1000 whatever the spec says.
struct RopeBase1000 : RewritesRopeSpec {
  RopeBase1000() : RewritesRopeSpec("mutant-rope-base-1000") {}
  RopeSpec rewrite(RopeSpec s) override {
    s.base = 1000;
    return s;
  }
};

/// (cos, sin) of an angle times the spec's magnitude (YaRN's factor), for the mutants that
/// compute the angle their own (wrong) way.
std::pair<double, double> cos_sin(const RopeSpec& s, double a) {
  return {s.magnitude() * std::cos(a), s.magnitude() * std::sin(a)};
}

/// The PyTorch formula: inv_freq (scaled as the spec says) and pos * inv_freq in fp32 (error
/// ~ pos * 2^-24 rad): the fp32-angle baseline itself (impl/fp32_angle_rope.hpp).
struct RopeFp32Angles : Forwarding {
  using Forwarding::run;
  RopeFp32Angles() : Forwarding("mutant-rope-fp32-angles") {}
  void run(const RopeApply& c) override { baseline::fp32_angle_rope(c.spec, c.dtype, c.heads, c.positions, c.x); }
};

/// Angles rounded to bf16, as when the position ids and inv_freq live in a bf16 model.
struct RopeBf16Angles : Forwarding {
  using Forwarding::run;
  RopeBf16Angles() : Forwarding("mutant-rope-bf16-angles") {}
  void run(const RopeApply& c) override {
    const auto& [s, dt, h, p, x] = c;
    rope_with(s, s.layout, dt, h, p, x, [&, &s = s](std::int64_t pos, int i) {
      const auto inv = static_cast<double>(angles::scaled_inv_freq(s, i));
      return cos_sin(s, static_cast<double>(round_to(DType::bf16, static_cast<double>(pos) * inv)));
    });
  }
};

/// rotary_dim ignored: every dim of the head rotated, frequencies over head_dim.
struct RopeIgnoresRotaryDim : RewritesRopeSpec {
  RopeIgnoresRotaryDim() : RewritesRopeSpec("mutant-rope-ignores-rotary-dim") {}
  RopeSpec rewrite(RopeSpec s) override {
    s.rotary_dim = s.head_dim;
    return s;
  }
};

/// A learned table that wraps (pos mod max_len) instead of refusing an out-of-range position.
struct LearnedWraps : Forwarding {
  using Forwarding::run;
  LearnedWraps() : Forwarding("mutant-learned-wraps") {}
  void run(const LearnedAdd& c) override {
    const auto& [s, dt, t, p, x] = c;
    std::vector<std::int64_t> wrapped(p.begin(), p.end());
    for (auto& q : wrapped) q = ((q % s.max_len) + s.max_len) % s.max_len;
    inner_->run(LearnedAdd{s, dt, t, wrapped, x});
  }
};

/// ALiBi slopes 2^(-8h/H) for every H: the non-power-of-two rule forgotten.
struct AlibiNoPow2Rule : Forwarding {
  using Forwarding::run;
  AlibiNoPow2Rule() : Forwarding("mutant-alibi-no-pow2-rule") {}
  void run(const AlibiBias& c) override {
    const auto& [s, dt, p, o] = c;
    inner_->run(c);
    const std::size_t n = p.size();
    for (int h = 0; h < s.heads; ++h) {
      const double m = std::exp2(-8.0 * (h + 1) / s.heads);
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) {
          if (s.causal && j > i) continue;
          const double dist = static_cast<double>(p[i] - p[j]);
          o[(static_cast<std::size_t>(h) * n + i) * n + j] = round_to(dt, -m * (s.causal ? dist : std::fabs(dist)));
        }
    }
  }
};

/// The seeds' RelativePositionEmbedding: index clamp(i - j) where Shaw et al. use j - i.
struct ShawSignFlipped : Forwarding {
  using Forwarding::run;
  ShawSignFlipped() : Forwarding("mutant-shaw-i-minus-j") {}
  void run(const ShawScores& c) override {
    const auto& [s, dt, q, k, t, p, o] = c;
    std::vector<std::int64_t> negated(p.begin(), p.end());
    for (auto& x : negated) x = -x;  // p_j - p_i of the negated positions is p_i - p_j
    inner_->run(ShawScores{s, dt, q, k, t, negated, o});
  }
};

/// Attention without the 1/sqrt(head_dim) scale.
struct AttentionNoScale : RewritesAttentionSpec {
  AttentionNoScale() : RewritesAttentionSpec("mutant-attention-no-scale") {}
  AttentionSpec rewrite(AttentionSpec s) override {
    s.scale = 1.0;
    return s;
  }
};

/// Attention that silently drops its position encoding.
struct AttentionDropsPE : RewritesAttentionSpec {
  AttentionDropsPE() : RewritesAttentionSpec("mutant-attention-drops-pe") {}
  AttentionSpec rewrite(AttentionSpec s) override {
    s.pe = AttentionPE::none;
    return s;
  }
};

}  // namespace

std::unique_ptr<Encoder> make_forwarding_scalar(std::string name) {
  return std::make_unique<Forwarding>(std::move(name));
}

const std::vector<Mutant>& mutants() {
  static const std::vector<Mutant> all = {
      {"sin and cos swapped", "a classic transcription slip: pe[:, 0::2] = cos", "sinusoidal.agrees_with_reference",
       make_mutant<SinCosSwapped>},
      {"RoPE base 1000 instead of the spec's", "a hard-coded or misread rope_theta (wrong base)",
       "rope.agrees_with_reference", make_mutant<RopeBase1000>},
      {"RoPE angles in fp32 (the PyTorch formula)",
       "inv_freq and pos * inv_freq in fp32, as in the seeds and HF defaults", "rope.agrees_with_reference",
       make_mutant<RopeFp32Angles>},
      {"RoPE angles in bf16", "angles or positions in the model dtype (bf16)", "rope.relative",
       make_mutant<RopeBf16Angles>},
      {"RoPE ignores rotary_dim", "partial rotary ignored: every dim rotated (rotary_dim < head_dim models)",
       "rope.orthogonal", make_mutant<RopeIgnoresRotaryDim>},
      {"learned table wraps out-of-range positions", "position ids taken modulo the table size instead of refused",
       "learned.agrees_with_reference", make_mutant<LearnedWraps>},
      {"ALiBi slopes without the non-power-of-two rule", "2^(-8h/H) used for every H, ignoring the paper's rule",
       "alibi.agrees_with_reference", make_mutant<AlibiNoPow2Rule>},
      {"Shaw relative index i - j (the seed's sign)",
       "the seed tutorial's RelativePositionEmbedding (positions[:,None] - positions[None,:])",
       "shaw.agrees_with_reference", make_mutant<ShawSignFlipped>},
      {"attention without the 1/sqrt(d) scale", "softmax(QK^T) V with the scale forgotten",
       "attention.agrees_with_reference", make_mutant<AttentionNoScale>},
      {"attention drops its position encoding", "a PE computed but never applied", "attention.order_sensitivity",
       make_mutant<AttentionDropsPE>},
  };
  static const std::vector<Mutant> with_relational = [] {
    std::vector<Mutant> v;
    for (const Mutant& m : all) v.push_back(m);
    for (Mutant& m : relational_mutants()) v.push_back(std::move(m));
    for (Mutant& m : numeric_mutants()) v.push_back(std::move(m));
    for (Mutant& m : scaling_mutants()) v.push_back(std::move(m));
    for (Mutant& m : longrope_mutants()) v.push_back(std::move(m));
    for (Mutant& m : bias_mutants()) v.push_back(std::move(m));
    for (Mutant& m : mrope_mutants()) v.push_back(std::move(m));
    for (Mutant& m : inference_mutants()) v.push_back(std::move(m));
    for (Mutant& m : tile_mutants()) v.push_back(std::move(m));
    return v;
  }();
  return with_relational;
}

std::unique_ptr<Encoder> make_mutant_named(std::string_view encoder_name) {
  for (const Mutant& m : mutants())
    if (auto e = m.make(); e->name() == encoder_name) return e;
  throw std::invalid_argument(fmt::format("no mutant named {}", encoder_name));
}

}  // namespace pecheck::mutants
