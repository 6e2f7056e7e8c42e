// Multimodal RoPE (M-RoPE, Qwen2-VL): every rotary pair turns by the temporal, height or width
// position of its token, the pair's axis chosen by mrope_section (consecutive blocks in Qwen2-VL
// and Qwen2.5-VL, a round-robin in Qwen3-VL). With equal positions on the three axes (text
// tokens) it is plain 1-D RoPE of the same base and width.
#pragma once

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "spec/conventions.hpp"

namespace pecheck {

/// How mrope_section hands the head_dim/2 frequencies (rotary pairs) to the three axes.
enum class MropeAssignment {
  /// Qwen2-VL, Qwen2.5-VL (HF apply_multimodal_rotary_pos_emb, cos.split(mrope_section * 2)):
  /// pairs [0, s0) temporal, [s0, s0 + s1) height, [s0 + s1, d/2) width.
  sectioned,
  /// Qwen3-VL (HF apply_interleaved_mrope): pair j is height when j % 3 == 1 and j < 3 s1, width
  /// when j % 3 == 2 and j < 3 s2, temporal otherwise. s0 is never read: temporal takes the rest.
  interleaved,
};

inline std::string_view assignment_name(MropeAssignment a) {
  return a == MropeAssignment::sectioned ? "sectioned" : "interleaved";
}

/// The three position streams of HF's position_ids of shape (3, batch, seq), in that order.
inline constexpr int kMropeTemporal = 0, kMropeHeight = 1, kMropeWidth = 2;

/// M-RoPE over the whole head (rotary_dim = head_dim, as in every Qwen-VL): pair p has HF's
/// inv_freq_p = base^(-2p/head_dim) and turns by pos[mrope_axis(p)] * inv_freq_p, the pair's dims
/// placed by the layout (half_split is HF's rotate_half; vLLM also runs GPT-J pairs, GLM-4.1V).
struct MropeSpec {
  int head_dim = 128;
  double base = 1000000.0;                       ///< HF rope_theta (Qwen2-VL: 1e6)
  std::array<int, 3> mrope_section{16, 24, 24};  ///< pairs per axis (t, h, w); sums to head_dim/2
  MropeAssignment assignment = MropeAssignment::sectioned;
  RopeLayout layout = RopeLayout::half_split;

  int pairs() const { return head_dim / 2; }

  void validate() const {
    if (head_dim <= 0 || head_dim % 2 != 0)
      throw std::invalid_argument(fmt::format("M-RoPE head_dim must be even and > 0, got {}", head_dim));
    const auto [s0, s1, s2] = mrope_section;
    if (s0 <= 0 || s1 <= 0 || s2 <= 0)
      throw std::invalid_argument(fmt::format("M-RoPE mrope_section entries must be > 0, got {}", section_text()));
    // Sum in 64 bits so that huge entries cannot wrap around to the right total.
    if (std::int64_t{s0} + s1 + s2 != head_dim / 2)
      throw std::invalid_argument(fmt::format("M-RoPE mrope_section {} must sum to head_dim/2 = {}, got {}",
                                              section_text(), head_dim / 2, std::int64_t{s0} + s1 + s2));
    if (!(std::isfinite(base) && base > 1.0))
      throw std::invalid_argument(fmt::format("M-RoPE base (rope_theta) must be finite and > 1, got {}", base));
  }

  /// The 1-D RoPE whose frequencies and pairing M-RoPE uses; what it computes for text tokens.
  RopeSpec rope() const { return {head_dim, head_dim, base, layout}; }

  bool operator==(const MropeSpec&) const = default;
  std::string describe() const {
    return fmt::format("mrope({},layout={},d={},base={},section={}/{}/{})", assignment_name(assignment),
                       layout_name(layout), head_dim, short_number(base), mrope_section[0], mrope_section[1],
                       mrope_section[2]);
  }

 private:
  std::string section_text() const {
    return fmt::format("[{}, {}, {}]", mrope_section[0], mrope_section[1], mrope_section[2]);
  }
};

/// The axis (kMropeTemporal, kMropeHeight or kMropeWidth) whose position turns rotary pair
/// `pair` (its frequency index, 0 <= pair < head_dim/2, in either layout).
constexpr int mrope_axis(const MropeSpec& s, int pair) {
  const auto [s0, s1, s2] = s.mrope_section;
  if (s.assignment == MropeAssignment::sectioned) {
    if (pair < s0) return kMropeTemporal;
    return pair < s0 + s1 ? kMropeHeight : kMropeWidth;
  }
  // HF writes height into slice(1, 3 s1, 3) and width into slice(2, 3 s2, 3) of the temporal row.
  if (pair % 3 == 1 && pair < 3 * s1) return kMropeHeight;
  if (pair % 3 == 2 && pair < 3 * s2) return kMropeWidth;
  return kMropeTemporal;
}

/// How many pairs each axis really gets. Equal to mrope_section for every sectioned spec; an
/// interleaved one differs when 3 s1 > d/2 + 1 or 3 s2 > d/2, where HF's slices run past the row
/// (e.g. [10, 11, 11] at d/2 = 32 behaves as [11, 11, 10]); HF accepts such specs, and so do we.
constexpr std::array<int, 3> mrope_pair_counts(const MropeSpec& s) {
  std::array<int, 3> counts{};
  for (int p = 0; p < s.head_dim / 2; ++p) ++counts[static_cast<std::size_t>(mrope_axis(s, p))];
  return counts;
}

}  // namespace pecheck
