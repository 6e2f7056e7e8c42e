// Mutants of LongRoPE (Phi-3's per-pair short and long factors with an attention factor): each a
// bug found in a public implementation. They change the spec and forward to the scalar backend,
// so that only the bug differs from a correct encoder.
#include <utility>

#include "mutants/forwarding_encoder.hpp"
#include "mutants/mutants.hpp"

namespace pecheck::mutants {

namespace {

using K = RopeScalingKind;

/// mlx-lm PR 660: long_factor used at every length; short_factor never read.
struct RopeLongropeAlwaysLong : RewritesRopeSpec {
  RopeLongropeAlwaysLong() : RewritesRopeSpec("mutant-rope-longrope-always-long") {}
  RopeSpec rewrite(RopeSpec s) override {
    if (s.scaling.kind == K::longrope) s.scaling.short_factor = s.scaling.long_factor;
    return s;
  }
};

/// ExecuTorch PR 19235: LongRoPE's attention factor never multiplied into cos and sin (attention
/// about 1.4x softer than trained for Phi-3 128k).
struct RopeLongropeNoAttentionFactor : RewritesRopeSpec {
  RopeLongropeNoAttentionFactor() : RewritesRopeSpec("mutant-rope-longrope-no-attention-factor") {}
  RopeSpec rewrite(RopeSpec s) override {
    if (s.scaling.kind == K::longrope) s.scaling.attention_factor = 1.0;
    return s;
  }
};

/// vLLM issue 27414: the factors chosen per token by its own position (long from position L0 on)
/// instead of once for the sequence, so keys cached with the short factors meet queries rotated
/// with the long ones.
struct RopeLongropePerTokenSwitch : Forwarding {
  using Forwarding::run;
  RopeLongropePerTokenSwitch() : Forwarding("mutant-rope-longrope-per-token-switch") {}
  void run(const RopeApply& c) override {
    const auto& [s, dt, h, p, x] = c;
    if (s.scaling.kind != K::longrope) return inner_->run(c);
    c.check();
    const std::size_t row = static_cast<std::size_t>(h) * static_cast<std::size_t>(s.head_dim);
    for (std::size_t t = 0; t < p.size(); ++t) {
      RopeSpec at = s;
      at.scaling.seq_len = p[t] + 1;
      inner_->run(RopeApply{at, dt, h, p.subspan(t, 1), x.subspan(t * row, row)});
    }
  }
};

}  // namespace

std::vector<Mutant> longrope_mutants() {
  return {
      {"LongRoPE long factors at every length", "mlx-lm PR 660: long_factor always, short_factor never read",
       "rope.scaled_frequency_bounds", make_mutant<RopeLongropeAlwaysLong>},
      {"LongRoPE without its attention factor",
       "ExecuTorch PR 19235: cos and sin not multiplied by sqrt(1 + ln s / ln L0)", "rope.orthogonal",
       make_mutant<RopeLongropeNoAttentionFactor>},
      {"LongRoPE factors switched per token",
       "vLLM issue 27414: short or long chosen by each token's position, not once per sequence",
       "rope.agrees_with_reference", make_mutant<RopeLongropePerTokenSwitch>},
  };
}

}  // namespace pecheck::mutants
