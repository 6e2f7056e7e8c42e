// The AVX2 attention kernel: impl/avx2/attention_body.hpp on 8-float vectors.
#include "impl/avx2/attention_body.hpp"
#include "impl/avx2/simd.hpp"

namespace pecheck::avx2::detail {

namespace {

/// attention_body.hpp's vector type: 8 floats.
struct Vec8 {
  using R = __m256;
  static constexpr std::size_t W = 8;
  static constexpr std::size_t kChains = 1;  ///< key or column chunks per step (16 registers: one)
  template <Storage S>
  using Elem = typename simd::Io<S>::T;
  static R load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, R v) { _mm256_storeu_ps(p, v); }
  static R zero() { return _mm256_setzero_ps(); }
  static R set1(float x) { return _mm256_set1_ps(x); }
  static R broadcast(const float* p) { return _mm256_broadcast_ss(p); }
  static R fmadd(R a, R b, R c) { return _mm256_fmadd_ps(a, b, c); }
  static R mul(R a, R b) { return _mm256_mul_ps(a, b); }
  static R add(R a, R b) { return _mm256_add_ps(a, b); }
  static R sub(R a, R b) { return _mm256_sub_ps(a, b); }
  static R div(R a, R b) { return _mm256_div_ps(a, b); }
  static R max(R a, R b) { return _mm256_max_ps(a, b); }
  static R exp(R x) { return simd::exp8(x); }
  static float hmax(R v) { return simd::hmax(v); }
  static float hsum(R v) { return simd::hsum(v); }
  template <Storage S>
  static void store_out(Elem<S>* p, R v) {
    simd::Io<S>::store8(p, v);
  }
  template <Storage S>
  static void put(Elem<S>* p, float v) {
    simd::Io<S>::put(p, v);
  }
};

template <Storage S>
void attention8(const AttentionCall& c) {
  attention_impl<Vec8, S>(c);
}

}  // namespace

void attention(Storage s, const AttentionCall& c) { PECHECK_AVX2_DISPATCH(s, attention8, c) }

}  // namespace pecheck::avx2::detail
