// The AVX2 RoPE unit: impl/simd/rope_body.hpp on isa::Avx2 (8 floats a vector, tails in double).
#include "impl/avx2/simd.hpp"
#include "impl/simd/rope_body.hpp"

namespace pecheck::avx2::detail {

namespace {

template <Storage S>
void rope8(const RopeCall& c) {
  simd::rope<isa::Avx2, S>(c);
}

}  // namespace

void rope(Storage s, const RopeCall& c) { PECHECK_AVX2_DISPATCH(s, rope8, c) }

}  // namespace pecheck::avx2::detail
