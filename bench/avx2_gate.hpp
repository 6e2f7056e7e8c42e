// The one check every AVX2 or AVX-512 benchmark makes before its first vector instruction.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>
#include <span>
#include <string>

#include "impl/avx2/kernels.hpp"
#include "impl/avx512/kernels.hpp"
#include "impl/parallel.hpp"

namespace pecheck::bench {

/// True when this CPU runs the AVX2 kernels; otherwise marks the benchmark skipped, with the
/// reason, so the report and the ratio table show "-" instead of a crash (SIGILL).
inline bool avx2_ready(benchmark::State& state) {
  const avx2::Cpu cpu = avx2::availability();
  if (!cpu.ok) state.SkipWithError(("avx2 unavailable: " + cpu.reason).c_str());
  return cpu.ok;
}

/// The same for the AVX-512 kernels.
inline bool avx512_ready(benchmark::State& state) {
  const avx2::Cpu cpu = avx512::availability();
  if (!cpu.ok) state.SkipWithError(("avx512 unavailable: " + cpu.reason).c_str());
  return cpu.ok;
}

/// A kernel set's entry points as benchmark template arguments.
enum class Isa { avx2, avx512 };

/// The threads a benchmark's kernel calls (and floors) may use (impl/parallel.hpp): 1 for every
/// single-core row, so that a ratio to a single-core floor means what it says; 2 for the scaling
/// rows, named .../2threads.
inline void use_threads(int threads) {
  parallel::set_threads(threads);
  parallel::set_min_range_work(parallel::kDefaultMinRangeWork);
}

template <Isa I>
bool ready(benchmark::State& state, int threads = 1) {
  use_threads(threads);
  return I == Isa::avx512 ? avx512_ready(state) : avx2_ready(state);
}
template <Isa I, class T>
void rope_apply(const RopeSpec& s, std::span<const std::int64_t> p, std::span<const avx2::Heads<T>> x) {
  if constexpr (I == Isa::avx512)
    avx512::rope_apply<T>(s, p, x);
  else
    avx2::rope_apply<T>(s, p, x);
}
template <Isa I>
void sinusoidal_table(const SinusoidalSpec& s, std::span<const std::int64_t> p, avx2::Rows<float> out) {
  if constexpr (I == Isa::avx512)
    avx512::sinusoidal_table<float>(s, p, out);
  else
    avx2::sinusoidal_table<float>(s, p, out);
}

}  // namespace pecheck::bench
