// The floors each kernel is held against: the same bytes moved by the cheapest code that moves
// them (an in-place read-modify-write pass, a memset) and measured single-core FMA peaks (256-bit
// for the AVX2 kernels, 512-bit for the AVX-512 ones).
// Built for the baseline ISA (SSE2): one core's memory bandwidth is bounded by outstanding cache
// misses, not by vector width, so a 16-byte loop already reaches it.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "bench/avx2_gate.hpp"
#include "bench/bench_data.hpp"
#include "bench/fma_kernel.hpp"

namespace pecheck::bench {
namespace {

// A constant inner trip count: GCC's -O2 cost model ("very cheap") vectorizes a loop only when
// no scalar epilogue is needed, i.e. its trip count is a known multiple of the vector width.
constexpr std::size_t kBlock = 64;

void scale_in_place(float* x, std::size_t n, float c) {
  std::size_t i = 0;
  for (; i + kBlock <= n; i += kBlock)
    for (std::size_t j = 0; j < kBlock; ++j) x[i + j] *= c;
  for (; i < n; ++i) x[i] *= c;
}

void xor_in_place(std::uint16_t* x, std::size_t n, std::uint16_t mask) {
  std::size_t i = 0;
  for (; i + kBlock <= n; i += kBlock)
    for (std::size_t j = 0; j < kBlock; ++j) x[i + j] = static_cast<std::uint16_t>(x[i + j] ^ mask);
  for (; i < n; ++i) x[i] = static_cast<std::uint16_t>(x[i] ^ mask);
}

void rmw_f32(benchmark::State& state) {
  std::vector<float> q = uniform_floats(kRopeElements, 1), k = uniform_floats(kRopeElements, 2);
  float c = -1.0f;              // |c| = 1: repeated passes neither overflow nor reach subnormals
  benchmark::DoNotOptimize(c);  // a run-time value: the compiler must really multiply
  for (auto _ : state) {
    scale_in_place(q.data(), q.size(), c);
    scale_in_place(k.data(), k.size(), c);
    benchmark::DoNotOptimize(q.data());
    benchmark::DoNotOptimize(k.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * rope_bytes(sizeof(float)));
}

void rmw_bf16(benchmark::State& state) {
  std::vector<std::uint16_t> q = bf16_storage<std::uint16_t>(kRopeElements, 1),
                             k = bf16_storage<std::uint16_t>(kRopeElements, 2);
  std::uint16_t mask = 0x8000;  // the sign bit: a pure memory pass over bf16 values
  benchmark::DoNotOptimize(mask);
  for (auto _ : state) {
    xor_in_place(q.data(), q.size(), mask);
    xor_in_place(k.data(), k.size(), mask);
    benchmark::DoNotOptimize(q.data());
    benchmark::DoNotOptimize(k.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * rope_bytes(sizeof(std::uint16_t)));
}

void memset_floor(benchmark::State& state) {
  std::vector<float> out(kTableElements);  // value-initialized: every page is mapped before timing
  for (auto _ : state) {
    std::memset(out.data(), 0x3f, kTableBytes);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kTableBytes);
}

void fma_peak(benchmark::State& state) {
  if (!avx2_ready(state)) return;
  constexpr long long kRounds = 1 << 16;  // ~0.3 ms a call at 3 GHz: the loop dominates the call
  for (auto _ : state) benchmark::DoNotOptimize(fma_chains(kRounds));
  state.counters["FLOP/s"] = benchmark::Counter(static_cast<double>(kRounds) * kFmaChains * kFlopPerFma,
                                                benchmark::Counter::kIsIterationInvariantRate);
}

/// The AVX-512 kernels' peak: on a core with 512-bit FMA units (Zen 5, Intel server cores) twice
/// the 256-bit one; on Zen 4, which splits 512-bit operations in two halves, about the same.
void fma_peak512(benchmark::State& state) {
  if (!avx512_ready(state)) return;
  constexpr long long kRounds = 1 << 16;
  for (auto _ : state) benchmark::DoNotOptimize(fma_chains512(kRounds));
  state.counters["FLOP/s"] = benchmark::Counter(static_cast<double>(kRounds) * kFmaChains * kFlopPerFma512,
                                                benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK(rmw_f32)->Name("floor/rmw/f32")->Unit(benchmark::kMillisecond);
BENCHMARK(rmw_bf16)->Name("floor/rmw/bf16")->Unit(benchmark::kMillisecond);
BENCHMARK(memset_floor)->Name("floor/memset")->Unit(benchmark::kMillisecond);
BENCHMARK(fma_peak)->Name("floor/fma_peak/f32")->Unit(benchmark::kMicrosecond);
BENCHMARK(fma_peak512)->Name("floor/fma_peak512/f32")->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace pecheck::bench
