// RoPE in place on Q and K (4096 tokens x 32 heads x 128, half-split, theta 500000): the AVX2 and
// AVX-512 kernels on native storage against the scalar baseline. Both rotate the same buffers every
// iteration; rotations keep magnitudes, so the data never drifts towards overflow or zero.
#include <benchmark/benchmark.h>

#include <span>
#include <vector>

#include "bench/avx2_gate.hpp"
#include "bench/bench_data.hpp"
#include "impl/scalar/kernels.hpp"

namespace pecheck::bench {
namespace {

template <Isa I, class T, int Threads = 1>
void rope_vector(benchmark::State& state) {
  if (!ready<I>(state, Threads)) return;
  std::vector<T> q = native_values<T>(kRopeElements, 1), k = native_values<T>(kRopeElements, 2);
  const std::vector<std::int64_t> positions = positions_from_zero(kRopeTokens);
  const std::ptrdiff_t token_stride = kRopeHeads * kRopeHeadDim;
  const avx2::Heads<T> qk[] = {{q.data(), kRopeTokens, kRopeHeads, token_stride, kRopeHeadDim},
                               {k.data(), kRopeTokens, kRopeHeads, token_stride, kRopeHeadDim}};
  const RopeSpec spec = rope_spec();
  for (auto _ : state) {
    rope_apply<I, T>(spec, positions, qk);
    benchmark::DoNotOptimize(q.data());
    benchmark::DoNotOptimize(k.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * rope_bytes(sizeof(T)));
}

template <DType dt>
void rope_scalar(benchmark::State& state) {
  std::vector<float> q = dt == DType::f32 ? uniform_floats(kRopeElements, 1) : bf16_valued_floats(kRopeElements, 1);
  std::vector<float> k = dt == DType::f32 ? uniform_floats(kRopeElements, 2) : bf16_valued_floats(kRopeElements, 2);
  const std::vector<std::int64_t> positions = positions_from_zero(kRopeTokens);
  const RopeSpec spec = rope_spec();
  for (auto _ : state) {
    scalar::rope_apply(spec, dt, kRopeHeads, positions, q);
    scalar::rope_apply(spec, dt, kRopeHeads, positions, k);
    benchmark::DoNotOptimize(q.data());
    benchmark::DoNotOptimize(k.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * rope_bytes(dt == DType::f32 ? 4 : 2));
}

BENCHMARK(rope_vector<Isa::avx2, float>)->Name("rope_inplace/f32/avx2")->Unit(benchmark::kMillisecond);
BENCHMARK(rope_vector<Isa::avx2, avx2::bf16>)->Name("rope_inplace/bf16/avx2")->Unit(benchmark::kMillisecond);
BENCHMARK(rope_vector<Isa::avx512, float>)->Name("rope_inplace/f32/avx512")->Unit(benchmark::kMillisecond);
BENCHMARK(rope_vector<Isa::avx512, avx2::bf16>)->Name("rope_inplace/bf16/avx512")->Unit(benchmark::kMillisecond);
// Scaling: the same calls split over two threads (tokens), against the floors' two-thread passes.
BENCHMARK(rope_vector<Isa::avx2, float, 2>)
    ->Name("rope_inplace/f32/avx2/2threads")
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(rope_vector<Isa::avx2, avx2::bf16, 2>)
    ->Name("rope_inplace/bf16/avx2/2threads")
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(rope_vector<Isa::avx512, float, 2>)
    ->Name("rope_inplace/f32/avx512/2threads")
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(rope_vector<Isa::avx512, avx2::bf16, 2>)
    ->Name("rope_inplace/bf16/avx512/2threads")
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
// One scalar iteration takes around a second: the default min time already runs it only once or
// twice per repetition, and a name without an /iterations: suffix keeps the table's pairing simple.
BENCHMARK(rope_scalar<DType::f32>)->Name("rope_inplace/f32/scalar")->Unit(benchmark::kMillisecond);
BENCHMARK(rope_scalar<DType::bf16>)->Name("rope_inplace/bf16/scalar")->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace pecheck::bench
