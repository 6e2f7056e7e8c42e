// AVX2 sinusoidal table / add, learned add, RoPE, and storage conversions. Angles in double
// (simd::sincos4); data through double for the rotations and sums, rounded once to the storage.
#include <cmath>

#include "impl/avx2/simd.hpp"

namespace pecheck::avx2::detail {

namespace {

using simd::Io;

template <Storage S>
using Elem = typename Io<S>::T;

/// dst[0..4) = v (+ dst when adding), rounded to the storage; only the first m < 4 when partial.
template <Storage S>
inline void put4(Elem<S>* dst, __m256d v, bool add, std::size_t m = 4) {
  if (m == 4) {
    if (add) v = _mm256_add_pd(v, _mm256_cvtps_pd(Io<S>::load4(dst)));
    Io<S>::store4(dst, _mm256_cvtpd_ps(v));
    return;
  }
  alignas(32) double lanes[4];
  _mm256_store_pd(lanes, v);
  for (std::size_t i = 0; i < m; ++i)
    Io<S>::put(dst + i, static_cast<float>(add ? lanes[i] + double{Io<S>::get(dst + i)} : lanes[i]));
}

/// (s0 s1 s2 s3), (c0 c1 c2 c3) -> (s0 c0 s1 c1), (s2 c2 s3 c3).
inline void interleave(__m256d s, __m256d c, __m256d& lo, __m256d& hi) {
  const __m256d a = _mm256_unpacklo_pd(s, c), b = _mm256_unpackhi_pd(s, c);  // s0 c0 s2 c2 | s1 c1 s3 c3
  lo = _mm256_permute2f128_pd(a, b, 0x20);
  hi = _mm256_permute2f128_pd(a, b, 0x31);
}

template <Storage S>
void sinusoidal_rows_impl(const SinusoidalCall& c) {
  const std::size_t half = c.f.count;
  for (std::size_t t = 0; t < c.n; ++t) {
    Elem<S>* row = static_cast<Elem<S>*>(c.data) + static_cast<std::ptrdiff_t>(t) * c.stride;
    if (c.padding_idx >= 0 && c.positions[t] == c.padding_idx) {  // the padding row is zero: x += 0 leaves x alone
      if (!c.add)
        for (std::size_t i = 0; i < 2 * half; ++i) Io<S>::put(row + i, 0.0f);
      continue;
    }
    const __m256d p = _mm256_set1_pd(static_cast<double>(c.positions[t]));
    for (std::size_t i = 0; i < half; i += 4) {
      const std::size_t m = half - i < 4 ? half - i : 4;  // the frequency arrays are padded to 4
      const simd::SinCos4 sc = simd::sincos4(p, _mm256_loadu_pd(c.f.hi + i), _mm256_loadu_pd(c.f.lo + i));
      if (!c.interleaved) {
        put4<S>(row + i, sc.s, c.add, m);
        put4<S>(row + half + i, sc.c, c.add, m);
        continue;
      }
      __m256d lo, hi;
      interleave(sc.s, sc.c, lo, hi);
      put4<S>(row + 2 * i, lo, c.add, m >= 2 ? 4 : 2 * m);
      if (m > 2) put4<S>(row + 2 * i + 4, hi, c.add, 2 * m - 4);
    }
  }
}

template <Storage S>
void learned_add_impl(const LearnedCall& c) {
  for (std::size_t t = 0; t < c.n; ++t) {
    const Elem<S>* e = static_cast<const Elem<S>*>(c.table) + c.positions[t] * c.table_stride;
    Elem<S>* x = static_cast<Elem<S>*>(c.x) + static_cast<std::ptrdiff_t>(t) * c.stride;
    std::size_t i = 0;
    for (; i + 8 <= c.cols; i += 8) Io<S>::store8(x + i, _mm256_add_ps(Io<S>::load8(x + i), Io<S>::load8(e + i)));
    if (i < c.cols) {
      const std::size_t m = c.cols - i;
      simd::store_partial<S>(x + i, _mm256_add_ps(simd::load_partial<S>(x + i, m), simd::load_partial<S>(e + i, m)), m);
    }
  }
}

/// One token's cos/sin (times the magnitude), laid out for the rotation loops: interleaved as
/// C = (c0 c0 c1 c1 ..), S = (-s0 s0 -s1 s1 ..); half-split as C = (c0 c1 ..), S = (s0 s1 ..).
void rope_token_cache(const RopeCall& c, std::int64_t pos, double* C, double* Sn) {
  const __m256d p = _mm256_set1_pd(static_cast<double>(pos)), m = _mm256_set1_pd(c.magnitude);
  const __m256d alternate = _mm256_setr_pd(-0.0, 0.0, -0.0, 0.0);
  for (std::size_t i = 0; i < c.f.count; i += 4) {
    const simd::SinCos4 sc = simd::sincos4(p, _mm256_loadu_pd(c.f.hi + i), _mm256_loadu_pd(c.f.lo + i));
    const __m256d cs = _mm256_mul_pd(sc.c, m), sn = _mm256_mul_pd(sc.s, m);
    if (!c.interleaved) {
      _mm256_storeu_pd(C + i, cs);
      _mm256_storeu_pd(Sn + i, sn);
      continue;
    }
    _mm256_storeu_pd(C + 2 * i, _mm256_permute4x64_pd(cs, 0b01010000));
    _mm256_storeu_pd(C + 2 * i + 4, _mm256_permute4x64_pd(cs, 0b11111010));
    _mm256_storeu_pd(Sn + 2 * i, _mm256_xor_pd(_mm256_permute4x64_pd(sn, 0b01010000), alternate));
    _mm256_storeu_pd(Sn + 2 * i + 4, _mm256_xor_pd(_mm256_permute4x64_pd(sn, 0b11111010), alternate));
  }
}

/// (x1, x2) <- (x1 c - x2 s, x2 c + x1 s) in double, rounded once; the scalar tail.
template <Storage S>
inline void rotate_pair(Elem<S>* a, Elem<S>* b, double cs, double sn) {
  const double x1 = Io<S>::get(a), x2 = Io<S>::get(b);
  Io<S>::put(a, static_cast<float>(std::fma(x1, cs, -(x2 * sn))));
  Io<S>::put(b, static_cast<float>(std::fma(x2, cs, x1 * sn)));
}

template <Storage S>
void rotate_head(const RopeCall& c, Elem<S>* x, const double* C, const double* Sn) {
  const std::size_t pairs = c.f.count;
  if (c.interleaved) {
    std::size_t j = 0;
    for (; j + 4 <= 2 * pairs; j += 4) {  // v = (x0 x1 x2 x3), swapped = (x1 x0 x3 x2)
      const __m256d v = _mm256_cvtps_pd(Io<S>::load4(x + j));
      const __m256d y = _mm256_fmadd_pd(v, _mm256_loadu_pd(C + j),
                                        _mm256_mul_pd(_mm256_permute_pd(v, 0b0101), _mm256_loadu_pd(Sn + j)));
      Io<S>::store4(x + j, _mm256_cvtpd_ps(y));
    }
    if (j < 2 * pairs) rotate_pair<S>(x + j, x + j + 1, C[j], Sn[j + 1]);
    return;
  }
  std::size_t i = 0;
  for (; i + 4 <= pairs; i += 4) {
    const __m256d x1 = _mm256_cvtps_pd(Io<S>::load4(x + i)), x2 = _mm256_cvtps_pd(Io<S>::load4(x + pairs + i));
    const __m256d cs = _mm256_loadu_pd(C + i), sn = _mm256_loadu_pd(Sn + i);
    Io<S>::store4(x + i, _mm256_cvtpd_ps(_mm256_fmsub_pd(x1, cs, _mm256_mul_pd(x2, sn))));
    Io<S>::store4(x + pairs + i, _mm256_cvtpd_ps(_mm256_fmadd_pd(x1, sn, _mm256_mul_pd(x2, cs))));
  }
  for (; i < pairs; ++i) rotate_pair<S>(x + i, x + pairs + i, C[i], Sn[i]);
}

template <Storage S>
void rope_impl(const RopeCall& c) {
  const std::size_t width = 2 * padded4(c.f.count);
  double* C = c.scratch;
  double* Sn = c.scratch + width;
  for (std::size_t t = 0; t < c.n; ++t) {
    rope_token_cache(c, c.positions[t], C, Sn);
    for (std::size_t k = 0; k < c.count; ++k) {
      const RopeTensor& x = c.tensors[k];
      Elem<S>* token = static_cast<Elem<S>*>(x.data) + static_cast<std::ptrdiff_t>(t) * x.token_stride;
      for (int h = 0; h < x.heads; ++h) rotate_head<S>(c, token + h * x.head_stride, C, Sn);
    }
  }
}

template <Storage S>
void to_float_impl(const void* src, std::size_t n, float* dst) {
  const auto* s = static_cast<const Elem<S>*>(src);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, Io<S>::load8(s + i));
  for (; i < n; ++i) dst[i] = Io<S>::get(s + i);
}

template <Storage S>
void from_float_impl(const float* src, std::size_t n, void* dst) {
  auto* d = static_cast<Elem<S>*>(dst);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) Io<S>::store8(d + i, _mm256_loadu_ps(src + i));
  for (; i < n; ++i) Io<S>::put(d + i, src[i]);
}

}  // namespace

void sinusoidal_rows(Storage s, const SinusoidalCall& c) { PECHECK_AVX2_DISPATCH(s, sinusoidal_rows_impl, c) }
void learned_add(Storage s, const LearnedCall& c) { PECHECK_AVX2_DISPATCH(s, learned_add_impl, c) }
void rope(Storage s, const RopeCall& c) { PECHECK_AVX2_DISPATCH(s, rope_impl, c) }
void to_float(Storage s, const void* src, std::size_t n, float* dst) {
  PECHECK_AVX2_DISPATCH(s, to_float_impl, src, n, dst)
}
void from_float(Storage s, const float* src, std::size_t n, void* dst) {
  PECHECK_AVX2_DISPATCH(s, from_float_impl, src, n, dst)
}

}  // namespace pecheck::avx2::detail
