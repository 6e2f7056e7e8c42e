// Cases shared by the 2-D relative position bias theorems (Swin, BEiT): a window, patches inside
// it (after the class token, under class_token), and the data seed of the table.
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
#include <string>
#include <vector>

#include "harness/generators.hpp"
#include "harness/measure.hpp"
#include "harness/runner.hpp"
#include "interface/encoder.hpp"

namespace pecheck::props {

/// The patches are drawn as offsets into the window and placed from the spec when the case runs,
/// so a pinned window (harness/pins.hpp rewrites the drawn spec) still holds every patch.
struct RelativeBias2dCase {
  RelativeBias2dSpec spec;
  /// The whole window in raster order, as HF's relative_position_index lays it out, where it has at
  /// most kWholeWindow patches (else the drawn offsets). Drawn only for a window of at most 64
  /// (a selftest's time goes as the square of the patches); a pinned one may then be larger:
  /// BEiT's 14 x 14 at 224 / 16 is 196.
  bool raster = false;
  static constexpr std::int64_t kWholeWindow = 256;
  bool whole_window() const { return raster && std::int64_t{spec.window_rows} * spec.window_cols <= kWholeWindow; }
  std::vector<std::int64_t> drawn_rows, drawn_cols;  ///< otherwise each patch's offsets, reduced mod the window
  std::int64_t row0 = 0, col0 = 0;                   ///< where the window's first patch sits
  std::int64_t class_row = 0, class_col = 0;         ///< the class token's position (unread)
  std::uint32_t data = 0;

  /// Every token's row and column, the class token's first under class_token.
  struct Grid {
    std::vector<std::int64_t> rows, cols;
  };
  Grid grid() const;
  std::string describe() const {
    const Grid g = grid();
    return fmt::format("{} rows=[{}] cols=[{}] data={}", spec.describe(), fmt::join(g.rows, ","),
                       fmt::join(g.cols, ","), data);
  }
  std::vector<std::string> tags() const;
};

/// Swin's 7 x 7 window and BEiT's 14 x 14 often, else any window up to 16 a side, non-square in
/// two cases in five; a class token in one case in three; the patches the whole window in raster
/// order (one case in four, where it has at most 64 patches) or 2 to 24 anywhere in it, the window at row and column 0
/// half the time, else anywhere below 2^24 - 2^12.
rc::Gen<RelativeBias2dCase> relative_bias_2d_case_gen();

/// The case's table (table_rows, heads), values of the dtype from its data seed.
std::vector<float> relative_bias_2d_table(const RelativeBias2dCase& c, DType dt);

/// The encoder's bias (heads, n, n) for the case at rows and cols; failure set when an output is
/// not clean.
std::vector<float> encoder_relative_bias_2d(Encoder& enc, DType dt, const RelativeBias2dCase& c,
                                            const std::vector<float>& table, std::span<const std::int64_t> rows,
                                            std::span<const std::int64_t> cols, std::string& failure);

}  // namespace pecheck::props

namespace pecheck {
// The case type erased once, in relative_bias_2d_cases.cpp (see erased() in harness/runner.hpp).
extern template rc::Gen<AnyCase> erased(rc::Gen<props::RelativeBias2dCase>);
}  // namespace pecheck
