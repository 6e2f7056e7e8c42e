// The 2-D relative bias's rows (RelativeBias2dSpec::table_row, read by the oracle in
// reference/relative_bias_2d.hpp and by every kernel) against HF's relative_position_index
// built step by step as modeling_swin.py and modeling_beit.py build it (meshgrid "ij", flatten,
// coords[:, :, None] - coords[:, None, :], shift each axis by window - 1, the row offset times
// 2 * window_size[1] - 1, BEiT's three class-token rows), for square and non-square windows; then
// the scalar kernel against the oracle, and the call's own checks on the window and the table.

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "impl/scalar/kernels.hpp"
#include "interface/operations.hpp"
#include "reference/relative_bias_2d.hpp"

namespace {

using namespace pecheck;
using Positions = std::vector<std::int64_t>;

/// HF's relative_position_index for a window (rows wh, cols ww), (A + c) x (A + c) for A = wh ww
/// patches and c = 1 with the class token.
std::vector<std::vector<int>> hf_index(int wh, int ww, bool class_token) {
  std::vector<int> ch, cw;  // torch.flatten(torch.stack(torch.meshgrid(arange(wh), arange(ww), "ij")), 1)
  for (int h = 0; h < wh; ++h)
    for (int w = 0; w < ww; ++w) ch.push_back(h), cw.push_back(w);
  const int A = wh * ww, c = class_token ? 1 : 0, num_relative_distance = (2 * wh - 1) * (2 * ww - 1) + 3;
  std::vector<std::vector<int>> index(A + c, std::vector<int>(A + c, 0));
  for (int i = 0; i < A; ++i)
    for (int j = 0; j < A; ++j) {
      int dh = ch[i] - ch[j], dw = cw[i] - cw[j];  // relative_coords[i, j] = coords[:, i] - coords[:, j]
      dh += wh - 1;                                // relative_coords[:, :, 0] += window_size[0] - 1
      dw += ww - 1;                                // relative_coords[:, :, 1] += window_size[1] - 1
      dh *= 2 * ww - 1;                            // relative_coords[:, :, 0] *= 2 * window_size[1] - 1
      index[i + c][j + c] = dh + dw;               // relative_coords.sum(-1)
    }
  if (class_token) {
    for (int j = 0; j < A + 1; ++j) index[0][j] = num_relative_distance - 3;  // cls to token
    for (int i = 0; i < A + 1; ++i) index[i][0] = num_relative_distance - 2;  // token to cls
    index[0][0] = num_relative_distance - 1;                                  // cls to cls
  }
  return index;
}

/// The whole window in raster order from (r0, c0), after a class token at (7, 7) when asked.
void raster(int wh, int ww, bool class_token, std::int64_t r0, std::int64_t c0, Positions& rows, Positions& cols) {
  if (class_token) rows.push_back(7), cols.push_back(7);
  for (int k = 0; k < wh * ww; ++k) rows.push_back(r0 + k / ww), cols.push_back(c0 + k % ww);
}

TEST(RelativeBias2dReference, RowsAreHfsRelativePositionIndexForEveryWindowShape) {
  for (const auto& [wh, ww] : {std::pair{7, 7}, {2, 3}, {3, 2}, {1, 5}, {4, 1}, {1, 1}})
    for (const bool cls : {false, true}) {
      const RelativeBias2dSpec s{2, wh, ww, cls};
      Positions rows, cols;
      raster(wh, ww, cls, 100, 2000, rows, cols);
      const auto want = hf_index(wh, ww, cls);
      for (std::size_t i = 0; i < rows.size(); ++i)
        for (std::size_t j = 0; j < rows.size(); ++j)
          ASSERT_EQ(s.table_row(rows, cols, i, j), want[i][j])
              << wh << "x" << ww << (cls ? " with the class token" : "") << " query " << i << " key " << j;
      EXPECT_EQ(s.table_rows(), (2 * wh - 1) * (2 * ww - 1) + (cls ? 3 : 0));
    }
}

TEST(RelativeBias2dReference, ScalarKernelReadsTheOraclesEntries) {
  const RelativeBias2dSpec s{3, 2, 3, true};
  Positions rows, cols;
  raster(2, 3, true, 5, 9, rows, cols);
  std::vector<float> table(static_cast<std::size_t>(s.table_rows() * s.heads));
  for (std::size_t e = 0; e < table.size(); ++e) table[e] = 0.25f * static_cast<float>(e) - 3.0f;
  const std::size_t n = rows.size();
  std::vector<float> out(static_cast<std::size_t>(s.heads) * n * n);
  scalar::relative_bias_2d(s, DType::f32, table, rows, cols, out);
  const std::vector<float> want = ref::relative_bias_2d_tensor<float>(s, table, rows, cols);
  EXPECT_EQ(out, want);
}

TEST(RelativeBias2dReference, PatchesSpanningPastTheWindowAreRefusedWithTheAxisNamed) {
  const RelativeBias2dSpec s{1, 2, 3, false};
  const std::vector<float> table(static_cast<std::size_t>(s.table_rows()), 0.5f);
  std::vector<float> out(4);
  const Positions rows{10, 12}, cols{0, 1};
  try {
    RelativeBias2d{s, DType::f32, table, rows, cols, out}.check();
    FAIL() << "rows 10 and 12 span 3 > a window of 2 rows";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "relative_bias_2d rows span 10 to 12, beyond a window of 2 rows");
  }
  // The class token's position is not read: any value passes.
  const RelativeBias2dSpec with_class{1, 2, 3, true};
  const std::vector<float> table_c(static_cast<std::size_t>(with_class.table_rows()), 0.5f);
  std::vector<float> out3(9);
  const Positions rows3{1 << 20, 10, 11}, cols3{-5, 0, 2};
  EXPECT_NO_THROW((RelativeBias2d{with_class, DType::f32, table_c, rows3, cols3, out3}.check()));
  const Positions far{0, std::int64_t{1} << 62}, far_cols{0, 0};
  EXPECT_THROW((RelativeBias2d{RelativeBias2dSpec{1, 2, 3, false}, DType::f32, table, far, far_cols, out}.check()),
               std::invalid_argument);
}

TEST(RelativeBias2dReference, ATableOfTheWrongShapeAndAnEmptyWindowAreRefused) {
  const RelativeBias2dSpec s{2, 2, 3, false};
  const std::vector<float> short_table(static_cast<std::size_t>(s.table_rows() * s.heads - 1), 0.5f);
  std::vector<float> out(2 * 4);
  const Positions rows{0, 1}, cols{0, 1};
  try {
    RelativeBias2d{s, DType::f32, short_table, rows, cols, out}.check();
    FAIL() << "a table one entry short";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "relative_bias_2d table has 29 elements, expected 30");
  }
  EXPECT_THROW((RelativeBias2dSpec{2, 0, 3, false}.validate()), std::invalid_argument);
  EXPECT_THROW((RelativeBias2dSpec{0, 2, 3, false}.validate()), std::invalid_argument);
}

}  // namespace
