// The AVX-512 sinusoid unit: impl/simd/sinusoid_body.hpp on isa::Avx512 (16 floats a vector, 8
// doubles, masked tails), and the rounding of fp32 to a storage the tests compare against.
#include "impl/avx512/simd.hpp"
#include "impl/simd/sinusoid_body.hpp"

namespace pecheck::avx512::detail {

namespace {

template <Storage S, bool B>
void sinusoidal_rows16(const SinusoidalCall& c) {
  simd::sinusoidal_rows<isa::Avx512<B>, S>(c);
}

template <Storage S, bool B>
void from_float16(const float* src, std::size_t n, void* dst) {
  simd::from_float<isa::Avx512<B>, S>(src, n, dst);
}

}  // namespace

void from_float(Storage s, const float* src, std::size_t n, void* dst, bool bf16_instructions) {
  PECHECK_AVX512_DISPATCH(s, bf16_instructions, from_float16, src, n, dst)
}

void sinusoidal_rows(Storage s, const SinusoidalCall& c, bool bf16_instructions) {
  PECHECK_AVX512_DISPATCH(s, bf16_instructions, sinusoidal_rows16, c)
}

}  // namespace pecheck::avx512::detail
