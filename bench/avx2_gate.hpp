// The one check every AVX2 benchmark makes before its first vector instruction.
#pragma once

#include <benchmark/benchmark.h>

#include <string>

#include "impl/avx2/kernels.hpp"

namespace pecheck::bench {

/// True when this CPU runs the AVX2 kernels; otherwise marks the benchmark skipped, with the
/// reason, so the report and the ratio table show "-" instead of a crash (SIGILL).
inline bool avx2_ready(benchmark::State& state) {
  const avx2::Cpu cpu = avx2::availability();
  if (!cpu.ok) state.SkipWithError(("avx2 unavailable: " + cpu.reason).c_str());
  return cpu.ok;
}

}  // namespace pecheck::bench
