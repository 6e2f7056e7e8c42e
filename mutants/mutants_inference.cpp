// Mutants of attention as inference engines call it. Decode calls (fewer queries than keys,
// spec.queries; the query block is the last tokens): the query rotated at the wrong position, or
// the causal mask aligned to the top-left corner. RoPE's own spec inside attention: its scaling
// rule or its rotary_dim dropped on the way to the kernel.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "mutants/forwarding_encoder.hpp"
#include "mutants/mutants.hpp"

namespace pecheck::mutants {

namespace {

/// A decode call (queries < n) without a PE or with RoPE, done as the bug does it: Q and K rotated
/// here (Q at `query_position`), then plain attention by `attend`. Every other call, and every
/// other PE, goes to the correct kernel.
struct DecodeRewrite : Forwarding {
  using Forwarding::Forwarding;
  using Forwarding::run;
  /// The position query row r is rotated at, of a call whose query rows start at token off.
  virtual std::int64_t query_position(std::span<const std::int64_t> p, std::size_t off, std::size_t r) const {
    return p[off + r];
  }
  /// Attention of the rotated inputs (plain.pe is none): the correct kernel unless overridden.
  virtual void attend(const Attention& plain) { inner_->run(plain); }
  void run(const Attention& c) override {
    const auto& [s, dt, p, q, k, v, t, o] = c;
    if (s.queries == 0 || (s.pe != AttentionPE::none && s.pe != AttentionPE::rope)) return inner_->run(c);
    c.check();
    const std::size_t n = p.size(), nq = s.query_count(n), off = s.query_offset(n);
    std::vector<float> qr(q.begin(), q.end()), kr(k.begin(), k.end());
    if (s.pe == AttentionPE::rope) {
      std::vector<std::int64_t> qp(nq);
      for (std::size_t r = 0; r < nq; ++r) qp[r] = query_position(p, off, r);
      inner_->run(RopeApply{s.rope(), DType::f32, s.heads, qp, qr});
      inner_->run(RopeApply{s.rope(), DType::f32, s.kv_count(), p, kr});
    }
    AttentionSpec plain = s;
    plain.pe = AttentionPE::none;
    attend(Attention{plain, dt, p, qr, kr, v, t, o});
  }
};

/// The query of a decode step rotated at its index in the call, not its token's position: the
/// cache length never added, so a one-token step sits at position 0.
struct DecodeRopeCacheNotAdded : DecodeRewrite {
  DecodeRopeCacheNotAdded() : DecodeRewrite("mutant-attention-decode-rope-cache-not-added") {}
  std::int64_t query_position(std::span<const std::int64_t> p, std::size_t, std::size_t r) const override {
    return p[r];
  }
};

/// The query of a decode step rotated one position too far: its position taken as the cache
/// length counted after the new token was appended.
struct DecodeRopeOffByOne : DecodeRewrite {
  DecodeRopeOffByOne() : DecodeRewrite("mutant-attention-decode-rope-off-by-one") {}
  std::int64_t query_position(std::span<const std::int64_t> p, std::size_t off, std::size_t r) const override {
    return p[off + r] + 1;
  }
};

/// The causal mask aligned to the top-left corner when queries are fewer than keys: query row r
/// sees keys 0..r (PyTorch SDPA's is_causal, flash-attn before 2.1), not 0..n - queries + r.
/// Positions stay right; only the mask is wrong. Row by row: a one-query call over r + 1 keys.
struct AttentionMaskTopLeft : DecodeRewrite {
  AttentionMaskTopLeft() : DecodeRewrite("mutant-attention-mask-top-left") {}
  void attend(const Attention& plain) override {
    const auto& [s, dt, p, q, k, v, t, o] = plain;
    if (!s.causal) return inner_->run(plain);
    const std::size_t w = static_cast<std::size_t>(s.width()), kw = static_cast<std::size_t>(s.kv_width());
    AttentionSpec one = s;
    one.queries = 1;
    for (std::size_t r = 0; r < s.query_count(p.size()); ++r)
      inner_->run(Attention{one, dt, p.first(r + 1), q.subspan(r * w, w), k.first((r + 1) * kw), v.first((r + 1) * kw),
                            t, o.subspan(r * w, w)});
  }
};

/// Attention whose RoPE is called without the model's scaling rule (plain base^(-2i/d)).
struct AttentionRopeScalingIgnored : RewritesAttentionSpec {
  AttentionRopeScalingIgnored() : RewritesAttentionSpec("mutant-attention-rope-scaling-ignored") {}
  AttentionSpec rewrite(AttentionSpec s) override {
    s.rope_scaling = {};
    return s;
  }
};

/// Attention whose RoPE turns every dim of the head, the model's rotary_dim dropped.
struct AttentionIgnoresRotaryDim : RewritesAttentionSpec {
  AttentionIgnoresRotaryDim() : RewritesAttentionSpec("mutant-attention-ignores-rotary-dim") {}
  AttentionSpec rewrite(AttentionSpec s) override {
    // A LongRoPE list has rotary_dim / 2 entries: the full head has no such rule to call.
    if (s.rope_scaling.kind != RopeScalingKind::longrope) s.rotary_dim = 0;
    return s;
  }
};

/// T5's bias inside attention read at query minus key, the two directions' buckets exchanged: the
/// positions mirrored (P - p, P the largest) for T5 calls, so bucket(p_j - p_i) reads p_i - p_j.
struct AttentionT5RelativeReversed : Forwarding {
  AttentionT5RelativeReversed() : Forwarding("mutant-attention-t5-relative-reversed") {}
  using Forwarding::run;
  void run(const Attention& c) override {
    if (c.spec.pe != AttentionPE::t5 || c.positions.empty()) return inner_->run(c);
    const std::int64_t top = *std::max_element(c.positions.begin(), c.positions.end());
    std::vector<std::int64_t> mirrored(c.positions.size());
    for (std::size_t i = 0; i < mirrored.size(); ++i) mirrored[i] = top - c.positions[i];
    inner_->run(Attention{c.spec, c.dtype, mirrored, c.q, c.k, c.v, c.pe_table, c.out});
  }
};

}  // namespace

std::vector<Mutant> inference_mutants() {
  return {
      {"decode step's RoPE without the cache length",
       "the query of a decode step rotated at its index in the call (position 0 for one token): executorch PR 2010 "
       "(rotary tables not sliced from start_pos in the KV-cache branch), moeut PR 6 (the query offset taken before "
       "the cache was concatenated)",
       "attention.decode_equivalence", make_mutant<DecodeRopeCacheNotAdded>},
      {"decode step's RoPE one position too far",
       "the decode query rotated at the cache length counted after the append: onnxruntime-genai PR 2354 "
       "(past_sequence_lengths including the token being processed, RoPE positions one step too far)",
       "attention.decode_equivalence", make_mutant<DecodeRopeOffByOne>},
      {"causal mask aligned top-left when queries are fewer than keys",
       "query r sees keys 0..r instead of 0..n - queries + r: PyTorch SDPA's is_causal (pytorch issue 108108), "
       "flash-attn before 2.1 (flash-attention issue 402), CUTLASS Blackwell FMHA (cutlass issue 2336)",
       "attention.decode_equivalence", make_mutant<AttentionMaskTopLeft>},
      {"attention's RoPE without its scaling rule",
       "rope_scaling dropped between the config and the attention kernel: Nemotron's rotary module in transformers "
       "4.49 (docs/model-zoo.md), Llama 3.1's llama3 rule ignored (llama.cpp PR 8676)",
       "attention.agrees_with_reference", make_mutant<AttentionRopeScalingIgnored>},
      {"attention's RoPE over the whole head, rotary_dim ignored",
       "partial rotary dropped inside attention, every channel rotated: maxtext issue 4616 (partial_rotary_factor "
       "ignored on the M-RoPE path of Qwen3.5), aiter PR 2199 (a fused qk-norm-RoPE kernel without rotary_dim)",
       "attention.agrees_with_reference", make_mutant<AttentionIgnoresRotaryDim>},
      {"T5's bias inside attention at query minus key",
       "the relative position taken as query - key, not key - query, so the two directions' buckets trade places: "
       "gluon-nlp PR 1470 (relative_position_bucket fed query_i - mem_j until aligned with Mesh TensorFlow)",
       "attention.agrees_with_reference", make_mutant<AttentionT5RelativeReversed>},
  };
}

}  // namespace pecheck::mutants
