// Vector building blocks of the AVX2 kernels: loads and stores of each storage format (rounding
// to nearest even on the way out), sin/cos of accurate angles in double, and exp in float.
// Included only by translation units compiled with -mavx2 -mfma -mf16c.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "impl/avx2/detail.hpp"
#include "impl/avx2/polynomials.hpp"

namespace pecheck::avx2::simd {

using detail::Storage;

// ---- storage formats -------------------------------------------------------------------------

/// float -> bfloat16 bits, round to nearest even; a NaN stays a (quiet) NaN. The NaN fix-up runs
/// only when the vector holds one (a compare and a mask test otherwise, where it cost four
/// operations on every vector of a bf16 store).
inline __m256i bf16_round8(__m256 v) {
  const __m256i bits = _mm256_castps_si256(v);
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
  const __m256i rounded =
      _mm256_srli_epi32(_mm256_add_epi32(bits, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff))), 16);
  const __m256 nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
  if (_mm256_movemask_ps(nan) == 0) return rounded;
  const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(0x40));
  return _mm256_blendv_epi8(rounded, quiet, _mm256_castps_si256(nan));
}

inline __m128i bf16_round4(__m128 v) {
  const __m128i bits = _mm_castps_si128(v);
  const __m128i lsb = _mm_and_si128(_mm_srli_epi32(bits, 16), _mm_set1_epi32(1));
  const __m128i rounded = _mm_srli_epi32(_mm_add_epi32(bits, _mm_add_epi32(lsb, _mm_set1_epi32(0x7fff))), 16);
  const __m128i quiet = _mm_or_si128(_mm_srli_epi32(bits, 16), _mm_set1_epi32(0x40));
  const __m128i nan = _mm_castps_si128(_mm_cmpunord_ps(v, v));
  return _mm_blendv_epi8(rounded, quiet, nan);
}

constexpr int kRoundNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

/// Loads and stores of 8 (as __m256) or 4 (as __m128) elements, unaligned, and of one.
template <Storage S>
struct Io;

template <>
struct Io<Storage::f32> {
  using T = float;
  static __m256 load8(const T* p) { return _mm256_loadu_ps(p); }
  static void store8(T* p, __m256 v) { _mm256_storeu_ps(p, v); }
  static __m128 load4(const T* p) { return _mm_loadu_ps(p); }
  static void store4(T* p, __m128 v) { _mm_storeu_ps(p, v); }
  static float get(const T* p) { return *p; }
  static void put(T* p, float v) { *p = v; }
};

template <>
struct Io<Storage::bf16> {
  using T = std::uint16_t;
  static __m256 load8(const T* p) {
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
  }
  static void store8(T* p, __m256 v) {
    const __m256i r = bf16_round8(v);  // values < 2^16: the signed-saturating pack keeps them
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0b1000);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(packed));
  }
  static __m128 load4(const T* p) {
    const __m128i w = _mm_cvtepu16_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
    return _mm_castsi128_ps(_mm_slli_epi32(w, 16));
  }
  static void store4(T* p, __m128 v) {
    const __m128i r = bf16_round4(v);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm_packus_epi32(r, r));
  }
  static float get(const T* p) {
    const std::uint32_t b = static_cast<std::uint32_t>(*p) << 16;
    float f;
    std::memcpy(&f, &b, sizeof f);
    return f;
  }
  static void put(T* p, float v) {
    alignas(16) std::uint16_t out[8];
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out),
                     _mm_packus_epi32(bf16_round4(_mm_set1_ps(v)), _mm_setzero_si128()));
    *p = out[0];
  }
};

template <>
struct Io<Storage::f16> {
  using T = std::uint16_t;
  static __m256 load8(const T* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
  static void store8(T* p, __m256 v) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(v, kRoundNearest));
  }
  static __m128 load4(const T* p) { return _mm_cvtph_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))); }
  static void store4(T* p, __m128 v) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm_cvtps_ph(v, kRoundNearest));
  }
  static float get(const T* p) { return _cvtsh_ss(*p); }
  // The vector conversion's lane 0, not _cvtss_sh: clang 14 defines that one as a macro over a C99
  // compound literal, an error under -Wpedantic -Werror.
  static void put(T* p, float v) {
    *p = static_cast<T>(_mm_extract_epi16(_mm_cvtps_ph(_mm_set_ss(v), kRoundNearest), 0));
  }
};

/// The first n < 8 elements, zeros after: never reads past p + n.
template <Storage S>
__m256 load_partial(const typename Io<S>::T* p, std::size_t n) {
  alignas(32) float buf[8] = {};
  for (std::size_t i = 0; i < n; ++i) buf[i] = Io<S>::get(p + i);
  return _mm256_load_ps(buf);
}

/// Stores the first n < 8 lanes: never writes past p + n.
template <Storage S>
void store_partial(typename Io<S>::T* p, __m256 v, std::size_t n) {
  alignas(32) float buf[8];
  _mm256_store_ps(buf, v);
  for (std::size_t i = 0; i < n; ++i) Io<S>::put(p + i, buf[i]);
}

// ---- sin and cos of p * f in double ----------------------------------------------------------

struct SinCos4 {
  __m256d s, c;
};

/// sin and cos of p * (f_hi + f_lo) for |p| < 2^24, four lanes. The angle is a_hi + a_lo with
/// a_lo exact from the FMA (plus p f_lo); it is reduced by k pi/2, k = nearest(a_hi 2/pi), with pi/2
/// split as P1 (29 bits, so k P1 is exact for |k| < 2^24) + P2 (their residue is 1.6e-26, times
/// k below 2^-62). On |r| <= pi/4 (a little beyond when a_hi 2/pi rounds), Taylor polynomials of
/// degree 13 (sin) and 14 (cos) leave 2^-45 and 2^-49; all told the results are within ~2^-44 of
/// the exact sin and cos, far below fp32's half-unit 2^-25.
inline SinCos4 sincos4(__m256d p, __m256d f_hi, __m256d f_lo) {
  const __m256d a_hi = _mm256_mul_pd(p, f_hi);
  const __m256d a_lo = _mm256_fmadd_pd(p, f_lo, _mm256_fmsub_pd(p, f_hi, a_hi));
  const __m256d k = _mm256_round_pd(_mm256_mul_pd(a_hi, _mm256_set1_pd(poly::kTwoOverPi)), kRoundNearest);
  __m256d r = _mm256_fnmadd_pd(k, _mm256_set1_pd(poly::kHalfPi1), a_hi);
  r = _mm256_add_pd(_mm256_fnmadd_pd(k, _mm256_set1_pd(poly::kHalfPi2), r), a_lo);
  const __m256d r2 = _mm256_mul_pd(r, r);

  __m256d ps = _mm256_set1_pd(poly::kSin[0]);
#pragma GCC unroll 8
  for (std::size_t i = 1; i < sizeof poly::kSin / sizeof poly::kSin[0]; ++i)
    ps = _mm256_fmadd_pd(ps, r2, _mm256_set1_pd(poly::kSin[i]));
  const __m256d sin_r = _mm256_fmadd_pd(_mm256_mul_pd(ps, r2), r, r);

  __m256d pc = _mm256_set1_pd(poly::kCos[0]);
#pragma GCC unroll 8
  for (std::size_t i = 1; i + 1 < sizeof poly::kCos / sizeof poly::kCos[0]; ++i)
    pc = _mm256_fmadd_pd(pc, r2, _mm256_set1_pd(poly::kCos[i]));
  const __m256d cos_r =
      _mm256_fmadd_pd(pc, r2, _mm256_set1_pd(poly::kCos[sizeof poly::kCos / sizeof poly::kCos[0] - 1]));

  // Quadrant q = k mod 4 from the low bits of k + 1.5 * 2^52 (two's complement, so k < 0 works):
  // sin = (sin r, cos r, -sin r, -cos r)[q], cos = (cos r, -sin r, -cos r, sin r)[q].
  const __m256i q = _mm256_castpd_si256(_mm256_add_pd(k, _mm256_set1_pd(0x1.8p52)));
  const __m256d odd = _mm256_castsi256_pd(_mm256_slli_epi64(q, 63));  // sign bit set when q odd
  const __m256d s = _mm256_blendv_pd(sin_r, cos_r, odd);
  const __m256d c = _mm256_blendv_pd(cos_r, sin_r, odd);
  const __m256d sign = _mm256_set1_pd(-0.0);
  const __m256d s_neg = _mm256_and_pd(_mm256_castsi256_pd(_mm256_slli_epi64(q, 62)), sign);
  const __m256d c_neg =
      _mm256_and_pd(_mm256_castsi256_pd(_mm256_slli_epi64(_mm256_add_epi64(q, _mm256_set1_epi64x(1)), 62)), sign);
  return {_mm256_xor_pd(s, s_neg), _mm256_xor_pd(c, c_neg)};
}

// ---- exp in float ----------------------------------------------------------------------------

/// e^x for 8 floats: 2^k e^r with k = nearest(x log2 e), r = x - k ln 2 (ln 2 in two parts, the
/// first of 16 bits so k ln2_hi is exact), and the degree-7 Taylor polynomial on |r| <= ln2/2
/// (truncation 5e-9, ~0.1 u); Horner in fp32 adds ~1u. Below -87.3 the result is 0 (the weights
/// it feeds are relative to a maximum of 1); NaN stays NaN; +inf stays inf, -inf gives 0.
inline __m256 exp8(__m256 x) {
  const __m256 clamped = _mm256_min_ps(_mm256_set1_ps(88.0f), x);  // min_ps returns x when x is NaN
  const __m256 k = _mm256_round_ps(_mm256_mul_ps(clamped, _mm256_set1_ps(poly::kLog2e)), kRoundNearest);
  __m256 r = _mm256_fnmadd_ps(k, _mm256_set1_ps(poly::kLn2_1), clamped);
  r = _mm256_fnmadd_ps(k, _mm256_set1_ps(poly::kLn2_2), r);
  __m256 p = _mm256_set1_ps(poly::kExp[0]);
#pragma GCC unroll 8
  for (std::size_t i = 1; i < sizeof poly::kExp / sizeof poly::kExp[0]; ++i)
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(poly::kExp[i]));
  // 2^k for k in [-126, 127] built in the exponent field; k = 128 (x in [88, 88.72]) as 2 * 2^127.
  const __m256 k_lo = _mm256_min_ps(k, _mm256_set1_ps(127.0f));
  const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(k_lo), _mm256_set1_epi32(127)), 23);
  __m256 y = _mm256_mul_ps(p, _mm256_castsi256_ps(e));
  y = _mm256_mul_ps(y, _mm256_blendv_ps(_mm256_set1_ps(1.0f), _mm256_set1_ps(2.0f),
                                        _mm256_cmp_ps(k, _mm256_set1_ps(127.0f), _CMP_GT_OQ)));
  const __m256 tiny = _mm256_cmp_ps(x, _mm256_set1_ps(-87.3f), _CMP_LT_OQ);  // false for NaN
  y = _mm256_andnot_ps(tiny, y);
  const __m256 huge = _mm256_cmp_ps(x, _mm256_set1_ps(88.72284f), _CMP_GT_OQ);
  return _mm256_blendv_ps(y, _mm256_set1_ps(__builtin_inff()), huge);
}

inline float hmax(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

/// Calls fn<Storage::...>(args...) for the storage chosen at run time.
#define PECHECK_AVX2_DISPATCH(storage, fn, ...)                       \
  switch (storage) {                                                  \
    case ::pecheck::avx2::detail::Storage::f32:                       \
      return fn<::pecheck::avx2::detail::Storage::f32>(__VA_ARGS__);  \
    case ::pecheck::avx2::detail::Storage::bf16:                      \
      return fn<::pecheck::avx2::detail::Storage::bf16>(__VA_ARGS__); \
    case ::pecheck::avx2::detail::Storage::f16:                       \
      return fn<::pecheck::avx2::detail::Storage::f16>(__VA_ARGS__);  \
  }

}  // namespace pecheck::avx2::simd
