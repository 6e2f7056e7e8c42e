// AVX2 sinusoidal table / add, learned add, and storage conversions. Angles in double
// (simd::sincos4); sums with the table formed in double, rounded once to the storage.
#include <cmath>
#include <cstdint>

#include "impl/avx2/row_angles.hpp"
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

/// (s0 s1 s2 s3), (c0 c1 c2 c3) -> (s0 c0 s1 c1), (s2 c2 s3 c3). 128-bit shuffles: a lane-crossing
/// 256-bit permute costs several micro-ops on Zen 1 and 2.
inline void interleave(__m256d s, __m256d c, __m256d& lo, __m256d& hi) {
  const __m128d s0 = _mm256_castpd256_pd128(s), s1 = _mm256_extractf128_pd(s, 1);
  const __m128d c0 = _mm256_castpd256_pd128(c), c1 = _mm256_extractf128_pd(c, 1);
  lo = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_unpacklo_pd(s0, c0)), _mm_unpackhi_pd(s0, c0), 1);
  hi = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_unpacklo_pd(s1, c1)), _mm_unpackhi_pd(s1, c1), 1);
}

/// An fp32 table larger than this is written with non-temporal stores: it cannot stay in the
/// caches anyway, and a plain store first reads each line it writes (read for ownership), which
/// doubles the memory traffic of a table that is only written. A memset does not pay that.
constexpr std::size_t kStreamBytes = std::size_t{16} << 20;

/// Whether the call writes an fp32 table with 16-byte non-temporal stores: large enough, and every
/// group store_table4 writes 16-byte aligned (the rows, and for half-split the cos half too).
template <Storage S>
bool streams(const SinusoidalCall& c) {
  if constexpr (S != Storage::f32) {
    return false;
  } else {
    const std::size_t bytes = c.n * 2 * c.f.count * sizeof(float);
    return !c.add && bytes > kStreamBytes && reinterpret_cast<std::uintptr_t>(c.data) % 16 == 0 &&
           (c.stride * sizeof(float)) % 16 == 0 && (c.interleaved || c.f.count % 4 == 0);
  }
}

/// Stores sin and cos of four frequencies (all four real) into a table row: rounded to fp32, then
/// interleaved with 128-bit unpacks, or to the two halves; fp32 rows with non-temporal stores when
/// `stream` (streams()).
template <Storage S>
inline void store_table4(Elem<S>* row, std::size_t i, std::size_t half, bool interleaved, const simd::SinCos4& sc,
                         bool stream) {
  const __m128 s = _mm256_cvtpd_ps(sc.s), c = _mm256_cvtpd_ps(sc.c);
  if constexpr (S == Storage::f32) {
    if (stream) {
      if (interleaved) {
        _mm_stream_ps(row + 2 * i, _mm_unpacklo_ps(s, c));
        _mm_stream_ps(row + 2 * i + 4, _mm_unpackhi_ps(s, c));
      } else {
        _mm_stream_ps(row + i, s);
        _mm_stream_ps(row + half + i, c);
      }
      return;
    }
  }
  if (interleaved) {
    Io<S>::store8(row + 2 * i, _mm256_set_m128(_mm_unpackhi_ps(s, c), _mm_unpacklo_ps(s, c)));
    return;
  }
  Io<S>::store4(row + i, s);
  Io<S>::store4(row + half + i, c);
}

/// x[i..] (+)= sin and cos of up to four frequencies, m of them real, through double.
template <Storage S>
inline void put_row4(Elem<S>* row, std::size_t i, std::size_t half, const SinusoidalCall& c, std::size_t m,
                     const simd::SinCos4& sc) {
  if (!c.interleaved) {
    put4<S>(row + i, sc.s, c.add, m);
    put4<S>(row + half + i, sc.c, c.add, m);
    return;
  }
  __m256d lo, hi;
  interleave(sc.s, sc.c, lo, hi);
  put4<S>(row + 2 * i, lo, c.add, m >= 2 ? 4 : 2 * m);
  if (m > 2) put4<S>(row + 2 * i + 4, hi, c.add, 2 * m - 4);
}

/// row_angles.hpp's vector: 4 doubles.
struct Double4 {
  using R = __m256d;
  using SinCos = simd::SinCos4;
  static constexpr std::size_t W = 4;
  static R load(const double* p) { return _mm256_loadu_pd(p); }
  static void store(double* p, R v) { _mm256_storeu_pd(p, v); }
  static R set1(double x) { return _mm256_set1_pd(x); }
  static R mul(R a, R b) { return _mm256_mul_pd(a, b); }
  static R fmadd(R a, R b, R c) { return _mm256_fmadd_pd(a, b, c); }
  static R fmsub(R a, R b, R c) { return _mm256_fmsub_pd(a, b, c); }
  static SinCos sincos(R p, R hi, R lo) { return simd::sincos4(p, hi, lo); }
};

template <Storage S>
void sinusoidal_rows_impl(const SinusoidalCall& c) {
  const std::size_t half = c.f.count;
  const bool stream = streams<S>(c);
  RowAngles<Double4> angles(c);
  for (std::size_t t = 0; t < c.n; ++t) {
    Elem<S>* row = static_cast<Elem<S>*>(c.data) + static_cast<std::ptrdiff_t>(t) * c.stride;
    if (c.padding_idx >= 0 && c.positions[t] == c.padding_idx) {  // the padding row is zero: x += 0 leaves x alone
      if (!c.add)
        for (std::size_t i = 0; i < 2 * half; ++i) Io<S>::put(row + i, 0.0f);
      continue;
    }
    const std::size_t l = angles.seek(c.positions[t]);
    std::size_t i = 0;
    if (!c.add)  // the table: whole groups of four frequencies stored directly
      for (; i + 4 <= half; i += 4) store_table4<S>(row, i, half, c.interleaved, angles.at(l, i), stream);
    for (; i < half; i += 4)  // adding, and the tail (the tables are padded to 4 frequencies)
      put_row4<S>(row, i, half, c, half - i < 4 ? half - i : 4, angles.at(l, i));
  }
  if (stream) _mm_sfence();  // the non-temporal stores ordered before the caller reads the table
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
void to_float(Storage s, const void* src, std::size_t n, float* dst) {
  PECHECK_AVX2_DISPATCH(s, to_float_impl, src, n, dst)
}
void from_float(Storage s, const float* src, std::size_t n, void* dst) {
  PECHECK_AVX2_DISPATCH(s, from_float_impl, src, n, dst)
}

}  // namespace pecheck::avx2::detail
