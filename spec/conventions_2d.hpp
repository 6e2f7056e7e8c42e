// The 2-D conventions for images (ViT patches at (row, col)): a sinusoid per axis, and 2-D RoPE.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

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

/// 2-D RoPE, the axial scheme (Heo et al. 2024, RoPE-Axial): dims [0, d/2) of a head rotated as 1-D RoPE of
/// width d/2 at the row, dims [d/2, d) at the column, same base and layout in each half.
struct Rope2dSpec {
  int head_dim = 64;
  double base = 100.0;
  RopeLayout layout = RopeLayout::interleaved;

  void validate() const {
    if (head_dim <= 0 || head_dim % 4 != 0)
      throw std::invalid_argument(fmt::format("2-D RoPE head_dim must be a positive multiple of 4, got {}", head_dim));
    axis().validate();
  }
  /// The 1-D RoPE each half of a head gets.
  RopeSpec axis() const { return {head_dim / 2, head_dim / 2, base, layout}; }
  std::string describe() const {
    return fmt::format("rope2d(layout={},d={},base={})", layout_name(layout), head_dim, short_number(base));
  }
};

}  // namespace pecheck
