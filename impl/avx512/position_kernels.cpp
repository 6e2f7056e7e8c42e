// AVX-512 sinusoidal table and add: impl/avx2/position_kernels.cpp's scheme (angles by addition
// from per-call tables of 16 low positions, in double; one rounding to the storage) with 8 double
// lanes, 16 outputs per store and masked tails. Every entry is the AVX2 kernel's, bit for bit: the
// same double operations in the same order, then one conversion.
#include <cstdint>

#include "impl/avx2/row_angles.hpp"
#include "impl/avx512/simd.hpp"

namespace pecheck::avx512::detail {

namespace {

using simd::Io;

template <Storage S>
using Elem = typename Io<S>::T;

/// Tables larger than this are written with non-temporal stores (impl/avx2/position_kernels.cpp).
constexpr std::size_t kStreamBytes = std::size_t{16} << 20;

/// impl/avx2/row_angles.hpp's vector: 8 doubles.
struct Double8 {
  using R = __m512d;
  using SinCos = simd::SinCos8;
  static constexpr std::size_t W = 8;
  static R load(const double* p) { return _mm512_loadu_pd(p); }
  static void store(double* p, R v) { _mm512_storeu_pd(p, v); }
  static R set1(double x) { return _mm512_set1_pd(x); }
  static R mul(R a, R b) { return _mm512_mul_pd(a, b); }
  static R fmadd(R a, R b, R c) { return _mm512_fmadd_pd(a, b, c); }
  static R fmsub(R a, R b, R c) { return _mm512_fmsub_pd(a, b, c); }
  static SinCos sincos(R p, R hi, R lo) { return simd::sincos8(p, hi, lo); }
};

/// Where and how one call writes: fp32 tables past kStreamBytes with 16-byte aligned rows (and
/// cos halves) stream, as in the AVX2 kernel.
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

/// A non-temporal store of 16 floats: one 64-byte store where aligned, else four of 16 bytes.
inline void stream16(float* p, __m512 v) {
  if (reinterpret_cast<std::uintptr_t>(p) % 64 == 0) {
    _mm512_stream_ps(p, v);
    return;
  }
  _mm_stream_ps(p, _mm512_castps512_ps128(v));
  _mm_stream_ps(p + 4, _mm512_extractf32x4_ps(v, 1));
  _mm_stream_ps(p + 8, _mm512_extractf32x4_ps(v, 2));
  _mm_stream_ps(p + 12, _mm512_extractf32x4_ps(v, 3));
}

/// dst[0 .. lanes) = (lo, hi) (+ dst when adding, the sum in double), rounded once to the storage.
template <Storage S, bool B>
inline void put16(Elem<S>* dst, __m512d lo, __m512d hi, bool add, std::size_t lanes, bool stream) {
  const __mmask16 m = simd::first_lanes(lanes);
  if (add) {
    const __m512 x = lanes == 16 ? Io<S, B>::load(dst) : Io<S, B>::load(dst, m);
    lo = _mm512_add_pd(lo, _mm512_cvtps_pd(_mm512_castps512_ps256(x)));
    hi = _mm512_add_pd(hi, _mm512_cvtps_pd(_mm512_extractf32x8_ps(x, 1)));
  }
  const __m512 v = _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(lo)), _mm512_cvtpd_ps(hi), 1);
  if constexpr (S == Storage::f32) {
    if (stream && lanes == 16) return stream16(dst, v);
  }
  lanes == 16 ? Io<S, B>::store(dst, v) : Io<S, B>::store(dst, v, m);
}

template <Storage S, bool B>
void sinusoidal_rows_impl(const SinusoidalCall& c) {
  const std::size_t half = c.f.count;
  const bool stream = streams<S>(c);
  const __m512i evens = _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11),
                odds = _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15);
  avx2::detail::RowAngles<Double8> angles(c);
  for (std::size_t t = 0; t < c.n; ++t) {
    Elem<S>* row = static_cast<Elem<S>*>(c.data) + static_cast<std::ptrdiff_t>(t) * c.stride;
    if (c.padding_idx >= 0 && c.positions[t] == c.padding_idx) {  // the padding row is zero: x += 0 leaves x alone
      if (!c.add)
        for (std::size_t i = 0; i < 2 * half; i += 16)
          Io<S, B>::store(row + i, _mm512_setzero_ps(), simd::first_lanes(2 * half - i < 16 ? 2 * half - i : 16));
      continue;
    }
    const std::size_t l = angles.seek(c.positions[t]);
    if (c.interleaved) {  // eight frequencies: (s0 c0 s1 c1 ... s7 c7)
      for (std::size_t i = 0; i < half; i += 8) {
        const simd::SinCos8 sc = angles.at(l, i);
        const std::size_t lanes = half - i < 8 ? 2 * (half - i) : 16;
        put16<S, B>(row + 2 * i, _mm512_permutex2var_pd(sc.s, evens, sc.c), _mm512_permutex2var_pd(sc.s, odds, sc.c),
                    c.add, lanes, stream);
      }
    } else {  // sixteen frequencies into each half
      for (std::size_t i = 0; i < half; i += 16) {
        const std::size_t lanes = half - i < 16 ? half - i : 16;
        const simd::SinCos8 a = angles.at(l, i), b = lanes > 8 ? angles.at(l, i + 8) : a;
        put16<S, B>(row + i, a.s, b.s, c.add, lanes, stream);
        put16<S, B>(row + half + i, a.c, b.c, c.add, lanes, stream);
      }
    }
  }
  if (stream) _mm_sfence();  // the non-temporal stores ordered before the caller reads the table
}

template <Storage S, bool B>
void from_float_impl(const float* src, std::size_t n, void* dst) {
  auto* d = static_cast<Elem<S>*>(dst);
  for (std::size_t i = 0; i < n; i += 16) {
    const __mmask16 m = simd::first_lanes(n - i < 16 ? n - i : 16);
    Io<S, B>::store(d + i, _mm512_maskz_loadu_ps(m, src + i), m);
  }
}

}  // namespace

void from_float(Storage s, const float* src, std::size_t n, void* dst, bool bf16_instructions) {
  PECHECK_AVX512_DISPATCH(s, bf16_instructions, from_float_impl, src, n, dst)
}

void sinusoidal_rows(Storage s, const SinusoidalCall& c, bool bf16_instructions) {
  PECHECK_AVX512_DISPATCH(s, bf16_instructions, sinusoidal_rows_impl, c)
}

}  // namespace pecheck::avx512::detail
