// The AVX-512 RoPE unit: impl/simd/rope_body.hpp on isa::Avx512 (16 floats a vector, masked tails).
#include "impl/avx512/simd.hpp"
#include "impl/simd/rope_body.hpp"

namespace pecheck::avx512::detail {

namespace {

template <Storage S, bool B>
void rope16(const RopeCall& c) {
  simd::rope<isa::Avx512<B>, S>(c);
}

}  // namespace

void rope(Storage s, const RopeCall& c, bool bf16_instructions) {
  PECHECK_AVX512_DISPATCH(s, bf16_instructions, rope16, c)
}

}  // namespace pecheck::avx512::detail
