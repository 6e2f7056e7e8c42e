// The measured single-core FMA peaks' inner loops (fma_kernel.cpp, built with -mavx2 -mfma;
// fma_kernel512.cpp, built with -mavx512f).
// Nothing here may be inline or a template: see fma_kernel.cpp (the loop itself is in
// fma_chains_body.hpp, with internal linkage).
#pragma once

namespace pecheck::bench {

/// Independent accumulator chains: enough to cover FMA latency x throughput on current cores
/// (Zen: 5 cycles x 1-2 per cycle; Skylake: 4 x 2), so the loop runs at the FMA ports' rate.
inline constexpr int kFmaChains = 12;
/// 8 fp32 lanes x (multiply + add) per _mm256_fmadd_ps.
inline constexpr int kFlopPerFma = 16;

/// Runs `rounds` rounds of one FMA per chain; returns a sum of the chains so nothing is dead.
/// Call only after avx2::availability() said yes.
float fma_chains(long long rounds);

/// 16 fp32 lanes x (multiply + add) per _mm512_fmadd_ps.
inline constexpr int kFlopPerFma512 = 32;

/// The same with 512-bit vectors. Call only after avx512::availability() said yes.
float fma_chains512(long long rounds);

}  // namespace pecheck::bench
