// Multi-head attention with RoPE (1024 tokens, 8 heads of 64, full mask), fp32. FLOP/s counts
// QK^T and PV only, so it can be held against the FMA peaks (floors.cpp): the AVX2 kernel against
// floor/fma_peak/f32, the AVX-512 one against floor/fma_peak512/f32.
#include <benchmark/benchmark.h>

#include <span>
#include <vector>

#include "bench/avx2_gate.hpp"
#include "bench/bench_data.hpp"
#include "impl/scalar/kernels.hpp"

namespace pecheck::bench {
namespace {

struct AttentionInputs {
  std::vector<float> q, k, v, out;
  std::vector<std::int64_t> positions;
};

AttentionInputs attention_inputs() {
  const AttentionSpec s = attention_spec();
  const std::size_t size = kAttentionTokens * static_cast<std::size_t>(s.width());
  return {uniform_floats(size, 11), uniform_floats(size, 12), uniform_floats(size, 13), std::vector<float>(size),
          positions_from_zero(kAttentionTokens)};
}

void set_flops(benchmark::State& state) {
  state.counters["FLOP/s"] = benchmark::Counter(attention_flops(), benchmark::Counter::kIsIterationInvariantRate);
}

template <Isa I, int Threads = 1>
void attention_vector(benchmark::State& state) {
  if (!ready<I>(state, Threads)) return;
  AttentionInputs x = attention_inputs();
  const AttentionSpec spec = attention_spec();
  for (auto _ : state) {
    if constexpr (I == Isa::avx512)
      avx512::attention<float>(spec, x.positions, x.q.data(), x.k.data(), x.v.data(), nullptr, x.out.data());
    else
      avx2::attention<float>(spec, x.positions, x.q.data(), x.k.data(), x.v.data(), nullptr, x.out.data());
    benchmark::DoNotOptimize(x.out.data());
    benchmark::ClobberMemory();
  }
  set_flops(state);
}

void attention_scalar(benchmark::State& state) {
  AttentionInputs x = attention_inputs();
  const AttentionSpec spec = attention_spec();
  for (auto _ : state) {
    scalar::attention(spec, DType::f32, x.positions, x.q, x.k, x.v, {}, x.out);
    benchmark::DoNotOptimize(x.out.data());
    benchmark::ClobberMemory();
  }
  set_flops(state);
}

BENCHMARK(attention_vector<Isa::avx2>)->Name("attention/f32/avx2")->Unit(benchmark::kMillisecond);
BENCHMARK(attention_vector<Isa::avx512>)->Name("attention/f32/avx512")->Unit(benchmark::kMillisecond);
BENCHMARK(attention_vector<Isa::avx2, 2>)
    ->Name("attention/f32/avx2/2threads")
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(attention_vector<Isa::avx512, 2>)
    ->Name("attention/f32/avx512/2threads")
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(attention_scalar)->Name("attention/f32/scalar")->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace pecheck::bench
