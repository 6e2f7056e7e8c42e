// The AVX-512 attention unit: impl/simd/attention_body.hpp on isa::Avx512 (16 floats a vector).
#include "impl/avx512/simd.hpp"
#include "impl/simd/attention_body.hpp"

namespace pecheck::avx512::detail {

namespace {

template <Storage S, bool B>
void attention16(const AttentionCall& c) {
  simd::attention<isa::Avx512<B>, S>(c);
}

}  // namespace

void attention(Storage s, const AttentionCall& c, bool bf16_instructions) {
  PECHECK_AVX512_DISPATCH(s, bf16_instructions, attention16, c)
}

}  // namespace pecheck::avx512::detail
