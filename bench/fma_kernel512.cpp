// Built with -mavx512f, so like impl/avx512's vector units it includes no standard library
// header and instantiates no inline or template function: the linker may keep such a copy for
// the whole program and it would then run AVX2 code before the CPU check.
#include <immintrin.h>

#include "bench/fma_kernel.hpp"

namespace pecheck::bench {

float fma_chains512(long long rounds) {
  // c <- c a + b converges to b / (1 - a) = 1: no overflow, no subnormals, however long it runs.
  const __m512 a = _mm512_set1_ps(0.5f), b = _mm512_set1_ps(0.5f);
  __m512 c0 = _mm512_set1_ps(0.0f), c1 = _mm512_set1_ps(0.1f), c2 = _mm512_set1_ps(0.2f), c3 = _mm512_set1_ps(0.3f),
         c4 = _mm512_set1_ps(0.4f), c5 = _mm512_set1_ps(0.5f), c6 = _mm512_set1_ps(0.6f), c7 = _mm512_set1_ps(0.7f),
         c8 = _mm512_set1_ps(0.8f), c9 = _mm512_set1_ps(0.9f), c10 = _mm512_set1_ps(1.1f), c11 = _mm512_set1_ps(1.2f);
  static_assert(kFmaChains == 12, "one accumulator per chain below");
  for (long long r = 0; r < rounds; ++r) {
    c0 = _mm512_fmadd_ps(c0, a, b);
    c1 = _mm512_fmadd_ps(c1, a, b);
    c2 = _mm512_fmadd_ps(c2, a, b);
    c3 = _mm512_fmadd_ps(c3, a, b);
    c4 = _mm512_fmadd_ps(c4, a, b);
    c5 = _mm512_fmadd_ps(c5, a, b);
    c6 = _mm512_fmadd_ps(c6, a, b);
    c7 = _mm512_fmadd_ps(c7, a, b);
    c8 = _mm512_fmadd_ps(c8, a, b);
    c9 = _mm512_fmadd_ps(c9, a, b);
    c10 = _mm512_fmadd_ps(c10, a, b);
    c11 = _mm512_fmadd_ps(c11, a, b);
  }
  const __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(_mm512_add_ps(c0, c1), _mm512_add_ps(c2, c3)),
                                               _mm512_add_ps(_mm512_add_ps(c4, c5), _mm512_add_ps(c6, c7))),
                                 _mm512_add_ps(_mm512_add_ps(c8, c9), _mm512_add_ps(c10, c11)));
  return _mm512_cvtss_f32(s);
}

}  // namespace pecheck::bench
