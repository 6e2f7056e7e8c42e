// Built with -mavx512f: like fma_kernel512.cpp, no standard library header and no inline or
// template function with external linkage (fma_kernel.cpp says why).
#include <immintrin.h>

#include "bench/rmw_body.hpp"

namespace pecheck::bench {
namespace {

struct Lanes512 {
  static constexpr long long kFloats = 16, kShorts = 32;
  using F = __m512;
  using I = __m512i;
  static F load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, F v) { _mm512_storeu_ps(p, v); }
  static void prefetch(const void* p) { _mm_prefetch(static_cast<const char*>(p), _MM_HINT_T1); }
  static F set1(float c) { return _mm512_set1_ps(c); }
  static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static I iload(const unsigned short* p) { return _mm512_loadu_si512(p); }
  static void istore(unsigned short* p, I v) { _mm512_storeu_si512(p, v); }
  static I flip(I v) { return _mm512_xor_si512(v, _mm512_set1_epi32(static_cast<int>(0x80008000u))); }
};

}  // namespace

void scale_in_place_avx512(float* x, long long n, float c, const float* next) { run_scale<Lanes512>(x, n, c, next); }
void flip_bf16_signs_avx512(unsigned short* x, long long n, const unsigned short* next) {
  run_flip<Lanes512>(x, n, next);
}

}  // namespace pecheck::bench
