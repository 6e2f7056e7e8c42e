// The conventions of every encoder family: plain configuration structs shared by reference/,
// impl/ and properties/, each able to describe itself in one string.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "spec/rope_scaling.hpp"

namespace pecheck {

/// Where a sinusoid's sin and cos of one frequency live in the row.
enum class SinusoidalLayout {
  interleaved,   ///< pe[2i] = sin, pe[2i+1] = cos (Vaswani 2017, the seeds' PositionalEncoding)
  concatenated,  ///< pe[i] = sin, pe[d/2+i] = cos (tensor2tensor / fairseq)
};

/// Which two dimensions of a head RoPE rotates together.
enum class RopeLayout {
  interleaved,  ///< pairs (2i, 2i+1): GPT-J, the seed's apply_rope
  half_split,   ///< pairs (i, i+rotary_dim/2): GPT-NeoX, HF rotate_half
};

inline std::string_view layout_name(SinusoidalLayout l) {
  return l == SinusoidalLayout::interleaved ? "interleaved" : "concatenated";
}
inline std::string_view layout_name(RopeLayout l) {
  return l == RopeLayout::interleaved ? "interleaved" : "half_split";
}

/// The frequency of pair i of a sinusoid of width d.
enum class SinusoidalFrequencies {
  vaswani,  ///< base^(-2i/d) (Vaswani 2017, tensor2tensor, the seeds)
  fairseq,  ///< base^(-i/(d/2 - 1)): fairseq's exp(-i log(base) / (half_dim - 1)), last pair at 1/base
};

/// PE(pos, pair i) = (sin, cos)(pos * frequency_i), placed by the layout. fairseq's table also
/// has an all-zero row at padding_idx (its positions start at padding_idx + 1).
struct SinusoidalSpec {
  int d_model = 64;
  double base = 10000.0;
  SinusoidalLayout layout = SinusoidalLayout::interleaved;
  SinusoidalFrequencies frequencies = SinusoidalFrequencies::vaswani;
  std::int64_t padding_idx = -1;  ///< the position whose row is all zeros; -1: none

  void validate() const {
    if (d_model <= 0 || d_model % 2 != 0)
      throw std::invalid_argument(fmt::format("sinusoidal d_model must be even and > 0, got {}", d_model));
    if (frequencies == SinusoidalFrequencies::fairseq && d_model < 4)
      throw std::invalid_argument(
          fmt::format("fairseq sinusoid needs d_model >= 4 (half_dim - 1 > 0), got {}", d_model));
    if (!(base > 1.0)) throw std::invalid_argument(fmt::format("sinusoidal base must be > 1, got {}", base));
    if (padding_idx < -1) throw std::invalid_argument(fmt::format("padding_idx must be >= -1, got {}", padding_idx));
  }
  /// Whether pos is the padding position (never when padding_idx is -1: negative positions are valid).
  bool is_padding(std::int64_t pos) const { return padding_idx >= 0 && pos == padding_idx; }
  /// The d of base^(-2i/d) that gives this spec's frequencies: d_model, or d_model - 2 (fairseq).
  int frequency_width() const { return frequencies == SinusoidalFrequencies::fairseq ? d_model - 2 : d_model; }
  std::string describe() const {
    return fmt::format("sinusoidal(layout={},d={},base={}{}{})", layout_name(layout), d_model, short_number(base),
                       frequencies == SinusoidalFrequencies::fairseq ? ",fairseq" : "",
                       padding_idx >= 0 ? fmt::format(",padding_idx={}", padding_idx) : std::string());
  }
};

/// y = x + E[pos] for a table E of max_len rows; a position outside [0, max_len) is an error.
struct LearnedSpec {
  int max_len = 512;
  int d_model = 64;

  void validate() const {
    if (max_len <= 0 || d_model <= 0)
      throw std::invalid_argument(fmt::format("learned table must be non-empty, got {}x{}", max_len, d_model));
  }
  std::string describe() const { return fmt::format("learned(max_len={},d={})", max_len, d_model); }
};

/// Rotation of the first rotary_dim dims of each head by angles pos * inv_freq_i, inv_freq_i =
/// base^(-2i/rotary_dim) under the scaling rule (spec/rope_scaling.hpp); dims [rotary_dim,
/// head_dim) pass through untouched.
struct RopeSpec {
  int head_dim = 64;
  int rotary_dim = 64;
  double base = 10000.0;
  RopeLayout layout = RopeLayout::interleaved;
  RopeScaling scaling{};

  void validate() const {
    if (head_dim <= 0 || head_dim % 2 != 0)
      throw std::invalid_argument(fmt::format("RoPE head_dim must be even and > 0, got {}", head_dim));
    if (rotary_dim <= 0 || rotary_dim % 2 != 0 || rotary_dim > head_dim)
      throw std::invalid_argument(
          fmt::format("RoPE rotary_dim must be even and in (0, head_dim={}], got {}", head_dim, rotary_dim));
    if (!(base > 1.0)) throw std::invalid_argument(fmt::format("RoPE base must be > 1, got {}", base));
    scaling.validate(rotary_dim);
  }
  /// |R_m x| / |x| on the rotated dims: 1, or YaRN's or LongRoPE's attention factor.
  double magnitude() const { return scaling.magnitude(); }
  bool operator==(const RopeSpec&) const = default;
  std::string describe() const {
    return fmt::format("rope(layout={},d={},rot={},base={}{})", layout_name(layout), head_dim, rotary_dim,
                       short_number(base), scaling.describe());
  }
};

/// ALiBi score bias: -m_h * |p_i - p_j| (symmetric) or -m_h * (p_i - p_j) with j > i masked
/// to -inf (causal); slopes m_h = 2^(-8h/H), with the paper's rule when H is not a power of two.
struct AlibiSpec {
  int heads = 8;
  bool causal = true;

  void validate() const {
    if (heads <= 0) throw std::invalid_argument(fmt::format("ALiBi needs heads > 0, got {}", heads));
  }
  std::string describe() const { return fmt::format("alibi(heads={},{})", heads, causal ? "causal" : "symmetric"); }
};

/// Shaw et al. relative embeddings: score(i, j) = q_i . k_j + q_i . r[clamp(p_j - p_i, -K, K) + K]
/// with a table r of 2K+1 rows of head_dim.
struct ShawSpec {
  int max_distance = 4;  ///< K
  int head_dim = 64;

  void validate() const {
    if (max_distance < 0 || head_dim <= 0)
      throw std::invalid_argument(
          fmt::format("Shaw needs K >= 0 and head_dim > 0, got K={} d={}", max_distance, head_dim));
  }
  int table_rows() const { return 2 * max_distance + 1; }
  std::string describe() const { return fmt::format("shaw(K={},d={})", max_distance, head_dim); }
};

/// T5's bucketed relative bias: out[h, i, j] = table[bucket(p_j - p_i), h]. Distances below
/// max_exact = n/2 (n = num_buckets, halved when bidirectional) get their own bucket, larger ones
/// log-spaced buckets up to max_distance, beyond which they share the last.
struct T5Spec {
  int heads = 8;
  int num_buckets = 32;
  int max_distance = 128;
  bool bidirectional = true;

  int half() const { return bidirectional ? num_buckets / 2 : num_buckets; }  ///< buckets per direction
  int max_exact() const { return half() / 2; }
  void validate() const {
    if (heads <= 0) throw std::invalid_argument(fmt::format("T5 bias needs heads > 0, got {}", heads));
    if (num_buckets < (bidirectional ? 4 : 2) || (bidirectional && num_buckets % 2 != 0))
      throw std::invalid_argument(fmt::format("T5 num_buckets must be >= {}{}, got {}", bidirectional ? 4 : 2,
                                              bidirectional ? " and even" : "", num_buckets));
    if (max_distance <= max_exact())
      throw std::invalid_argument(
          fmt::format("T5 max_distance must exceed max_exact = {}, got {}", max_exact(), max_distance));
  }
  std::string describe() const {
    return fmt::format("t5(heads={},buckets={},max_distance={},{})", heads, num_buckets, max_distance,
                       bidirectional ? "bidirectional" : "causal");
  }
};

/// How a position encoding enters attention.
enum class AttentionPE {
  none,        ///< plain scaled dot-product attention
  sinusoidal,  ///< PE(pos) (width heads*head_dim) added to the inputs Q, K and V (identity projections)
  rope,        ///< RoPE applied to Q and K of every head
  alibi,       ///< ALiBi slopes added to the scores
  shaw,        ///< Shaw relative term q_i . r(p_j - p_i) added to the scores (before scaling)
  t5,          ///< T5's bucketed relative bias table[bucket(p_j - p_i), h] added to the scaled scores
};

inline std::string_view pe_name(AttentionPE p) {
  switch (p) {
    case AttentionPE::none:
      return "none";
    case AttentionPE::sinusoidal:
      return "sinusoidal";
    case AttentionPE::rope:
      return "rope";
    case AttentionPE::alibi:
      return "alibi";
    case AttentionPE::shaw:
      return "shaw";
    case AttentionPE::t5:
      return "t5";
  }
  return "?";
}

/// Multi-head scaled dot-product attention over Q, K, V of shape (seq, heads, head_dim):
/// O = softmax(scale * S + B) V per head, S the (position-encoded) scores, B the bias, with
/// j > i masked when causal. scale defaults to 1/sqrt(head_dim).
struct AttentionSpec {
  int heads = 2;
  int head_dim = 16;
  /// K/V heads (grouped-query attention; 1 is MQA), 0 meaning `heads`: it divides `heads`, and query
  /// head h reads K/V head h / (heads / kv_heads), each K/V head serving a consecutive group.
  int kv_heads = 0;
  /// Sliding window (Mistral's), 0 meaning none: causal, and query i sees the `window` keys
  /// j with i - window < j <= i (itself included), by token index.
  int window = 0;
  /// Queries (a KV-cache decode step, or a chunk of prefill), 0 meaning every token: Q and the
  /// output hold the last `queries` of the n tokens whose K and V are given (bottom-right
  /// alignment, flash-attn 2.1's and PyTorch's causal_lower_right): query row r is token
  /// n - queries + r, encoded at that token's position, and under the causal mask it sees the keys
  /// j <= n - queries + r.
  int queries = 0;
  bool causal = false;
  std::optional<double> scale;
  AttentionPE pe = AttentionPE::none;
  double pe_base = 10000.0;  ///< base of the sinusoidal PE or of RoPE
  RopeLayout rope_layout = RopeLayout::half_split;
  /// The rest of RoPE's own spec (rope()): its rotary_dim, 0 meaning head_dim (partial rotary:
  /// the first rotary_dim dims of each head turn, the rest pass through), and its scaling rule.
  int rotary_dim = 0;
  RopeScaling rope_scaling{};
  int shaw_max_distance = 4;
  /// T5's bucketing (t5()): its table (num_buckets, heads) comes with the call, as T5 gives its
  /// attention position_bias.
  int t5_buckets = 32;
  int t5_max_distance = 128;
  bool t5_bidirectional = true;

  double effective_scale() const { return scale ? *scale : 1.0 / std::sqrt(double(head_dim)); }
  int width() const { return heads * head_dim; }
  int kv_count() const { return kv_heads == 0 ? heads : kv_heads; }
  int kv_width() const { return kv_count() * head_dim; }
  /// The K/V head that query head h reads.
  int kv_head_of(int h) const { return h / (heads / kv_count()); }
  /// Query rows of a call over n tokens, and the token index of the first (n - queries).
  std::size_t query_count(std::size_t n) const { return queries == 0 ? n : static_cast<std::size_t>(queries); }
  std::size_t query_offset(std::size_t n) const { return n - query_count(n); }
  /// The first key token i sees (the mask's lower edge: 0 without a window).
  std::size_t first_key(std::size_t i) const {
    return window > 0 && i + 1 > static_cast<std::size_t>(window) ? i + 1 - static_cast<std::size_t>(window) : 0;
  }
  SinusoidalSpec sinusoidal() const { return {width(), pe_base, SinusoidalLayout::interleaved}; }
  RopeSpec rope() const {
    return {head_dim, rotary_dim == 0 ? head_dim : rotary_dim, pe_base, rope_layout, rope_scaling};
  }
  /// Whether RoPE here is more than a full rotation at a base (partial rotary, or a scaling rule).
  bool rope_extended() const {
    return pe == AttentionPE::rope && (rope().rotary_dim != head_dim || rope_scaling.kind != RopeScalingKind::none ||
                                       rope_scaling.rotated_pairs != 0);
  }
  /// rope()'s inverse: the head width, base, layout, rotary_dim (0 where it is the whole head) and
  /// scaling rule from r.
  void set_rope(const RopeSpec& r) {
    head_dim = r.head_dim;
    pe_base = r.base;
    rope_layout = r.layout;
    rotary_dim = r.rotary_dim == r.head_dim ? 0 : r.rotary_dim;
    rope_scaling = r.scaling;
  }
  AlibiSpec alibi() const { return {heads, causal}; }
  ShawSpec shaw() const { return {shaw_max_distance, head_dim}; }
  T5Spec t5() const { return {heads, t5_buckets, t5_max_distance, t5_bidirectional}; }
  /// t5()'s inverse for the bucketing (the heads are attention's own).
  void set_t5(const T5Spec& b) {
    t5_buckets = b.num_buckets;
    t5_max_distance = b.max_distance;
    t5_bidirectional = b.bidirectional;
  }

  void validate() const {
    if (heads <= 0 || head_dim <= 0)
      throw std::invalid_argument(fmt::format("attention needs heads, head_dim > 0, got {}x{}", heads, head_dim));
    if (scale && !(std::isfinite(*scale))) throw std::invalid_argument("attention scale must be finite");
    if (window < 0 || (window > 0 && !causal))
      throw std::invalid_argument(fmt::format("attention window must be 0 (none) or > 0 with causal, got {}{}", window,
                                              causal ? "" : " without causal"));
    if (queries < 0) throw std::invalid_argument(fmt::format("attention queries must be >= 0, got {}", queries));
    if (rotary_dim < 0)
      throw std::invalid_argument(fmt::format("attention rotary_dim must be >= 0, got {}", rotary_dim));
    if (kv_heads < 0 || (kv_heads > 0 && heads % kv_heads != 0))
      throw std::invalid_argument(fmt::format("attention kv_heads must divide heads ({}), got {}", heads, kv_heads));
    // The sinusoid is added to the embedding that Q, K and V share (identity projections): with
    // fewer K/V heads there is no such embedding.
    if (kv_count() != heads && pe == AttentionPE::sinusoidal)
      throw std::invalid_argument("attention with the sinusoid needs kv_heads == heads (it adds one PE to Q, K and V)");
    if (pe == AttentionPE::rope) rope().validate();
    if (pe == AttentionPE::sinusoidal) sinusoidal().validate();
    if (pe == AttentionPE::shaw) shaw().validate();
    if (pe == AttentionPE::t5) t5().validate();
  }
  std::string describe() const {
    // Partial or scaled RoPE prints its whole spec: pe=rope(layout=...,rot=...,yarn(...)).
    return fmt::format("attention(heads={},{}d={},{}{}{},pe={}{})", heads,
                       kv_count() == heads ? std::string() : fmt::format("kv_heads={},", kv_heads), head_dim,
                       causal ? "causal" : "full", window > 0 ? fmt::format(",window={}", window) : std::string(),
                       queries > 0 ? fmt::format(",queries={}", queries) : std::string(),
                       rope_extended() ? rope().describe()
                       : pe == AttentionPE::t5
                           ? fmt::format("t5(buckets={},max_distance={},{})", t5_buckets, t5_max_distance,
                                         t5_bidirectional ? "bidirectional" : "causal")
                           : std::string(pe_name(pe)),
                       scale ? fmt::format(",scale={}", short_number(*scale)) : std::string());
  }
};

}  // namespace pecheck
