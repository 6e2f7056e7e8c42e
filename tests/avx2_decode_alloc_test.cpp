// A decode step allocates nothing (issue 18): RoPE on one token, the call an inference loop makes
// once per generated token, reuses the thread's scratch and the cached frequency table. This
// binary counts every operator new; after one warm-up call, a hundred decode steps at advancing
// positions must make none. (Not a timing: the benchmark rope_decode/* times the step.)
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

#include "impl/avx2/kernels.hpp"
#include "impl/avx512/kernels.hpp"

namespace {
std::atomic<long> allocations{0};
}  // namespace

void* operator new(std::size_t n) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace pecheck {
namespace {

template <class T, auto Rope>
long allocations_of_decode_steps(const RopeSpec& spec) {
  constexpr int kHeads = 32, kDim = 128;
  std::vector<T> q(kHeads * kDim), k(kHeads * kDim);
  const avx2::Heads<T> qk[] = {{q.data(), 1, kHeads, kHeads * kDim, kDim}, {k.data(), 1, kHeads, kHeads * kDim, kDim}};
  std::int64_t position = 4096;
  Rope(spec, std::span<const std::int64_t>(&position, 1), std::span<const avx2::Heads<T>>(qk));  // warms the caches
  const long before = allocations.load();
  for (int step = 0; step < 100; ++step) {
    ++position;
    Rope(spec, std::span<const std::int64_t>(&position, 1), std::span<const avx2::Heads<T>>(qk));
  }
  return allocations.load() - before;
}

TEST(Avx2Decode, ADecodeStepAllocatesNothingAfterTheFirst) {
  if (const avx2::Cpu cpu = avx2::availability(); !cpu.ok) GTEST_SKIP() << "avx2 unavailable: " << cpu.reason;
  const RopeSpec llama{128, 128, 500000.0, RopeLayout::half_split};
  EXPECT_EQ((allocations_of_decode_steps<float, avx2::rope_apply<float>>(llama)), 0);
  EXPECT_EQ((allocations_of_decode_steps<avx2::bf16, avx2::rope_apply<avx2::bf16>>(llama)), 0);
  const RopeSpec gptj{128, 64, 10000.0, RopeLayout::interleaved};  // partial rotary, interleaved
  EXPECT_EQ((allocations_of_decode_steps<float, avx2::rope_apply<float>>(gptj)), 0);
  // The counter is live: the first call of a new spec builds its frequency table.
  const long before = allocations.load();
  std::vector<float> x(128);
  const avx2::Heads<float> one[] = {{x.data(), 1, 1, 128, 128}};
  const std::int64_t p = 7;
  avx2::rope_apply<float>(RopeSpec{128, 128, 12345.0, RopeLayout::half_split}, std::span<const std::int64_t>(&p, 1),
                          one);
  EXPECT_GT(allocations.load() - before, 1);  // x, and the new table
}

TEST(Avx512Decode, ADecodeStepAllocatesNothingAfterTheFirst) {
  if (const avx2::Cpu cpu = avx512::availability(); !cpu.ok) GTEST_SKIP() << "avx512 unavailable: " << cpu.reason;
  const RopeSpec llama{128, 128, 500000.0, RopeLayout::half_split};
  EXPECT_EQ((allocations_of_decode_steps<float, avx512::rope_apply<float>>(llama)), 0);
  EXPECT_EQ((allocations_of_decode_steps<avx2::bf16, avx512::rope_apply<avx2::bf16>>(llama)), 0);
  const RopeSpec gptj{128, 64, 10000.0, RopeLayout::interleaved};
  EXPECT_EQ((allocations_of_decode_steps<float, avx512::rope_apply<float>>(gptj)), 0);
}

}  // namespace
}  // namespace pecheck
