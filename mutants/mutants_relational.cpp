// Mutants for the relational properties: bugs that agreement at small positions can miss and
// that the inverse, offset, NaN-parity, determinism, causal and translation theorems are for.
#include <algorithm>
#include <cmath>

#include "impl/angles.hpp"
#include "impl/fp32_angle_rope.hpp"
#include "mutants/forwarding_encoder.hpp"
#include "mutants/mutants.hpp"

namespace pecheck::mutants {

namespace {

/// Positions read as unsigned 32-bit ids: -m becomes 2^32 - m and R_{-m} no longer undoes R_m.
struct RopeUnsignedPositions : Forwarding {
  using Forwarding::run;
  RopeUnsignedPositions() : Forwarding("mutant-rope-unsigned-positions") {}
  void run(const RopeApply& c) override {
    const auto& [s, dt, h, p, x] = c;
    std::vector<std::int64_t> ids(p.size());
    for (std::size_t i = 0; i < p.size(); ++i) ids[i] = static_cast<std::uint32_t>(p[i]);
    inner_->run(RopeApply{s, dt, h, ids, x});
  }
};

/// A cos/sin cache of 8192 positions; later positions reuse its last row (a cache sized for the
/// training context, read past its end with a clamp).
struct RopeCacheClamped : Forwarding {
  using Forwarding::run;
  RopeCacheClamped() : Forwarding("mutant-rope-cache-clamped-at-8192") {}
  void run(const RopeApply& c) override {
    const auto& [s, dt, h, p, x] = c;
    std::vector<std::int64_t> rows(p.size());
    for (std::size_t i = 0; i < p.size(); ++i) rows[i] = std::clamp<std::int64_t>(p[i], 0, 8191);
    inner_->run(RopeApply{s, dt, h, rows, x});
  }
};

/// Half-split partial rotary that pairs dim p with p + head_dim/2 instead of p + rotary_dim/2,
/// so a pass-through dim is mixed into a rotated one.
struct RopePairsAcrossHeadDim : Forwarding {
  using Forwarding::run;
  RopePairsAcrossHeadDim() : Forwarding("mutant-rope-pairs-across-head-dim") {}
  void run(const RopeApply& c) override {
    const auto& [s, dt, h, p, x] = c;
    if (s.layout != RopeLayout::half_split || s.rotary_dim == s.head_dim) return inner_->run(c);
    c.check();
    const std::size_t hd = static_cast<std::size_t>(s.head_dim), pairs = static_cast<std::size_t>(s.rotary_dim / 2);
    for (std::size_t t = 0; t < p.size(); ++t)
      for (std::size_t k = 0; k < static_cast<std::size_t>(h); ++k) {
        float* head = x.data() + (t * static_cast<std::size_t>(h) + k) * hd;
        for (std::size_t i = 0; i < pairs; ++i) {
          const double a = static_cast<double>(p[t]) * std::pow(s.base, -2.0 * static_cast<double>(i) / s.rotary_dim);
          const double x1 = head[i], x2 = head[i + hd / 2];
          head[i] = round_to(dt, x1 * std::cos(a) - x2 * std::sin(a));
          head[i + hd / 2] = round_to(dt, x2 * std::cos(a) + x1 * std::sin(a));
        }
      }
  }
};

/// Attention whose key loop runs backwards on every other call (the nondeterminism of a
/// split-K reduction with atomics): same inputs, different roundings.
struct AttentionNondeterministic : Forwarding {
  using Forwarding::run;
  AttentionNondeterministic() : Forwarding("mutant-attention-nondeterministic") {}
  void run(const Attention& c) override {
    const auto& [s, dt, p, q, k, v, t, o] = c;
    if (++calls_ % 2 == 1 || s.causal || s.pe != AttentionPE::none || s.kv_count() != s.heads) return inner_->run(c);
    // Reversing the keys (with their values) is exact math for full attention without PE, but
    // the sums run in another order.
    const std::size_t w = static_cast<std::size_t>(s.width()), n = p.size();
    std::vector<float> kr(k.size()), vr(v.size());
    for (std::size_t j = 0; j < n; ++j) {
      std::copy_n(k.begin() + static_cast<std::ptrdiff_t>(j * w), w,
                  kr.begin() + static_cast<std::ptrdiff_t>((n - 1 - j) * w));
      std::copy_n(v.begin() + static_cast<std::ptrdiff_t>(j * w), w,
                  vr.begin() + static_cast<std::ptrdiff_t>((n - 1 - j) * w));
    }
    inner_->run(Attention{s, dt, p, q, kr, vr, t, o});
  }
  unsigned calls_ = 0;
};

/// Calls after which the warm-up mutants below switch kernels.
constexpr long kWarmUpCalls = 1000;

/// RoPE that switches to another kernel once warm (an autotuner's or a JIT's choice made after
/// the first calls): from call 1,001 on, the angles in fp32. Each path alone is deterministic.
struct RopeSwitchesAfterWarmUp : Forwarding {
  using Forwarding::run;
  RopeSwitchesAfterWarmUp() : Forwarding("mutant-rope-switches-after-warm-up") {}
  void run(const RopeApply& c) override {
    if (++calls_ <= kWarmUpCalls) return inner_->run(c);
    baseline::fp32_angle_rope(c.spec, c.dtype, c.heads, c.positions, c.x);
  }
  long calls_ = 0;
};

/// Attention that switches to another kernel once warm: from call 1,001 on, one that folds the
/// softmax scale into Q (q scale rounded to fp32, then a scale of 1), as flash kernels fold it into
/// their exp2 argument; the same math for every PE but the sinusoid's (which stays on the first
/// kernel), other roundings. Each kernel alone is deterministic.
struct AttentionSwitchesAfterWarmUp : Forwarding {
  using Forwarding::run;
  AttentionSwitchesAfterWarmUp() : Forwarding("mutant-attention-switches-after-warm-up") {}
  void run(const Attention& c) override {
    const auto& [s, dt, p, q, k, v, t, o] = c;
    if (++calls_ <= kWarmUpCalls || s.pe == AttentionPE::sinusoidal) return inner_->run(c);
    std::vector<float> scaled(q.begin(), q.end());
    for (float& x : scaled) x = static_cast<float>(x * s.effective_scale());
    AttentionSpec folded = s;
    folded.scale = 1.0;
    inner_->run(Attention{folded, dt, p, scaled, k, v, t, o});
  }
  long calls_ = 0;
};

/// A sinusoid that switches to another kernel once warm: from call 1,001 on, angles formed in
/// fp32 (the first kernel forms them in double). Each kernel alone is deterministic.
struct SinusoidalSwitchesAfterWarmUp : Forwarding {
  using Forwarding::run;
  SinusoidalSwitchesAfterWarmUp() : Forwarding("mutant-sinusoidal-switches-after-warm-up") {}
  void run(const SinusoidalTable& c) override {
    const auto& [s, dt, p, out] = c;
    if (++calls_ <= kWarmUpCalls || s.padding_idx >= 0) return inner_->run(c);
    c.check();
    const std::size_t d = static_cast<std::size_t>(s.d_model), half = d / 2;
    std::vector<float> f;
    for (std::size_t i = 0; i < half; ++i)
      f.push_back(static_cast<float>(angles::frequency(static_cast<int>(i), s.frequency_width(), s.base).hi));
    const bool inter = s.layout == SinusoidalLayout::interleaved;
    for (std::size_t r = 0; r < p.size(); ++r)
      for (std::size_t i = 0; i < half; ++i) {
        const float a = static_cast<float>(p[r]) * f[i];
        out[r * d + (inter ? 2 * i : i)] = round_to(dt, std::sin(a));
        out[r * d + (inter ? 2 * i + 1 : half + i)] = round_to(dt, std::cos(a));
      }
  }
  long calls_ = 0;
};

/// A causal mask off by one: token i also sees token i + 1.
struct AttentionMaskOffByOne : Forwarding {
  using Forwarding::run;
  AttentionMaskOffByOne() : Forwarding("mutant-attention-mask-off-by-one") {}
  void run(const Attention& c) override {
    const auto& [s, dt, p, q, k, v, t, o] = c;
    inner_->run(c);
    if (!s.causal || p.size() < 2 || s.window > 0 || s.queries > 0) return;  // plain causal masks only
    // Redo each row i < n-1 over keys 0..i+1: a full-attention call on the first i+2 tokens. That
    // costs n^3 d; on a long case (attention.agrees_with_reference's, up to 2049 tokens) only the
    // first 32 rows are redone, wrong all the same.
    const std::size_t w = static_cast<std::size_t>(s.width()), kw = static_cast<std::size_t>(s.kv_width());
    AttentionSpec full = s;
    full.causal = false;
    for (std::size_t i = 0; i + 1 < p.size() && i < 32; ++i) {
      const std::size_t m = i + 2;
      std::vector<float> out(m * w);
      // Queries past i see everything of the prefix too, but only row i is kept.
      inner_->run(Attention{full, dt, p.first(m), q.first(m * w), k.first(m * kw), v.first(m * kw), t, out});
      std::copy_n(out.begin() + static_cast<std::ptrdiff_t>(i * w), w, o.begin() + static_cast<std::ptrdiff_t>(i * w));
    }
  }
};

/// Positions stored in fp16 before the score bias is formed: above 2048 they round, and the
/// output depends on where the sequence sits, not only on distances.
struct AttentionFp16Positions : Forwarding {
  using Forwarding::run;
  AttentionFp16Positions() : Forwarding("mutant-attention-fp16-positions") {}
  void run(const Attention& c) override {
    const auto& [s, dt, p, q, k, v, t, o] = c;
    std::vector<std::int64_t> rounded(p.size());
    for (std::size_t i = 0; i < p.size(); ++i) {
      const float r = round_to(DType::f16, static_cast<double>(p[i]));
      rounded[i] = std::isfinite(r) ? static_cast<std::int64_t>(r) : 65504;
    }
    inner_->run(Attention{s, dt, rounded, q, k, v, t, o});
  }
};

}  // namespace

std::vector<Mutant> relational_mutants() {
  return {
      {"RoPE kernel switched after 1,000 calls",
       "a kernel chosen after warm-up (an autotuner's or a JIT's pick; torch.backends.cudnn.benchmark's algorithm "
       "search, Triton's autotune) that rounds otherwise: the same input no longer gives the same bits",
       "rope.call_sequence", make_mutant<RopeSwitchesAfterWarmUp>},
      {"sinusoidal table kernel switched after 1,000 calls",
       "a table kernel chosen after warm-up (an autotuner's or a JIT's pick) that forms its angles in fp32 where the "
       "first formed them in double: the same call gives other bits",
       "sinusoidal.call_sequence", make_mutant<SinusoidalSwitchesAfterWarmUp>},
      {"attention kernel switched after 1,000 calls",
       "a reduction order chosen after warm-up (split-K picked by an autotuner, a JIT's recompilation): the same "
       "input no longer gives the same bits",
       "attention.call_sequence", make_mutant<AttentionSwitchesAfterWarmUp>},
      {"RoPE positions read as unsigned 32-bit", "position ids in an unsigned type: negative offsets wrap",
       "rope.inverse", make_mutant<RopeUnsignedPositions>},
      {"RoPE cache clamped at 8192 positions", "a cos/sin cache sized for the training context, read with a clamp",
       "rope.offset_invariance", make_mutant<RopeCacheClamped>},
      {"RoPE half-split pairs across head_dim under partial rotary", "rotate_half over head_dim instead of rotary_dim",
       "rope.nan_parity", make_mutant<RopePairsAcrossHeadDim>},
      {"attention reduction order changes between calls", "split-K or atomic reductions whose order varies",
       "attention.determinism", make_mutant<AttentionNondeterministic>},
      {"causal mask off by one", "a causal mask built with j > i + 1 (or <= where < was meant)",
       "attention.causal_future_independence", make_mutant<AttentionMaskOffByOne>},
      {"positions rounded to fp16 before the score bias",
       "position ids cast to the model dtype (fp16) before forming biases", "attention.translation_invariance",
       make_mutant<AttentionFp16Positions>},
  };
}

}  // namespace pecheck::mutants
