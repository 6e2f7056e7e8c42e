// Built with -mavx512f, so like impl/avx512's vector units it includes no standard library
// header and instantiates no inline or template function with external linkage: the linker may
// keep such a copy for the whole program and it would then run AVX-512 code before the CPU check.
#include <immintrin.h>

#include "bench/fma_chains_body.hpp"

namespace pecheck::bench {
namespace {

struct Float16 {
  using R = __m512;
  static R set1(float x) { return _mm512_set1_ps(x); }
  static R fmadd(R a, R b, R c) { return _mm512_fmadd_ps(a, b, c); }
  static R add(R a, R b) { return _mm512_add_ps(a, b); }
  static float first(R v) { return _mm512_cvtss_f32(v); }
};

}  // namespace

float fma_chains512(long long rounds) { return run_fma_chains<Float16>(rounds); }

}  // namespace pecheck::bench
