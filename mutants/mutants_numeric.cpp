// Mutants of numerical technique: how angles, frequencies, pairings and softmax are computed.
#include <cfloat>
#include <cmath>
#include <utility>

#include "mutants/forwarding_encoder.hpp"
#include "mutants/hand_written_softmax.hpp"
#include "mutants/mutants.hpp"

namespace pecheck::mutants {

namespace {

double inv_freq(const RopeSpec& s, int p) { return std::pow(s.base, -2.0 * p / s.rotary_dim); }

/// The seeds' RotaryPositionalEmbedding: emb = cat(sin, cos) of the angles, then returns
/// emb.cos() and emb.sin(), i.e. a rotation by sin(angle) instead of by the angle.
struct RopeCosOfSin : Forwarding {
  using Forwarding::run;
  RopeCosOfSin() : Forwarding("mutant-rope-cos-of-sin") {}
  void run(const RopeApply& c) override {
    const auto& [s, dt, h, p, x] = c;
    if (s.scaling.kind != RopeScalingKind::none) return inner_->run(c);  // unscaled bug
    rope_with(s, s.layout, dt, h, p, x, [&, &s = s](std::int64_t pos, int i) {
      const double a = std::sin(static_cast<double>(pos) * inv_freq(s, i));
      return std::pair{std::cos(a), std::sin(a)};
    });
  }
};

/// Fast-math sin/cos: a Taylor polynomial valid near 0, applied without range reduction.
struct RopeNoRangeReduction : Forwarding {
  using Forwarding::run;
  RopeNoRangeReduction() : Forwarding("mutant-rope-no-range-reduction") {}
  static double poly_sin(double a) { return a - a * a * a / 6 + a * a * a * a * a / 120 - std::pow(a, 7) / 5040; }
  static double poly_cos(double a) { return 1 - a * a / 2 + a * a * a * a / 24 - std::pow(a, 6) / 720; }
  void run(const RopeApply& c) override {
    const auto& [s, dt, h, p, x] = c;
    if (s.scaling.kind != RopeScalingKind::none) return inner_->run(c);  // unscaled bug
    rope_with(s, s.layout, dt, h, p, x, [&, &s = s](std::int64_t pos, int i) {
      const double a = static_cast<double>(pos) * inv_freq(s, i);
      return std::pair{poly_cos(a), poly_sin(a)};
    });
  }
};

/// ggml's incremental frequencies: theta_i = theta_{i-1} * theta_scale in fp32, so the error of
/// the last frequencies grows with i (and is multiplied by the position).
/// RoPE on a platform that flushes subnormals to zero (DAZ and FTZ: XLA on CPU, fast-math CUDA):
/// a subnormal input is read as a zero of its sign and a subnormal output written as one. Right
/// when the run states it (RunParams::ftz), a fault when it does not.
struct RopeFlushesSubnormals : Forwarding {
  using Forwarding::run;
  RopeFlushesSubnormals() : Forwarding("mutant-rope-flushes-subnormals") {}
  static void flush(std::span<float> x) {
    for (float& v : x)
      if (std::fabs(v) < FLT_MIN) v = std::copysign(0.0f, v);
  }
  void run(const RopeApply& c) override {
    flush(c.x);
    inner_->run(c);
    flush(c.x);
  }
};

struct RopeIncrementalTheta : Forwarding {
  using Forwarding::run;
  RopeIncrementalTheta() : Forwarding("mutant-rope-incremental-theta") {}
  void run(const RopeApply& c) override {
    const auto& [s, dt, h, p, x] = c;
    if (s.scaling.kind != RopeScalingKind::none) return inner_->run(c);  // unscaled bug
    rope_with(s, s.layout, dt, h, p, x, [&, &s = s](std::int64_t pos, int i) {
      const float scale = std::pow(static_cast<float>(s.base), -2.0f / static_cast<float>(s.rotary_dim));
      float theta = static_cast<float>(pos);
      for (int k = 0; k < i; ++k) theta *= scale;
      return std::pair{std::cos(double{theta}), std::sin(double{theta})};
    });
  }
};

/// NeoX (half-split) pairing hard-coded, whatever layout the model asks for.
struct RopeAlwaysHalfSplit : RewritesRopeSpec {
  RopeAlwaysHalfSplit() : RewritesRopeSpec("mutant-rope-always-half-split") {}
  RopeSpec rewrite(RopeSpec s) override {
    s.layout = RopeLayout::half_split;
    return s;
  }
};

/// Positions shifted by one (1-based ids, or an off-by-one under left padding).
struct RopeOffByOne : Forwarding {
  using Forwarding::run;
  RopeOffByOne() : Forwarding("mutant-rope-position-off-by-one") {}
  void run(const RopeApply& c) override {
    const auto& [s, dt, h, p, x] = c;
    std::vector<std::int64_t> shifted(p.begin(), p.end());
    for (auto& q : shifted) ++q;
    inner_->run(RopeApply{s, dt, h, shifted, x});
  }
};

/// Q and K cross-wired: scores from K against Q.
struct AttentionQKSwapped : Forwarding {
  using Forwarding::run;
  AttentionQKSwapped() : Forwarding("mutant-attention-q-k-swapped") {}
  void run(const Attention& c) override {
    const auto& [s, dt, p, q, k, v, t, o] = c;
    if (s.queries > 0) return inner_->run(c);  // Q and K differ in rows: no swapped call to make
    inner_->run(Attention{s, dt, p, k, q, v, t, o});
  }
};

/// Softmax without the max subtraction: exp overflows to inf for logits above ~88 (inf/inf = NaN).
struct AttentionNoMaxSubtraction : HandWrittenSoftmax {
  AttentionNoMaxSubtraction() : HandWrittenSoftmax("mutant-attention-softmax-no-max") {}
  void row(const SoftmaxRow& r, std::vector<float>& acc, float& sum) const override {
    for (std::size_t j = 0; j < r.visible; ++j) {
      const float w = std::exp(r.logit(j));  // no max subtracted
      sum += w;
      const float* vj = r.value(j);
      for (std::size_t e = 0; e < acc.size(); ++e) acc[e] += w * vj[e];
    }
  }
};

/// The softmax probabilities rounded to f16 where they meet V, whatever the call's dtype: a flash
/// loop's P cast by a hard-coded type. Within the rounded-P contract in bf16 (f16 is finer) and f16,
/// far outside every attention contract in f32 (u_f16 = 2^13 u_f32).
struct AttentionPHardCodedF16 : TiledOnlineSoftmax {
  AttentionPHardCodedF16() : TiledOnlineSoftmax("mutant-attention-p-hard-coded-f16", 64) {}
  float p_at_v(float w, DType) const override { return round_to(DType::f16, w); }
};

/// Grouped-query attention whose query head h reads K/V head h % kv_heads (heads interleaved over
/// the K/V heads) instead of h / group (consecutive groups): right for MQA and for MHA, wrong for
/// every other grouping. Run as the MHA call with K and V repeated by that wrong rule.
struct AttentionGqaModulo : Forwarding {
  using Forwarding::run;
  AttentionGqaModulo() : Forwarding("mutant-attention-gqa-modulo") {}
  void run(const Attention& c) override {
    const auto& [s, dt, p, q, k, v, t, o] = c;
    c.check();
    if (s.kv_count() == s.heads) return inner_->run(c);
    const std::size_t n = p.size(), H = static_cast<std::size_t>(s.heads), KV = static_cast<std::size_t>(s.kv_count()),
                      d = static_cast<std::size_t>(s.head_dim);
    std::vector<float> kr(n * H * d), vr(n * H * d);
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t h = 0; h < H; ++h)
        for (std::size_t e = 0; e < d; ++e) {
          kr[(j * H + h) * d + e] = k[(j * KV + h % KV) * d + e];
          vr[(j * H + h) * d + e] = v[(j * KV + h % KV) * d + e];
        }
    AttentionSpec mha = s;
    mha.kv_heads = 0;
    inner_->run(Attention{mha, dt, p, q, kr, vr, t, o});
  }
};

/// A sliding window one key too wide: query i sees i - W <= j <= i (W + 1 keys), as flash-attn's
/// window_size = (W, 0) reads when W is passed where W - 1 was meant.
struct AttentionWindowOffByOne : RewritesAttentionSpec {
  AttentionWindowOffByOne() : RewritesAttentionSpec("mutant-attention-window-off-by-one") {}
  AttentionSpec rewrite(AttentionSpec s) override {
    if (s.window > 0) ++s.window;
    return s;
  }
};

}  // namespace

std::vector<Mutant> numeric_mutants() {
  return {
      {"RoPE rotates by sin(angle): the seed's cos(sin(.))",
       "the seed tutorial's RotaryPositionalEmbedding: emb = cat(sin, cos); return emb.cos(), emb.sin()",
       "rope.relative", make_mutant<RopeCosOfSin>},
      {"RoPE sin/cos without range reduction", "fast-math polynomial sin/cos applied to large angles",
       "rope.agrees_with_reference", make_mutant<RopeNoRangeReduction>},
      {"RoPE frequencies by repeated multiplication in fp32", "ggml's incremental theta *= theta_scale",
       "rope.agrees_with_reference", make_mutant<RopeIncrementalTheta>},
      {"RoPE flushing subnormals to zero, not stated",
       "a kernel run where subnormals are flushed (XLA on CPU: jnp.asarray(x) * 1.0 turns 7e-39 into 0; CUDA and "
       "Triton built with fast math), checked as if they were kept",
       "rope.orthogonal", make_mutant<RopeFlushesSubnormals>},
      {"RoPE pairing hard-coded to half-split", "NeoX pairing used for an interleaved (GPT-J) model",
       "rope.layout_conjugacy", make_mutant<RopeAlwaysHalfSplit>},
      {"RoPE positions off by one", "1-based position ids, or an off-by-one under left padding", "rope.inverse",
       make_mutant<RopeOffByOne>},
      {"attention with Q and K cross-wired", "Q and K swapped in the score computation",
       "attention.agrees_with_reference", make_mutant<AttentionQKSwapped>},
      // Any attention property sees the NaN once a case has large logits; kv_permutation_invariance
      // draws only plain attention, where this mutant misbehaves, so it meets one soonest.
      {"softmax without max subtraction", "exp(logit) without subtracting the row max: overflow to inf, NaN",
       "attention.kv_permutation_invariance", make_mutant<AttentionNoMaxSubtraction>},
      {"sliding window one key too wide",
       "W + 1 keys where W were meant: transformers issue 39408 (flash-attn's window_size set to (W, W)), zml PR 763 "
       "(window_size_left = W instead of W - 1), vLLM issue 3385 (HF and xformers disagreeing by one)",
       "attention.window_limits", make_mutant<AttentionWindowOffByOne>},
      {"softmax probabilities hard-coded to f16",
       "P cast to f16 before P.V whatever the dtype: the Triton fused-attention tutorial's "
       "torch.softmax(p.float(), dim=-1).half() (triton issue 734), LMCache PR 3092's Triton attention kernels "
       "casting to tl.float16 in bf16 and f32 models",
       "attention.agrees_with_reference", make_mutant<AttentionPHardCodedF16>},
      {"grouped-query heads mapped by h % kv_heads",
       "query head h given K/V head h % kv_heads instead of h / (heads / kv_heads): the repeat_interleave vs "
       "repeat mix-up of GQA ports (HF's repeat_kv expands each K/V head over consecutive query heads)",
       "attention.gqa_repeat_equivalence", make_mutant<AttentionGqaModulo>},
  };
}

}  // namespace pecheck::mutants
