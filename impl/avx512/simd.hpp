// Vector building blocks of the AVX-512 kernels: 16-lane loads and stores of each storage format,
// full or masked (a masked lane is neither read nor written, so tails need no scalar loop), sin/cos
// of accurate angles in double, eight lanes, and exp in float. Included only by translation units compiled
// with -mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx512bf16 (see impl/avx2/simd.hpp's rules).
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "impl/avx2/polynomials.hpp"
#include "impl/avx512/detail.hpp"

namespace pecheck::avx512::simd {

namespace poly = avx2::poly;

using detail::Storage;

constexpr int kRoundNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

/// The first n <= 16 lanes.
inline __mmask16 first_lanes(std::size_t n) { return static_cast<__mmask16>((1u << n) - 1u); }

/// float -> bfloat16 bits in integers, round to nearest even; a NaN stays a (quiet) NaN: the
/// rounding impl/avx2/simd.hpp's bf16_round8 does, on 16 lanes.
inline __m256i bf16_round_integer(__m512 v) {
  const __m512i bits = _mm512_castps_si512(v);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
  const __m512i rounded =
      _mm512_srli_epi32(_mm512_add_epi32(bits, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff))), 16);
  const __m512i quiet = _mm512_or_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(0x40));
  return _mm512_cvtepi32_epi16(_mm512_mask_blend_epi32(_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), rounded, quiet));
}

/// The same by vcvtneps2bf16, which rounds to nearest even and quiets NaNs alike but flushes
/// subnormal inputs to zero: a vector holding one (nearly never) takes the integer rounding.
inline __m256i bf16_round_instruction(__m512 v) {
  if (_mm512_fpclass_ps_mask(v, 0x20) != 0) return bf16_round_integer(v);  // 0x20: the denormal class
  return __builtin_bit_cast(__m256i, _mm512_cvtneps_pbh(v));
}

/// Loads and stores of 16 elements (as __m512), unaligned; the masked forms touch only the lanes
/// of the mask (the others load as 0). `Bf16Instructions` picks the bf16 rounding.
template <Storage S, bool Bf16Instructions = false>
struct Io;

template <bool B>
struct Io<Storage::f32, B> {
  using T = float;
  static __m512 load(const T* p) { return _mm512_loadu_ps(p); }
  static __m512 load(const T* p, __mmask16 m) { return _mm512_maskz_loadu_ps(m, p); }
  static void store(T* p, __m512 v) { _mm512_storeu_ps(p, v); }
  static void store(T* p, __m512 v, __mmask16 m) { _mm512_mask_storeu_ps(p, m, v); }
};

template <bool B>
struct Io<Storage::bf16, B> {
  using T = std::uint16_t;
  static __m512 widen(__m256i w) { return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(w), 16)); }
  static __m256i round(__m512 v) {
    if constexpr (B)
      return bf16_round_instruction(v);
    else
      return bf16_round_integer(v);
  }
  static __m512 load(const T* p) { return widen(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }
  static __m512 load(const T* p, __mmask16 m) { return widen(_mm256_maskz_loadu_epi16(m, p)); }
  static void store(T* p, __m512 v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), round(v)); }
  static void store(T* p, __m512 v, __mmask16 m) { _mm256_mask_storeu_epi16(p, m, round(v)); }
};

template <bool B>
struct Io<Storage::f16, B> {
  using T = std::uint16_t;
  static __m512 load(const T* p) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }
  static __m512 load(const T* p, __mmask16 m) { return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p)); }
  static void store(T* p, __m512 v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtps_ph(v, kRoundNearest));
  }
  static void store(T* p, __m512 v, __mmask16 m) { _mm256_mask_storeu_epi16(p, m, _mm512_cvtps_ph(v, kRoundNearest)); }
};

/// One element through a one-lane mask, as float.
template <Storage S, bool B>
inline float get(const typename Io<S, B>::T* p) {
  return _mm512_cvtss_f32(Io<S, B>::load(p, 1));
}
template <Storage S, bool B>
inline void put(typename Io<S, B>::T* p, float v) {
  Io<S, B>::store(p, _mm512_set1_ps(v), 1);
}

struct SinCos8 {
  __m512d s, c;
};

/// impl/avx2/simd.hpp's sincos4 on eight lanes, operation for operation (the same reduction,
/// polynomials and quadrant logic, so the same results bit for bit): within ~2^-44 of the exact
/// sin and cos of p (f_hi + f_lo) for |p| < 2^24.
inline SinCos8 sincos8(__m512d p, __m512d f_hi, __m512d f_lo) {
  const __m512d a_hi = _mm512_mul_pd(p, f_hi);
  const __m512d a_lo = _mm512_fmadd_pd(p, f_lo, _mm512_fmsub_pd(p, f_hi, a_hi));
  const __m512d k = _mm512_roundscale_pd(_mm512_mul_pd(a_hi, _mm512_set1_pd(poly::kTwoOverPi)), kRoundNearest);
  __m512d r = _mm512_fnmadd_pd(k, _mm512_set1_pd(poly::kHalfPi1), a_hi);
  r = _mm512_add_pd(_mm512_fnmadd_pd(k, _mm512_set1_pd(poly::kHalfPi2), r), a_lo);
  const __m512d r2 = _mm512_mul_pd(r, r);

  __m512d ps = _mm512_set1_pd(poly::kSin[0]);
#pragma GCC unroll 8
  for (std::size_t i = 1; i < sizeof poly::kSin / sizeof poly::kSin[0]; ++i)
    ps = _mm512_fmadd_pd(ps, r2, _mm512_set1_pd(poly::kSin[i]));
  const __m512d sin_r = _mm512_fmadd_pd(_mm512_mul_pd(ps, r2), r, r);

  __m512d pc = _mm512_set1_pd(poly::kCos[0]);
#pragma GCC unroll 8
  for (std::size_t i = 1; i + 1 < sizeof poly::kCos / sizeof poly::kCos[0]; ++i)
    pc = _mm512_fmadd_pd(pc, r2, _mm512_set1_pd(poly::kCos[i]));
  const __m512d cos_r =
      _mm512_fmadd_pd(pc, r2, _mm512_set1_pd(poly::kCos[sizeof poly::kCos / sizeof poly::kCos[0] - 1]));

  // Quadrant q = k mod 4 from the low bits of k + 1.5 * 2^52: sin = (sin r, cos r, -sin r, -cos r)[q],
  // cos = (cos r, -sin r, -cos r, sin r)[q].
  const __m512i q = _mm512_castpd_si512(_mm512_add_pd(k, _mm512_set1_pd(0x1.8p52)));
  const __mmask8 odd = _mm512_test_epi64_mask(q, _mm512_set1_epi64(1));
  const __m512d s = _mm512_mask_blend_pd(odd, sin_r, cos_r), c = _mm512_mask_blend_pd(odd, cos_r, sin_r);
  const __m512i sign = _mm512_set1_epi64(INT64_MIN);
  const __m512i s_neg = _mm512_and_si512(_mm512_slli_epi64(q, 62), sign);
  const __m512i c_neg = _mm512_and_si512(_mm512_slli_epi64(_mm512_add_epi64(q, _mm512_set1_epi64(1)), 62), sign);
  return {_mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(s), s_neg)),
          _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(c), c_neg))};
}

/// impl/avx2/simd.hpp's exp8 on 16 lanes, operation for operation (the same results): e^x within
/// ~1u over [-87.3, 88.7], 0 below, +inf above, NaN stays NaN.
inline __m512 exp16(__m512 x) {
  const __m512 clamped = _mm512_min_ps(_mm512_set1_ps(88.0f), x);  // min returns x when x is NaN
  const __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(clamped, _mm512_set1_ps(poly::kLog2e)), kRoundNearest);
  __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(poly::kLn2_1), clamped);
  r = _mm512_fnmadd_ps(k, _mm512_set1_ps(poly::kLn2_2), r);
  __m512 p = _mm512_set1_ps(poly::kExp[0]);
#pragma GCC unroll 8
  for (std::size_t i = 1; i < sizeof poly::kExp / sizeof poly::kExp[0]; ++i)
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(poly::kExp[i]));
  const __m512 k_lo = _mm512_min_ps(k, _mm512_set1_ps(127.0f));
  const __m512i e = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(k_lo), _mm512_set1_epi32(127)), 23);
  __m512 y = _mm512_mul_ps(p, _mm512_castsi512_ps(e));
  y = _mm512_mul_ps(y, _mm512_mask_blend_ps(_mm512_cmp_ps_mask(k, _mm512_set1_ps(127.0f), _CMP_GT_OQ),
                                            _mm512_set1_ps(1.0f), _mm512_set1_ps(2.0f)));
  y = _mm512_maskz_mov_ps(~_mm512_cmp_ps_mask(x, _mm512_set1_ps(-87.3f), _CMP_LT_OQ), y);  // false for NaN
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, _mm512_set1_ps(88.72284f), _CMP_GT_OQ), y,
                              _mm512_set1_ps(__builtin_inff()));
}

inline float hmax(__m512 v) {
  const __m256 h = _mm256_max_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

inline float hsum(__m512 v) {
  const __m256 h = _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

/// Calls fn<storage, bf16 instructions>(args...) for the storage and bf16 rounding chosen at run time.
#define PECHECK_AVX512_DISPATCH(storage, bf16_instructions, fn, ...)                                 \
  switch (storage) {                                                                                 \
    case ::pecheck::avx512::detail::Storage::f32:                                                    \
      return fn<::pecheck::avx512::detail::Storage::f32, false>(__VA_ARGS__);                        \
    case ::pecheck::avx512::detail::Storage::bf16:                                                   \
      if (bf16_instructions) return fn<::pecheck::avx512::detail::Storage::bf16, true>(__VA_ARGS__); \
      return fn<::pecheck::avx512::detail::Storage::bf16, false>(__VA_ARGS__);                       \
    case ::pecheck::avx512::detail::Storage::f16:                                                    \
      return fn<::pecheck::avx512::detail::Storage::f16, false>(__VA_ARGS__);                        \
  }

}  // namespace pecheck::avx512::simd
