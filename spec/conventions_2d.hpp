// The 2-D conventions for images (ViT patches at (row, col)): a sinusoid per axis, 2-D RoPE, and
// the 2-D relative position bias table.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "spec/conventions.hpp"

namespace pecheck {

/// 2-D sinusoid: the first d/2 channels are the 1-D sinusoid of width d/2 of the first coordinate
/// (the row), the last d/2 that of the second (the column), each laid out by `layout`. MAE's
/// get_2d_sincos_pos_embed builds its grid with meshgrid(grid_w, grid_h) ("here w goes first"),
/// so its first half encodes the column: describe it with rows and cols exchanged.
struct Sinusoidal2dSpec {
  int d_model = 64;
  double base = 10000.0;
  SinusoidalLayout layout = SinusoidalLayout::concatenated;

  void validate() const {
    if (d_model <= 0 || d_model % 4 != 0)
      throw std::invalid_argument(
          fmt::format("2-D sinusoid d_model must be a positive multiple of 4, got {}", d_model));
    axis().validate();
  }
  /// The 1-D sinusoid each axis uses.
  SinusoidalSpec axis() const { return {d_model / 2, base, layout}; }
  std::string describe() const {
    return fmt::format("sinusoidal2d(layout={},d={},base={})", layout_name(layout), d_model, short_number(base));
  }
};

/// Which dims of a head 2-D RoPE pairs. per_half: RoPE-Axial (Heo et al. 2024), each half-head a 1-D
/// RoPE of width d/2 in the layout, the first by the row and the second by the column. whole_head:
/// Qwen2-VL's vision tower (and the transformers 5 vision towers built like it), one 1-D RoPE over
/// the whole head in the layout, its d/2 pair angles the row's d/4 frequencies then the column's.
/// The interleaved layout pairs (2p, 2p + 1) either way, so the two differ only in half_split:
/// whole_head's row pairs are (p, p + d/2), per_half's (p, p + d/4).
enum class Rope2dPairing { per_half, whole_head };

inline std::string_view pairing_name(Rope2dPairing p) {
  return p == Rope2dPairing::per_half ? "per_half" : "whole_head";
}

/// How 2-D RoPE gives its axes their frequencies. shared: both axes base^(-4k/d), k < d/4, those of
/// a 1-D RoPE of width d/2 (RoPE-Axial, Qwen2-VL's vision tower, EVA). split: Pixtral's, the d/2
/// frequencies of one RoPE of width d, base^(-2i/d), dealt out between the axes: the row takes the
/// even-indexed ones (base^(-4k/d), the shared ones) and the column the odd-indexed ones
/// (base^(-(4k+2)/d)), so the column's axis is the shared one slowed by base^(2/d).
enum class Rope2dFrequencies { shared, split };

inline std::string_view frequencies_name(Rope2dFrequencies f) {
  return f == Rope2dFrequencies::shared ? "shared" : "split";
}

/// 2-D RoPE, axial: pairs rotated by the row or the column (pairing), each axis a 1-D RoPE of width
/// d/2 with the frequencies `frequencies` gives it.
struct Rope2dSpec {
  int head_dim = 64;
  double base = 100.0;
  RopeLayout layout = RopeLayout::interleaved;
  Rope2dPairing pairing = Rope2dPairing::per_half;
  Rope2dFrequencies frequencies = Rope2dFrequencies::shared;

  void validate() const {
    if (head_dim <= 0 || head_dim % 4 != 0)
      throw std::invalid_argument(fmt::format("2-D RoPE head_dim must be a positive multiple of 4, got {}", head_dim));
    axis(false).validate();
    axis(true).validate();
  }
  /// The 1-D RoPE of width d/2 an axis uses (per_half: its half of a head gets it): the row's
  /// (by_column false) at base^(-4k/d); the column's the same, or under split frequencies slowed
  /// by base^(2/d), stated as RoPE's linear rule with that factor (a double: its rounding moves a
  /// frequency by 2^-53 relative, far below any bound).
  RopeSpec axis(bool by_column = false) const {
    RopeSpec a{head_dim / 2, head_dim / 2, base, layout};
    if (by_column && frequencies == Rope2dFrequencies::split)
      a.scaling = RopeScaling{.kind = RopeScalingKind::linear, .factor = std::pow(base, 2.0 / head_dim)};
    return a;
  }
  /// Whether the row pairs are (p, p + d/2), not (p, p + d/4): the two pairings differ.
  bool pairs_whole_head() const { return pairing == Rope2dPairing::whole_head && layout == RopeLayout::half_split; }
  std::string describe() const {
    return fmt::format("rope2d(layout={},d={},base={}{}{})", layout_name(layout), head_dim, short_number(base),
                       pairing == Rope2dPairing::per_half ? "" : ",pairing=whole_head",
                       frequencies == Rope2dFrequencies::shared ? "" : ",frequencies=split");
  }
};

/// A 2-D relative position bias table (Swin, Liu et al. 2021; BEiT, Bao et al. 2022): per head, one
/// learned bias for each offset (dr, dc) = (row_i - row_j, col_i - col_j) of a query patch i from a
/// key patch j inside a window of window_rows x window_cols patches (query minus key, as HF's
/// relative_coords = coords[:, :, None] - coords[:, None, :]). The offsets' rows of the table come
/// first, row-major over dr then dc: offset_row(dr, dc) = (dr + window_rows - 1) (2 window_cols - 1) +
/// dc + window_cols - 1, HF's relative_position_index. With class_token (BEiT, Data2Vec-Vision) the
/// call's first token is the class token, whose row and column positions are unread, and three
/// rows follow the offsets': the class token's queries read table_rows() - 3, the keys it is seen
/// as read table_rows() - 2, and its own score table_rows() - 1.
struct RelativeBias2dSpec {
  int heads = 4;
  int window_rows = 7;
  int window_cols = 7;
  bool class_token = false;

  /// The table's rows that offsets read: (2 window_rows - 1)(2 window_cols - 1).
  int offset_rows() const { return (2 * window_rows - 1) * (2 * window_cols - 1); }
  int table_rows() const { return offset_rows() + (class_token ? 3 : 0); }
  /// The table row of offset (dr, dc); |dr| < window_rows and |dc| < window_cols.
  int offset_row(std::int64_t dr, std::int64_t dc) const {
    return static_cast<int>((dr + window_rows - 1) * (2 * window_cols - 1) + dc + window_cols - 1);
  }
  /// The row a class-token score reads: its queries table_rows() - 3, the keys it is seen as
  /// table_rows() - 2, its own score table_rows() - 1 (HF's writes to index[0, :], index[:, 0],
  /// index[0, 0], in that order).
  int class_row(bool query_is_class, bool key_is_class) const {
    return offset_rows() + (query_is_class ? (key_is_class ? 2 : 0) : 1);
  }
  /// The row the score of token i (the query) against token j (the key) reads.
  int table_row(std::span<const std::int64_t> rows, std::span<const std::int64_t> cols, std::size_t i,
                std::size_t j) const {
    if (class_token && (i == 0 || j == 0)) return class_row(i == 0, j == 0);
    return offset_row(rows[i] - rows[j], cols[i] - cols[j]);
  }
  void validate() const {
    if (heads <= 0) throw std::invalid_argument(fmt::format("2-D relative bias needs heads > 0, got {}", heads));
    // 2^12 patches a side keeps the table's row count (about 2^26) an int.
    if (window_rows <= 0 || window_cols <= 0 || window_rows > 4096 || window_cols > 4096)
      throw std::invalid_argument(fmt::format("2-D relative bias window must be 1 to 4096 patches a side, got {}x{}",
                                              window_rows, window_cols));
  }
  std::string describe() const {
    return fmt::format("relative_bias_2d(heads={},window={}x{}{})", heads, window_rows, window_cols,
                       class_token ? ",class_token" : "");
  }
};

/// Exchanges the second and third quarters of every head of x (heads of head_dim values). In the
/// half_split layout this maps whole_head's row pair (p, p + d/2) and column pair (d/4 + p, 3d/4 + p)
/// onto per_half's (p, d/4 + p) and (d/2 + p, 3d/4 + p), and back: it is its own inverse.
template <class T>
void exchange_middle_quarters(std::span<T> x, int head_dim) {
  const std::size_t hd = static_cast<std::size_t>(head_dim), q = hd / 4;
  for (std::size_t head = 0; head + hd <= x.size(); head += hd)
    std::swap_ranges(x.begin() + static_cast<std::ptrdiff_t>(head + q),
                     x.begin() + static_cast<std::ptrdiff_t>(head + 2 * q),
                     x.begin() + static_cast<std::ptrdiff_t>(head + 2 * q));
}

}  // namespace pecheck
