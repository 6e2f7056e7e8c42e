// The AVX2 sinusoidal table writes a large fp32 table (over 16 MiB) with non-temporal stores
// (impl/avx2/position_kernels.cpp, streams()). That path runs only on sizes the property tests
// never draw, so it is checked here: every row of a 32 MiB table, in both layouts, must be
// bitwise the row the same kernel writes through plain stores when asked for that row alone.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "impl/avx2/kernels.hpp"

namespace pecheck {
namespace {

constexpr std::size_t kRows = 8192, kWidth = 1024;  // 32 MiB of fp32: past the streaming threshold

void expect_rows_match_single_row_calls(SinusoidalLayout layout) {
  const SinusoidalSpec spec{static_cast<int>(kWidth), 10000.0, layout};
  std::vector<std::int64_t> positions(kRows);
  for (std::size_t t = 0; t < kRows; ++t) positions[t] = static_cast<std::int64_t>(t * 2053 % 16777216);
  std::vector<float> table(kRows * kWidth, -1.0f);
  ASSERT_EQ(reinterpret_cast<std::uintptr_t>(table.data()) % 16, 0u);  // the streaming path's condition
  avx2::sinusoidal_table<float>(spec, positions, {table.data(), kRows, kWidth, static_cast<std::ptrdiff_t>(kWidth)});
  std::vector<float> row(kWidth);
  std::size_t differing_rows = 0;
  for (std::size_t t = 0; t < kRows; t += 97) {  // 85 rows across the table, first and last included
    const std::int64_t p = positions[t];
    avx2::sinusoidal_table<float>(spec, std::span<const std::int64_t>(&p, 1),
                                  {row.data(), 1, kWidth, static_cast<std::ptrdiff_t>(kWidth)});
    differing_rows += std::memcmp(row.data(), table.data() + t * kWidth, kWidth * sizeof(float)) != 0;
  }
  const std::int64_t last = positions.back();
  avx2::sinusoidal_table<float>(spec, std::span<const std::int64_t>(&last, 1),
                                {row.data(), 1, kWidth, static_cast<std::ptrdiff_t>(kWidth)});
  differing_rows += std::memcmp(row.data(), table.data() + (kRows - 1) * kWidth, kWidth * sizeof(float)) != 0;
  EXPECT_EQ(differing_rows, 0u);
  // Non-trivial: the rows hold sinusoids, not the fill value.
  EXPECT_NE(table[kWidth * 5 + 1], -1.0f);
}

TEST(Avx2Stream, ALargeTableWrittenByNonTemporalStoresEqualsRowByRowCalls) {
  if (const avx2::Cpu cpu = avx2::availability(); !cpu.ok) GTEST_SKIP() << "avx2 unavailable: " << cpu.reason;
  expect_rows_match_single_row_calls(SinusoidalLayout::interleaved);
  expect_rows_match_single_row_calls(SinusoidalLayout::concatenated);
}

}  // namespace
}  // namespace pecheck
