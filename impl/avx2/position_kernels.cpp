// The AVX2 sinusoid unit (impl/simd/sinusoid_body.hpp on isa::Avx2: 8 floats a vector, 4 doubles),
// and the AVX2-only learned add and storage conversions.
#include <cstdint>

#include "impl/avx2/simd.hpp"
#include "impl/simd/sinusoid_body.hpp"

namespace pecheck::avx2::detail {

namespace {

using isa::Io;

template <Storage S>
using Elem = typename Io<S>::T;

template <Storage S>
void learned_add_impl(const LearnedCall& c) {
  for (std::size_t t = 0; t < c.n; ++t) {
    const Elem<S>* e = static_cast<const Elem<S>*>(c.table) + c.positions[t] * c.table_stride;
    Elem<S>* x = static_cast<Elem<S>*>(c.x) + static_cast<std::ptrdiff_t>(t) * c.stride;
    std::size_t i = 0;
    for (; i + 8 <= c.cols; i += 8) Io<S>::store(x + i, _mm256_add_ps(Io<S>::load(x + i), Io<S>::load(e + i)));
    if (i < c.cols) {
      const std::size_t m = c.cols - i;
      isa::store_partial<S>(x + i, _mm256_add_ps(isa::load_partial<S>(x + i, m), isa::load_partial<S>(e + i, m)), m);
    }
  }
}

template <Storage S>
void to_float_impl(const void* src, std::size_t n, float* dst) {
  const auto* s = static_cast<const Elem<S>*>(src);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, Io<S>::load(s + i));
  for (; i < n; ++i) dst[i] = Io<S>::get(s + i);
}

template <Storage S>
void sinusoidal_rows8(const SinusoidalCall& c) {
  simd::sinusoidal_rows<isa::Avx2, S>(c);
}

template <Storage S>
void from_float8(const float* src, std::size_t n, void* dst) {
  simd::from_float<isa::Avx2, S>(src, n, dst);
}

}  // namespace

void sinusoidal_rows(Storage s, const SinusoidalCall& c) { PECHECK_AVX2_DISPATCH(s, sinusoidal_rows8, c) }
void learned_add(Storage s, const LearnedCall& c) { PECHECK_AVX2_DISPATCH(s, learned_add_impl, c) }
void to_float(Storage s, const void* src, std::size_t n, float* dst) {
  PECHECK_AVX2_DISPATCH(s, to_float_impl, src, n, dst)
}
void from_float(Storage s, const float* src, std::size_t n, void* dst) {
  PECHECK_AVX2_DISPATCH(s, from_float8, src, n, dst)
}

}  // namespace pecheck::avx2::detail
