// The AVX2 and AVX-512 sinusoidal tables write a large fp32 table (over 16 MiB) with non-temporal
// stores (impl/avx2/position_kernels.cpp and impl/avx512/position_kernels.cpp, streams()). That path runs only on sizes
// the property tests never draw, so it is checked here: every row of a 32 MiB table, in both layouts, must be bitwise
// the row the same kernel writes through plain stores when asked for that row alone.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "impl/avx2/kernels.hpp"
#include "impl/avx512/kernels.hpp"

namespace pecheck {
namespace {

constexpr std::size_t kRows = 8192, kWidth = 1024;  // 32 MiB of fp32: past the streaming threshold

using TableFn = void (*)(const SinusoidalSpec&, std::span<const std::int64_t>, avx2::Rows<float>);

void expect_rows_match_single_row_calls(TableFn sinusoidal_table, SinusoidalLayout layout) {
  const SinusoidalSpec spec{static_cast<int>(kWidth), 10000.0, layout};
  std::vector<std::int64_t> positions(kRows);
  for (std::size_t t = 0; t < kRows; ++t) positions[t] = static_cast<std::int64_t>(t * 2053 % 16777216);
  std::vector<float> table(kRows * kWidth, -1.0f);
  ASSERT_EQ(reinterpret_cast<std::uintptr_t>(table.data()) % 16, 0u);  // the streaming path's condition
  sinusoidal_table(spec, positions, {table.data(), kRows, kWidth, static_cast<std::ptrdiff_t>(kWidth)});
  std::vector<float> row(kWidth);
  std::size_t differing_rows = 0;
  for (std::size_t t = 0; t < kRows; t += 97) {  // 85 rows across the table, first and last included
    const std::int64_t p = positions[t];
    sinusoidal_table(spec, std::span<const std::int64_t>(&p, 1),
                     {row.data(), 1, kWidth, static_cast<std::ptrdiff_t>(kWidth)});
    differing_rows += std::memcmp(row.data(), table.data() + t * kWidth, kWidth * sizeof(float)) != 0;
  }
  const std::int64_t last = positions.back();
  sinusoidal_table(spec, std::span<const std::int64_t>(&last, 1),
                   {row.data(), 1, kWidth, static_cast<std::ptrdiff_t>(kWidth)});
  differing_rows += std::memcmp(row.data(), table.data() + (kRows - 1) * kWidth, kWidth * sizeof(float)) != 0;
  EXPECT_EQ(differing_rows, 0u);
  // Non-trivial: the rows hold sinusoids, not the fill value.
  EXPECT_NE(table[kWidth * 5 + 1], -1.0f);
}

TEST(Avx2Stream, ALargeTableWrittenByNonTemporalStoresEqualsRowByRowCalls) {
  if (const avx2::Cpu cpu = avx2::availability(); !cpu.ok) GTEST_SKIP() << "avx2 unavailable: " << cpu.reason;
  expect_rows_match_single_row_calls(avx2::sinusoidal_table<float>, SinusoidalLayout::interleaved);
  expect_rows_match_single_row_calls(avx2::sinusoidal_table<float>, SinusoidalLayout::concatenated);
}

TEST(Avx512Stream, ALargeTableWrittenByNonTemporalStoresEqualsRowByRowCalls) {
  if (const avx2::Cpu cpu = avx512::availability(); !cpu.ok) GTEST_SKIP() << "avx512 unavailable: " << cpu.reason;
  expect_rows_match_single_row_calls(avx512::sinusoidal_table<float>, SinusoidalLayout::interleaved);
  expect_rows_match_single_row_calls(avx512::sinusoidal_table<float>, SinusoidalLayout::concatenated);
}

}  // namespace
}  // namespace pecheck
