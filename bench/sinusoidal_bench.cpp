// The fp32 sinusoidal table (32768 positions x 1024, interleaved, base 10000): 128 MiB written,
// so the AVX2 and AVX-512 kernels are compared with floor/memset of the same bytes (floors.cpp).
#include <benchmark/benchmark.h>

#include <vector>

#include "bench/avx2_gate.hpp"
#include "bench/bench_data.hpp"
#include "impl/scalar/kernels.hpp"

namespace pecheck::bench {
namespace {

template <Isa I, int Threads = 1>
void table_vector(benchmark::State& state) {
  if (!ready<I>(state, Threads)) return;
  std::vector<float> out(kTableElements);  // value-initialized: every page is mapped before timing
  const std::vector<std::int64_t> positions = positions_from_zero(kTablePositions);
  const avx2::Rows<float> rows{out.data(), kTablePositions, kTableWidth, kTableWidth};
  const SinusoidalSpec spec = table_spec();
  for (auto _ : state) {
    sinusoidal_table<I>(spec, positions, rows);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kTableBytes);
}

void table_scalar(benchmark::State& state) {
  std::vector<float> out(kTableElements);
  const std::vector<std::int64_t> positions = positions_from_zero(kTablePositions);
  const SinusoidalSpec spec = table_spec();
  for (auto _ : state) {
    scalar::sinusoidal_table(spec, DType::f32, positions, out);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kTableBytes);
}

BENCHMARK(table_vector<Isa::avx2>)->Name("sinusoidal_table/f32/avx2")->Unit(benchmark::kMillisecond);
BENCHMARK(table_vector<Isa::avx512>)->Name("sinusoidal_table/f32/avx512")->Unit(benchmark::kMillisecond);
BENCHMARK(table_vector<Isa::avx2, 2>)
    ->Name("sinusoidal_table/f32/avx2/2threads")
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(table_vector<Isa::avx512, 2>)
    ->Name("sinusoidal_table/f32/avx512/2threads")
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(table_scalar)->Name("sinusoidal_table/f32/scalar")->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace pecheck::bench
