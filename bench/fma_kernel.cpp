// Built with -mavx2 -mfma, so like impl/avx2's vector units it includes no standard library
// header and instantiates no inline or template function with external linkage: the linker may
// keep such a copy for the whole program and it would then run AVX2 code before the CPU check.
#include <immintrin.h>

#include "bench/fma_chains_body.hpp"

namespace pecheck::bench {
namespace {

struct Float8 {
  using R = __m256;
  static R set1(float x) { return _mm256_set1_ps(x); }
  static R fmadd(R a, R b, R c) { return _mm256_fmadd_ps(a, b, c); }
  static R add(R a, R b) { return _mm256_add_ps(a, b); }
  static float first(R v) { return _mm256_cvtss_f32(v); }
};

}  // namespace

float fma_chains(long long rounds) { return run_fma_chains<Float8>(rounds); }

}  // namespace pecheck::bench
