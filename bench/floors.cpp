// The floors each kernel is held against: the same bytes moved by the cheapest code that moves
// them (an in-place read-modify-write pass, a memset) and measured single-core FMA peaks (256-bit
// for the AVX2 kernels, 512-bit for the AVX-512 ones).
// This file is built for the baseline ISA (SSE2): its read-modify-write passes are the scalar
// backend's floors. The vector kernels' are the same passes at their own width (rmw_kernel.hpp):
// one core's bandwidth on an in-place pass grows with the width on some cores (an Intel Xeon,
// family 6 model 207: 19, 23 and 28 GB/s at 16, 32 and 64 bytes), so a 16-byte floor is beaten
// there by the AVX2 and AVX-512 kernels, and every ratio against it would mislead.
#include <benchmark/benchmark.h>
#include <xmmintrin.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "bench/avx2_gate.hpp"
#include "bench/bench_data.hpp"
#include "bench/fma_kernel.hpp"
#include "bench/rmw_kernel.hpp"

namespace pecheck::bench {
namespace {

/// x read back from a volatile: a value the compiler cannot fold, so the pass really multiplies.
/// Not benchmark::DoNotOptimize(x): on a float, Google Benchmark 1.7's "+m,r" constraint let
/// g++ 12 hand the loop a garbage value (0 or 2e-19 seen here instead of -1): repeated passes then
/// drove every entry through the subnormals, and an Intel core's microcode assists made the f32
/// floor 10 to 30 times slower than the kernels it was to bound (0.76 GB/s against 27).
template <class T>
T run_time(T x) {
  volatile T v = x;
  return v;
}

// A constant inner trip count: GCC's -O2 cost model ("very cheap") vectorizes a loop only when
// no scalar epilogue is needed, i.e. its trip count is a known multiple of the vector width.
constexpr std::size_t kBlock = 64;

// Not specialised (noipa), as the vector widths' are not (rmw_kernel.cpp): cloned for the row's constant
// length, g++ 12 warns of an overflow it imagines in the tail loop.
[[gnu::noipa]] void scale_in_place(float* x, std::size_t n, float c, const float* next) {
  std::size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    if (next)
      for (std::size_t j = 0; j < kBlock; j += 16)
        _mm_prefetch(reinterpret_cast<const char*>(next + i + j), _MM_HINT_T1);
    for (std::size_t j = 0; j < kBlock; ++j) x[i + j] *= c;
  }
  for (; i < n; ++i) x[i] *= c;
}

[[gnu::noipa]] void flip_bf16_signs(unsigned short* x, std::size_t n, const unsigned short* next) {
  std::size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    if (next)
      for (std::size_t j = 0; j < kBlock; j += 32)
        _mm_prefetch(reinterpret_cast<const char*>(next + i + j), _MM_HINT_T1);
    for (std::size_t j = 0; j < kBlock; ++j) x[i + j] = static_cast<unsigned short>(x[i + j] ^ 0x8000u);
  }
  for (; i < n; ++i) x[i] = static_cast<unsigned short>(x[i] ^ 0x8000u);
}

/// One read-modify-write floor: `row(x, n, next)` over Q and K token by token, Q's row then K's,
/// as the kernels walk them (two streams at once: on the Xeon above, one array after the other
/// was slower than the kernels), each row asking the next token's same row into L2 as it goes,
/// as the fp32 kernels do (impl/avx2/rope_kernel.cpp, kStreamPrefetch).
/// The tokens split over the threads as the kernels split them (impl/parallel.hpp), each range
/// walking its own tokens: one thread's range is the whole call.
template <class T, class Row>
void rmw_floor(benchmark::State& state, std::vector<T> q, std::vector<T> k, Row row) {
  constexpr std::size_t width = static_cast<std::size_t>(kRopeHeads) * kRopeHeadDim;
  const auto pass = [&](std::size_t t0, std::size_t t1) {
    for (std::size_t t = t0; t < t1; ++t) {
      const bool last = t + 1 == t1;
      row(q.data() + t * width, width, last ? nullptr : q.data() + (t + 1) * width);
      row(k.data() + t * width, width, last ? nullptr : k.data() + (t + 1) * width);
    }
  };
  for (auto _ : state) {
    parallel::for_ranges(kRopeTokens, 2 * width, pass);
    benchmark::DoNotOptimize(q.data());
    benchmark::DoNotOptimize(k.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * rope_bytes(sizeof(T)));
}

/// f32: x *= -1 (|c| = 1: repeated passes neither overflow nor reach subnormals), at the baseline
/// width (the scalar backend's floor) or a kernel's (I).
void rmw_f32(benchmark::State& state) {
  use_threads(1);
  const float c = run_time(-1.0f);
  rmw_floor(state, uniform_floats(kRopeElements, 1), uniform_floats(kRopeElements, 2),
            [c](float* x, std::size_t n, const float* next) { scale_in_place(x, n, c, next); });
}
template <Isa I, int Threads = 1>
void rmw_f32_wide(benchmark::State& state) {
  if (!ready<I>(state, Threads)) return;
  const float c = run_time(-1.0f);
  const auto pass = I == Isa::avx2 ? scale_in_place_avx2 : scale_in_place_avx512;
  rmw_floor(state, uniform_floats(kRopeElements, 1), uniform_floats(kRopeElements, 2),
            [c, pass](float* x, std::size_t n, const float* next) { pass(x, static_cast<long long>(n), c, next); });
}

/// bf16: each value's sign flipped, a pure memory pass over bf16 bit patterns.
void rmw_bf16(benchmark::State& state) {
  use_threads(1);
  rmw_floor(state, bf16_storage<unsigned short>(kRopeElements, 1), bf16_storage<unsigned short>(kRopeElements, 2),
            [](unsigned short* x, std::size_t n, const unsigned short* next) { flip_bf16_signs(x, n, next); });
}
template <Isa I, int Threads = 1>
void rmw_bf16_wide(benchmark::State& state) {
  if (!ready<I>(state, Threads)) return;
  const auto pass = I == Isa::avx2 ? flip_bf16_signs_avx2 : flip_bf16_signs_avx512;
  rmw_floor(state, bf16_storage<unsigned short>(kRopeElements, 1), bf16_storage<unsigned short>(kRopeElements, 2),
            [pass](unsigned short* x, std::size_t n, const unsigned short* next) {
              pass(x, static_cast<long long>(n), next);
            });
}

template <int Threads = 1>
void memset_floor(benchmark::State& state) {
  use_threads(Threads);
  std::vector<float> out(kTableElements);  // value-initialized: every page is mapped before timing
  for (auto _ : state) {
    parallel::for_ranges(kTablePositions, kTableWidth, [&](std::size_t r0, std::size_t r1) {
      std::memset(out.data() + r0 * kTableWidth, 0x3f, (r1 - r0) * kTableWidth * sizeof(float));
    });
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kTableBytes);
}

/// One run of the FMA chains per thread, at once (two threads: the peak of two cores, or of one
/// core's two hardware threads where the machine's two CPUs are siblings).
template <int Threads = 1>
void fma_peak(benchmark::State& state) {
  if (!avx2_ready(state)) return;
  use_threads(Threads);
  // ~0.3 ms a call at 3 GHz: the loop dominates the call; 16 times that over threads, so that
  // waking the pool's worker weighs nothing.
  constexpr long long kRounds = Threads > 1 ? 1 << 20 : 1 << 16;
  for (auto _ : state)
    parallel::for_ranges(Threads, parallel::kDefaultMinRangeWork, [](std::size_t b, std::size_t e) {
      for (std::size_t i = b; i < e; ++i) benchmark::DoNotOptimize(fma_chains(kRounds));
    });
  state.counters["FLOP/s"] = benchmark::Counter(static_cast<double>(kRounds) * kFmaChains * kFlopPerFma * Threads,
                                                benchmark::Counter::kIsIterationInvariantRate);
}

/// The AVX-512 kernels' peak: on a core with 512-bit FMA units (Zen 5, Intel server cores) twice
/// the 256-bit one; on Zen 4, which splits 512-bit operations in two halves, about the same.
template <int Threads = 1>
void fma_peak512(benchmark::State& state) {
  if (!avx512_ready(state)) return;
  use_threads(Threads);
  constexpr long long kRounds = Threads > 1 ? 1 << 20 : 1 << 16;
  for (auto _ : state)
    parallel::for_ranges(Threads, parallel::kDefaultMinRangeWork, [](std::size_t b, std::size_t e) {
      for (std::size_t i = b; i < e; ++i) benchmark::DoNotOptimize(fma_chains512(kRounds));
    });
  state.counters["FLOP/s"] = benchmark::Counter(static_cast<double>(kRounds) * kFmaChains * kFlopPerFma512 * Threads,
                                                benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK(rmw_f32)->Name("floor/rmw/f32")->Unit(benchmark::kMillisecond);
BENCHMARK(rmw_bf16)->Name("floor/rmw/bf16")->Unit(benchmark::kMillisecond);
BENCHMARK(rmw_f32_wide<Isa::avx2>)->Name("floor/rmw/f32/avx2")->Unit(benchmark::kMillisecond);
BENCHMARK(rmw_f32_wide<Isa::avx512>)->Name("floor/rmw/f32/avx512")->Unit(benchmark::kMillisecond);
BENCHMARK(rmw_bf16_wide<Isa::avx2>)->Name("floor/rmw/bf16/avx2")->Unit(benchmark::kMillisecond);
BENCHMARK(rmw_bf16_wide<Isa::avx512>)->Name("floor/rmw/bf16/avx512")->Unit(benchmark::kMillisecond);
BENCHMARK(memset_floor)->Name("floor/memset")->Unit(benchmark::kMillisecond);
BENCHMARK(fma_peak)->Name("floor/fma_peak/f32")->Unit(benchmark::kMicrosecond);
BENCHMARK(fma_peak512)->Name("floor/fma_peak512/f32")->Unit(benchmark::kMicrosecond);
// The floors of the scaling rows: the same passes over two threads, timed by the wall clock (the
// main thread's CPU time would count its own range only).
BENCHMARK(rmw_f32_wide<Isa::avx2, 2>)
    ->Name("floor/rmw/f32/avx2/2threads")
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(rmw_f32_wide<Isa::avx512, 2>)
    ->Name("floor/rmw/f32/avx512/2threads")
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(rmw_bf16_wide<Isa::avx2, 2>)
    ->Name("floor/rmw/bf16/avx2/2threads")
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(rmw_bf16_wide<Isa::avx512, 2>)
    ->Name("floor/rmw/bf16/avx512/2threads")
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(memset_floor<2>)->Name("floor/memset/2threads")->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(fma_peak<2>)->Name("floor/fma_peak/f32/2threads")->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(fma_peak512<2>)->Name("floor/fma_peak512/f32/2threads")->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace pecheck::bench
