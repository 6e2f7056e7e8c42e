// A decode step: RoPE on one token's Q and K (32 heads x 128, theta 500000), the shape an inference
// loop calls once per generated token, against a copy of the same bytes in the same run. Each
// iteration advances the position by one, as decoding does, so every call forms its cos and sin
// afresh; the buffers stay in L1, so what is timed is the call's own work and overhead (checks,
// the frequency table lookup, scratch), which a prefill of 4096 tokens amortizes and this does not.
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "bench/avx2_gate.hpp"
#include "bench/bench_data.hpp"

namespace pecheck::bench {
namespace {

constexpr std::size_t kDecodeElements = static_cast<std::size_t>(kRopeHeads) * kRopeHeadDim;  ///< per tensor
/// Q and K, read and written once: what the copy floor moves too (read one buffer, write another).
template <class T>
constexpr std::int64_t kDecodeBytes = static_cast<std::int64_t>(2 * 2 * kDecodeElements * sizeof(T));

template <Isa I, class T>
void rope_decode(benchmark::State& state) {
  if (!ready<I>(state)) return;
  std::vector<T> q = native_values<T>(kDecodeElements, 1), k = native_values<T>(kDecodeElements, 2);
  std::int64_t position = 4096;  // a prompt already in the cache
  const avx2::Heads<T> qk[] = {{q.data(), 1, kRopeHeads, kRopeHeads * kRopeHeadDim, kRopeHeadDim},
                               {k.data(), 1, kRopeHeads, kRopeHeads * kRopeHeadDim, kRopeHeadDim}};
  const RopeSpec spec = rope_spec();
  for (auto _ : state) {
    rope_apply<I, T>(spec, std::span<const std::int64_t>(&position, 1), qk);
    ++position;
    benchmark::DoNotOptimize(q.data());
    benchmark::DoNotOptimize(k.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kDecodeBytes<T>);
}

/// The floor: the same bytes copied (Q and K each read once and written once), through memcpy.
template <class T>
void copy_decode(benchmark::State& state) {
  std::vector<T> q = native_values<T>(kDecodeElements, 1), k = native_values<T>(kDecodeElements, 2), q2(q.size()),
                 k2(k.size());
  for (auto _ : state) {
    std::memcpy(q2.data(), q.data(), q.size() * sizeof(T));
    std::memcpy(k2.data(), k.data(), k.size() * sizeof(T));
    benchmark::DoNotOptimize(q2.data());
    benchmark::DoNotOptimize(k2.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kDecodeBytes<T>);
}

BENCHMARK(rope_decode<Isa::avx2, float>)->Name("rope_decode/f32/avx2")->Unit(benchmark::kNanosecond);
BENCHMARK(rope_decode<Isa::avx2, avx2::bf16>)->Name("rope_decode/bf16/avx2")->Unit(benchmark::kNanosecond);
BENCHMARK(rope_decode<Isa::avx512, float>)->Name("rope_decode/f32/avx512")->Unit(benchmark::kNanosecond);
BENCHMARK(rope_decode<Isa::avx512, avx2::bf16>)->Name("rope_decode/bf16/avx512")->Unit(benchmark::kNanosecond);
BENCHMARK(copy_decode<float>)->Name("floor/copy/decode_f32")->Unit(benchmark::kNanosecond);
BENCHMARK(copy_decode<avx2::bf16>)->Name("floor/copy/decode_bf16")->Unit(benchmark::kNanosecond);

}  // namespace
}  // namespace pecheck::bench
