// Mutants of RoPE scaling and of the RoPE kernel's bookkeeping: each a bug found in a public
// implementation of linear/NTK/YaRN/Llama 3 scaling, or of a vectorised rotary kernel.
#include <algorithm>
#include <bit>
#include <cmath>
#include <utility>

#include "impl/rope_frequencies.hpp"
#include "mutants/forwarding_encoder.hpp"
#include "mutants/mutants.hpp"

namespace pecheck::mutants {

namespace {

using K = RopeScalingKind;

/// RoPE with pair p at frequency f(p) (angle in double) and cos, sin scaled by `m`.
template <class Freq>
void rope_at(const RopeSpec& s, DType dt, int h, std::span<const std::int64_t> p, std::span<float> x, double m,
             Freq f) {
  rope_with(s, s.layout, dt, h, p, x, [&](std::int64_t pos, int i) {
    const double a = static_cast<double>(pos) * f(i);
    return std::pair{m * std::cos(a), m * std::sin(a)};
  });
}

/// ggml issue 835: theta_base *= freq_scale before rope_yarn(), which scales by freq_scale again,
/// so linear and YaRN interpolation divide the frequency by s^2 (extrapolation by s).
struct RopeFreqScaleTwice : Forwarding {
  using Forwarding::run;
  RopeFreqScaleTwice() : Forwarding("mutant-rope-freq-scale-twice") {}
  void run(const RopeApply& c) override {
    const auto& [s, dt, h, p, x] = c;
    if (s.scaling.kind != K::linear && s.scaling.kind != K::yarn) return inner_->run(c);
    c.check();
    rope_at(s, dt, h, p, x, s.magnitude(),
            [&, &s = s](int i) { return static_cast<double>(angles::scaled_inv_freq(s, i) / s.scaling.factor); });
  }
};

/// sglang PR 33558: HF's YaRN attention_factor multiplied by the engine's own yarn_get_mscale, so
/// cos and sin carry the factor squared.
struct RopeYarnFactorSquared : Forwarding {
  using Forwarding::run;
  RopeYarnFactorSquared() : Forwarding("mutant-rope-yarn-factor-squared") {}
  void run(const RopeApply& c) override {
    const auto& [s, dt, h, p, x] = c;
    if (s.scaling.kind != K::yarn) return inner_->run(c);
    c.check();
    const double m = s.magnitude();
    rope_at(s, dt, h, p, x, m * m, [&, &s = s](int i) { return static_cast<double>(angles::scaled_inv_freq(s, i)); });
  }
};

/// vLLM issue 3488: "dynamic" NTK computed once, for length max_position * factor, and used for
/// every length, short prompts included (base * (s^2 - s + 1)^(d/(d-2))).
struct RopeDynamicNtkAtMaxLength : RewritesRopeSpec {
  RopeDynamicNtkAtMaxLength() : RewritesRopeSpec("mutant-rope-dynamic-ntk-at-max-length") {}
  RopeSpec rewrite(RopeSpec s) override {
    if (s.scaling.kind == K::dynamic_ntk)
      s.scaling.seq_len =
          static_cast<std::int64_t>(static_cast<double>(s.scaling.original_max_position) * s.scaling.factor);
    return s;
  }
};

/// transformers issue 25306: the dynamic-NTK cache is recomputed only when a longer sequence
/// arrives and kept afterwards, so a short prompt after a long one uses the long one's base.
struct RopeDynamicNtkStateful : RewritesRopeSpec {
  RopeDynamicNtkStateful() : RewritesRopeSpec("mutant-rope-dynamic-ntk-stateful") {}
  RopeSpec rewrite(RopeSpec s) override {
    if (s.scaling.kind == K::dynamic_ntk) {
      longest_ = std::max(longest_, s.scaling.seq_len);
      s.scaling.seq_len = longest_;
    }
    return s;
  }

 private:
  std::int64_t longest_ = 0;
};

/// llama.cpp PR 8676: the llama3 rope_scaling block ignored, plain base^(-2i/d) frequencies.
struct RopeLlama3Ignored : RewritesRopeSpec {
  RopeLlama3Ignored() : RewritesRopeSpec("mutant-rope-llama3-ignored") {}
  RopeSpec rewrite(RopeSpec s) override {
    if (s.scaling.kind == K::llama3) s.scaling = {};
    return s;
  }
};

/// tt-metal PR 49649: pow(base, y) = 2^(y log2 base) whose product y * log2(base) loses its low
/// bits (modelled as the product kept to 8 significant bits), ~2% off in inv_freq.
struct RopeInaccuratePow : Forwarding {
  using Forwarding::run;
  RopeInaccuratePow() : Forwarding("mutant-rope-inaccurate-pow") {}
  void run(const RopeApply& c) override {
    const auto& [s, dt, h, p, x] = c;
    if (s.scaling.kind != RopeScalingKind::none) return inner_->run(c);  // unscaled bug
    rope_at(s, dt, h, p, x, 1.0, [&, &s = s](int i) {
      const float exponent = round_to(DType::bf16, -2.0 * i / s.rotary_dim * std::log2(s.base));
      return std::exp2(double{exponent});
    });
  }
};

/// sglang issue 35096: a Triton kernel walks next_power_of_2(rotary_dim) columns with only a row
/// mask, so for a rotary_dim that is not a power of two it rotates the columns past rotary_dim
/// too: pass-through dims, or the next head's first dims.
struct RopeUnmaskedTail : Forwarding {
  using Forwarding::run;
  RopeUnmaskedTail() : Forwarding("mutant-rope-unmasked-tail") {}
  void run(const RopeApply& c) override {
    const auto& [s, dt, h, p, x] = c;
    inner_->run(c);
    const auto width = static_cast<std::size_t>(std::bit_ceil(static_cast<unsigned>(s.rotary_dim)));
    const std::size_t rot = static_cast<std::size_t>(s.rotary_dim), hd = static_cast<std::size_t>(s.head_dim);
    for (std::size_t row = 0; row < p.size() * static_cast<std::size_t>(h); ++row)
      for (std::size_t k = rot; k + 1 < width; k += 2) {  // interleaved pairs past the end
        const std::size_t a = row * hd + k, b = a + 1;
        if (b >= x.size()) break;  // (the real kernel wrote past the tensor here)
        const double angle =
            static_cast<double>(p[row / static_cast<std::size_t>(h)]) * std::pow(s.base, -double(k) / double(rot));
        const double x1 = x[a], x2 = x[b];
        x[a] = round_to(dt, x1 * std::cos(angle) - x2 * std::sin(angle));
        x[b] = round_to(dt, x2 * std::cos(angle) + x1 * std::sin(angle));
      }
  }
};

/// Axial RoPE with its axes exchanged: the column rotates the first half, the row the second, as
/// when a grid is built with meshgrid's "xy" indexing where "ij" was meant.
struct Rope2dAxesSwapped : Forwarding {
  using Forwarding::run;
  Rope2dAxesSwapped() : Forwarding("mutant-rope2d-axes-swapped") {}
  void run(const Rope2dApply& c) override {
    const auto& [s, dt, h, rows, cols, x] = c;
    inner_->run(Rope2dApply{s, dt, h, cols, rows, x});
  }
};

/// Pixtral's 2-D RoPE through an axial kernel: the column turned at the row's frequencies
/// (base^(-4k/d)), not the odd-indexed ones (base^(-(4k+2)/d)), as when Pixtral is served by a
/// kernel written for Qwen2-VL's vision tower.
struct Rope2dSplitIgnored : Forwarding {
  using Forwarding::run;
  Rope2dSplitIgnored() : Forwarding("mutant-rope2d-split-frequencies-ignored") {}
  void run(const Rope2dApply& c) override {
    Rope2dSpec s = c.spec;
    s.frequencies = Rope2dFrequencies::shared;
    inner_->run(Rope2dApply{s, c.dtype, c.heads, c.rows, c.cols, c.x});
  }
};

}  // namespace

std::vector<Mutant> scaling_mutants() {
  return {
      {"RoPE scale applied twice: linear/YaRN interpolation at inv_freq / s^2",
       "ggml issue 835: theta_base *= freq_scale, then rope_yarn() scales by freq_scale again",
       "rope.scaled_frequency_bounds", make_mutant<RopeFreqScaleTwice>},
      {"YaRN attention factor squared", "sglang PR 33558: HF attention_factor times the engine's own mscale",
       "rope.orthogonal", make_mutant<RopeYarnFactorSquared>},
      {"dynamic NTK computed once at max length",
       "vLLM issue 3488: the cache built for max_position * factor, used for every length", "rope.ntk_base",
       make_mutant<RopeDynamicNtkAtMaxLength>},
      {"stateful dynamic NTK", "transformers issue 25306: the cache grows with the longest sequence and never resets",
       "rope.stateless", make_mutant<RopeDynamicNtkStateful>},
      {"Llama 3 scaling ignored", "llama.cpp PR 8676: rope_scaling type llama3 ignored, plain frequencies",
       "rope.scaled_frequency_bounds", make_mutant<RopeLlama3Ignored>},
      {"inaccurate pow for inv_freq", "tt-metal PR 49649: pow via 2^(y log2 x) losing the product's low bits, ~2%",
       "rope.agrees_with_reference", make_mutant<RopeInaccuratePow>},
      {"unmasked rotary tail", "sglang issue 35096: next_power_of_2(rotary_dim) columns rotated, the next head's too",
       "rope.agrees_with_reference", make_mutant<RopeUnmaskedTail>},
      {"2-D RoPE with rows and columns exchanged",
       "meshgrid xy/ij indexing (MAE's get_2d_sincos_pos_embed: 'here w goes first')", "rope2d.agrees_with_reference",
       make_mutant<Rope2dAxesSwapped>},
      {"Pixtral's 2-D RoPE with the column at the row's frequencies",
       "an axial kernel (Qwen2-VL's vision tower, both axes base^(-4k/d)) serving Pixtral, whose column takes "
       "the odd-indexed frequencies base^(-(4k+2)/d) (transformers' PixtralRotaryEmbedding)",
       "rope2d.agrees_with_reference", make_mutant<Rope2dSplitIgnored>},
  };
}

}  // namespace pecheck::mutants
