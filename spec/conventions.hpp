// The conventions of every encoder family: plain configuration structs shared by reference/,
// impl/ and properties/, each able to describe itself in one string.
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

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

/// Shortest text that reads back as the same double ("10000", "5e+05", "0.5").
inline std::string short_number(double x) { return fmt::format("{}", x); }

/// PE(pos, pair i) = (sin, cos)(pos * base^(-2i/d_model)).
struct SinusoidalSpec {
  int d_model = 64;
  double base = 10000.0;
  SinusoidalLayout layout = SinusoidalLayout::interleaved;

  void validate() const {
    if (d_model <= 0 || d_model % 2 != 0)
      throw std::invalid_argument(fmt::format("sinusoidal d_model must be even and > 0, got {}", d_model));
    if (!(base > 1.0)) throw std::invalid_argument(fmt::format("sinusoidal base must be > 1, got {}", base));
  }
  std::string describe() const {
    return fmt::format("sinusoidal(layout={},d={},base={})", layout_name(layout), d_model, short_number(base));
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

/// Rotation of the first rotary_dim dims of each head by angles pos * base^(-2i/rotary_dim);
/// dims [rotary_dim, head_dim) pass through untouched.
struct RopeSpec {
  int head_dim = 64;
  int rotary_dim = 64;
  double base = 10000.0;
  RopeLayout layout = RopeLayout::interleaved;

  void validate() const {
    if (head_dim <= 0 || head_dim % 2 != 0)
      throw std::invalid_argument(fmt::format("RoPE head_dim must be even and > 0, got {}", head_dim));
    if (rotary_dim <= 0 || rotary_dim % 2 != 0 || rotary_dim > head_dim)
      throw std::invalid_argument(
          fmt::format("RoPE rotary_dim must be even and in (0, head_dim={}], got {}", head_dim, rotary_dim));
    if (!(base > 1.0)) throw std::invalid_argument(fmt::format("RoPE base must be > 1, got {}", base));
  }
  std::string describe() const {
    return fmt::format("rope(layout={},d={},rot={},base={})", layout_name(layout), head_dim, rotary_dim,
                       short_number(base));
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

/// How a position encoding enters attention.
enum class AttentionPE {
  none,        ///< plain scaled dot-product attention
  sinusoidal,  ///< PE(pos) (width heads*head_dim) added to the inputs Q, K and V (identity projections)
  rope,        ///< RoPE applied to Q and K of every head
  alibi,       ///< ALiBi slopes added to the scores
  shaw,        ///< Shaw relative term q_i . r(p_j - p_i) added to the scores (before scaling)
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
  }
  return "?";
}

/// Multi-head scaled dot-product attention over Q, K, V of shape (seq, heads, head_dim):
/// O = softmax(scale * S + B) V per head, S the (position-encoded) scores, B the bias, with
/// j > i masked when causal. scale defaults to 1/sqrt(head_dim).
struct AttentionSpec {
  int heads = 2;
  int head_dim = 16;
  bool causal = false;
  std::optional<double> scale;
  AttentionPE pe = AttentionPE::none;
  double pe_base = 10000.0;  ///< base of the sinusoidal PE or of RoPE
  RopeLayout rope_layout = RopeLayout::half_split;
  int shaw_max_distance = 4;

  double effective_scale() const { return scale ? *scale : 1.0 / std::sqrt(double(head_dim)); }
  int width() const { return heads * head_dim; }
  SinusoidalSpec sinusoidal() const { return {width(), pe_base, SinusoidalLayout::interleaved}; }
  RopeSpec rope() const { return {head_dim, head_dim, pe_base, rope_layout}; }
  AlibiSpec alibi() const { return {heads, causal}; }
  ShawSpec shaw() const { return {shaw_max_distance, head_dim}; }

  void validate() const {
    if (heads <= 0 || head_dim <= 0)
      throw std::invalid_argument(fmt::format("attention needs heads, head_dim > 0, got {}x{}", heads, head_dim));
    if (scale && !(std::isfinite(*scale))) throw std::invalid_argument("attention scale must be finite");
    if (pe == AttentionPE::rope) rope().validate();
    if (pe == AttentionPE::sinusoidal) sinusoidal().validate();
    if (pe == AttentionPE::shaw) shaw().validate();
  }
  std::string describe() const {
    return fmt::format("attention(heads={},d={},{},pe={}{})", heads, head_dim, causal ? "causal" : "full", pe_name(pe),
                       scale ? fmt::format(",scale={}", short_number(*scale)) : std::string());
  }
};

}  // namespace pecheck
