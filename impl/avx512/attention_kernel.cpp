// The AVX-512 attention kernel: impl/avx2/attention_body.hpp on 16-float vectors (a broadcast
// operand folds into the FMA here, where AVX2 needs a separate broadcast).
#include "impl/avx2/attention_body.hpp"
#include "impl/avx512/simd.hpp"

namespace pecheck::avx512::detail {

namespace {

using avx2::detail::AttentionCall;

/// attention_body.hpp's vector type: 16 floats.
struct Vec16 {
  using R = __m512;
  static constexpr std::size_t W = 16;
  static constexpr std::size_t kChains = 2;  ///< key or column chunks per step: 16 chains in 32 registers
  template <Storage S>
  using Elem = typename simd::Io<S>::T;
  static R load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, R v) { _mm512_storeu_ps(p, v); }
  static R zero() { return _mm512_setzero_ps(); }
  static R set1(float x) { return _mm512_set1_ps(x); }
  static R broadcast(const float* p) { return _mm512_set1_ps(*p); }
  static R fmadd(R a, R b, R c) { return _mm512_fmadd_ps(a, b, c); }
  static R mul(R a, R b) { return _mm512_mul_ps(a, b); }
  static R add(R a, R b) { return _mm512_add_ps(a, b); }
  static R sub(R a, R b) { return _mm512_sub_ps(a, b); }
  static R div(R a, R b) { return _mm512_div_ps(a, b); }
  static R max(R a, R b) { return _mm512_max_ps(a, b); }
  static R exp(R x) { return simd::exp16(x); }
  static float hmax(R v) { return simd::hmax(v); }
  static float hsum(R v) { return simd::hsum(v); }
  template <Storage S>
  static void store_out(Elem<S>* p, R v) {
    simd::Io<S>::store(p, v);
  }
  template <Storage S>
  static void put(Elem<S>* p, float v) {
    simd::put<S, false>(p, v);
  }
};

template <Storage S, bool B>
void attention16(const AttentionCall& c) {
  avx2::detail::attention_impl<Vec16, S>(c);
}

}  // namespace

void attention(Storage s, const AttentionCall& c, bool bf16_instructions) {
  PECHECK_AVX512_DISPATCH(s, bf16_instructions, attention16, c)
}

}  // namespace pecheck::avx512::detail
