// Built with -mavx2: like fma_kernel.cpp, no standard library header and no inline or template
// function with external linkage (fma_kernel.cpp says why).
#include <immintrin.h>

#include "bench/rmw_body.hpp"

namespace pecheck::bench {
namespace {

struct Lanes256 {
  static constexpr long long kFloats = 8, kShorts = 16;
  using F = __m256;
  using I = __m256i;
  static F load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, F v) { _mm256_storeu_ps(p, v); }
  static void prefetch(const void* p) { _mm_prefetch(static_cast<const char*>(p), _MM_HINT_T1); }
  static F set1(float c) { return _mm256_set1_ps(c); }
  static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static I iload(const unsigned short* p) { return _mm256_loadu_si256(reinterpret_cast<const I*>(p)); }
  static void istore(unsigned short* p, I v) { _mm256_storeu_si256(reinterpret_cast<I*>(p), v); }
  static I flip(I v) { return _mm256_xor_si256(v, _mm256_set1_epi32(static_cast<int>(0x80008000u))); }
};

}  // namespace

void scale_in_place_avx2(float* x, long long n, float c, const float* next) { run_scale<Lanes256>(x, n, c, next); }
void flip_bf16_signs_avx2(unsigned short* x, long long n, const unsigned short* next) {
  run_flip<Lanes256>(x, n, next);
}

}  // namespace pecheck::bench
