// The AVX2 attention unit: impl/simd/attention_body.hpp on isa::Avx2 (8 floats a vector).
#include "impl/avx2/simd.hpp"
#include "impl/simd/attention_body.hpp"

namespace pecheck::avx2::detail {

namespace {

template <Storage S>
void attention8(const AttentionCall& c) {
  simd::attention<isa::Avx2, S>(c);
}

}  // namespace

void attention(Storage s, const AttentionCall& c) { PECHECK_AVX2_DISPATCH(s, attention8, c) }

}  // namespace pecheck::avx2::detail
