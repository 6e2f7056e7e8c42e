// The CUDA kernels on the device alone (no host copies), timed with CUDA events, against the
// device-to-device copy of the same machine in the same run: RoPE in place on q and k of
// (8, 32, 4096, 128) (tokens (batch, position) x 32 heads x 128, half-split, base 500000), fp32
// and bf16, counting q and k read and written once; the fp32 sinusoidal table, 32768 x 4096,
// counting bytes written; attention with RoPE, bf16, one sequence of 4096 tokens x 32 heads x 128
// (the whole operation: widen, rotate, attend), reporting FLOP/s (4 n^2 d heads per call) for
// scripts/device-check to set against PyTorch's scaled_dot_product_attention (bench/sdpa_bench.py)
// on the same machine. Without a device every benchmark is skipped with the reason.
#include <benchmark/benchmark.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "impl/angles.hpp"
#include "impl/cuda/kernels.hpp"

namespace {

using pecheck::angles::Frequency;
namespace cuda = pecheck::cuda;

constexpr std::size_t kBatch = 8, kHeads = 32, kSeq = 4096, kHeadDim = 128;
constexpr std::size_t kRopeTokens = kBatch * kSeq;
constexpr std::size_t kTableRows = 32768, kTableWidth = 4096;
constexpr std::size_t kCopyBytes = std::size_t{2} << 30;  // 2 GiB copied: 4 GiB read + written

bool ready(benchmark::State& state) {
  const cuda::Device& d = cuda::availability();
  if (!d.ok) state.SkipWithError(d.reason.c_str());
  return d.ok;
}

void must(cudaError_t e, benchmark::State& state) {
  if (e != cudaSuccess) state.SkipWithError(cudaGetErrorString(e));
}

/// Device memory for the benchmark's lifetime.
struct Device {
  void* p = nullptr;
  explicit Device(std::size_t bytes) {
    if (cudaMalloc(&p, bytes) != cudaSuccess) p = nullptr;
  }
  ~Device() { cudaFree(p); }
};

/// Times one iteration of f with events: the kernel's time, not the host's.
template <class F>
void timed(benchmark::State& state, F&& f) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  f();  // warm up
  cudaDeviceSynchronize();
  for (auto _ : state) {
    cudaEventRecord(start);
    f();
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    state.SetIterationTime(ms / 1e3);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
}

void copy_floor(benchmark::State& state) {
  if (!ready(state)) return;
  Device a(kCopyBytes), b(kCopyBytes);
  if (!a.p || !b.p) return state.SkipWithError("cannot allocate 2 x 2 GiB");
  must(cudaMemset(a.p, 1, kCopyBytes), state);
  timed(state, [&] { cudaMemcpyAsync(b.p, a.p, kCopyBytes, cudaMemcpyDeviceToDevice); });
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * 2 * kCopyBytes));
}

template <class T>
void rope(benchmark::State& state) {
  if (!ready(state)) return;
  const std::size_t tokens = 2 * kRopeTokens;  // q then k: one launch over both
  const std::size_t elements = tokens * kHeads * kHeadDim;
  Device x(elements * sizeof(T)), pos(tokens * sizeof(std::int64_t)), freq(kHeadDim / 2 * sizeof(Frequency));
  if (!x.p || !pos.p || !freq.p) return state.SkipWithError("cannot allocate");
  std::vector<std::int64_t> positions(tokens);
  for (std::size_t t = 0; t < tokens; ++t) positions[t] = static_cast<std::int64_t>(t % kSeq);
  std::vector<Frequency> freqs(kHeadDim / 2);
  for (std::size_t p = 0; p < freqs.size(); ++p) freqs[p] = pecheck::angles::frequency(int(p), int(kHeadDim), 500000.0);
  must(cudaMemcpy(pos.p, positions.data(), positions.size() * sizeof(std::int64_t), cudaMemcpyHostToDevice), state);
  must(cudaMemcpy(freq.p, freqs.data(), freqs.size() * sizeof(Frequency), cudaMemcpyHostToDevice), state);
  must(cudaMemset(x.p, 0x3C, elements * sizeof(T)), state);  // finite values in every format
  const cuda::RopeLaunch launch{.heads = int(kHeads),
                                .head_dim = int(kHeadDim),
                                .rotary_dim = int(kHeadDim),
                                .interleaved = false,
                                .magnitude = 1};
  const auto storage = sizeof(T) == 4 ? cuda::Storage::f32 : cuda::Storage::bf16;
  timed(state, [&] {
    cuda::rope_apply_on_device(storage, launch, static_cast<const std::int64_t*>(pos.p), tokens,
                               static_cast<const Frequency*>(freq.p), x.p);
  });
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * 2 * elements * sizeof(T)));
}

void sinusoid(benchmark::State& state) {
  if (!ready(state)) return;
  Device out(kTableRows * kTableWidth * sizeof(float)), pos(kTableRows * sizeof(std::int64_t)),
      freq(kTableWidth / 2 * sizeof(Frequency));
  if (!out.p || !pos.p || !freq.p) return state.SkipWithError("cannot allocate");
  std::vector<std::int64_t> positions(kTableRows);
  for (std::size_t t = 0; t < kTableRows; ++t) positions[t] = static_cast<std::int64_t>(t);
  std::vector<Frequency> freqs(kTableWidth / 2);
  for (std::size_t i = 0; i < freqs.size(); ++i)
    freqs[i] = pecheck::angles::frequency(int(i), int(kTableWidth), 10000.0);
  must(cudaMemcpy(pos.p, positions.data(), positions.size() * sizeof(std::int64_t), cudaMemcpyHostToDevice), state);
  must(cudaMemcpy(freq.p, freqs.data(), freqs.size() * sizeof(Frequency), cudaMemcpyHostToDevice), state);
  timed(state, [&] {
    cuda::sinusoidal_table_on_device(cuda::Storage::f32, int(kTableWidth), true, true,
                                     static_cast<const std::int64_t*>(pos.p), kTableRows,
                                     static_cast<const Frequency*>(freq.p), out.p);
  });
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kTableRows * kTableWidth * sizeof(float)));
}

void attention_bf16(benchmark::State& state) {
  if (!ready(state)) return;
  constexpr std::size_t kTokens = 4096, kAttnHeads = 32, kDim = 128;
  const std::size_t count = kTokens * kAttnHeads * kDim;
  Device q(count * 2), k(count * 2), v(count * 2), out(count * 2), scratch(3 * count * sizeof(float)),
      pos(kTokens * sizeof(std::int64_t)), freq(kDim / 2 * sizeof(Frequency));
  if (!q.p || !k.p || !v.p || !out.p || !scratch.p || !pos.p || !freq.p) return state.SkipWithError("cannot allocate");
  std::vector<std::int64_t> positions(kTokens);
  for (std::size_t t = 0; t < kTokens; ++t) positions[t] = static_cast<std::int64_t>(t);
  std::vector<Frequency> freqs(kDim / 2);
  for (std::size_t p = 0; p < freqs.size(); ++p) freqs[p] = pecheck::angles::frequency(int(p), int(kDim), 10000.0);
  must(cudaMemcpy(pos.p, positions.data(), positions.size() * sizeof(std::int64_t), cudaMemcpyHostToDevice), state);
  must(cudaMemcpy(freq.p, freqs.data(), freqs.size() * sizeof(Frequency), cudaMemcpyHostToDevice), state);
  // Small finite values in bf16 (0x3C00 ~ 0.0078, 0x3D00 ~ 0.031): a flat softmax, no overflow.
  must(cudaMemset(q.p, 0x3C, count * 2), state);
  must(cudaMemset(k.p, 0x3D, count * 2), state);
  must(cudaMemset(v.p, 0x3C, count * 2), state);
  const cuda::AttentionLaunch launch{.heads = int(kAttnHeads),
                                     .head_dim = int(kDim),
                                     .causal = false,
                                     .scale = 1.0 / std::sqrt(double(kDim)),
                                     .pe = 2,
                                     .rope_interleaved = false};
  timed(state, [&] {
    cuda::attention_on_device(cuda::Storage::bf16, launch, static_cast<const std::int64_t*>(pos.p), kTokens, q.p, k.p,
                              v.p, static_cast<float*>(scratch.p), static_cast<const Frequency*>(freq.p), nullptr,
                              out.p);
  });
  state.counters["flop_per_call"] = 4.0 * kTokens * kTokens * kDim * kAttnHeads;
}

BENCHMARK(copy_floor)->Name("floor/copy/cuda")->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(rope<float>)->Name("rope_inplace/f32/cuda")->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(rope<__nv_bfloat16>)->Name("rope_inplace/bf16/cuda")->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(sinusoid)->Name("sinusoidal_table/f32/cuda")->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(attention_bf16)->Name("attention/bf16/cuda")->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
