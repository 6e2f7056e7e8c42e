// The AVX-512 instruction set as impl/simd/'s kernel bodies see it: 16-lane loads and stores of each
// storage format, full or masked (a masked lane is neither read nor written, so tails need no
// scalar loop), and the width trait Avx512 (16 floats, 8 doubles). Included only by translation
// units compiled with -mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx512bf16; never together with
// impl/avx2/simd.hpp, whose inline functions would then be built for AVX-512 in one unit.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "impl/avx512/detail.hpp"
#include "impl/simd/lane_ops.hpp"
#include "impl/simd/math.hpp"

namespace pecheck::avx512::isa {

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

/// Loads and stores of 16 elements (as __m512), unaligned; the masked forms (_first) touch only
/// the lanes of the mask (the others load as 0). `Bf16Instructions` picks the bf16 rounding.
template <Storage S, bool Bf16Instructions = false>
struct Io;

template <bool B>
struct Io<Storage::f32, B> {
  using T = float;
  static __m512 load(const T* p) { return _mm512_loadu_ps(p); }
  static __m512 load_first(const T* p, __mmask16 m) { return _mm512_maskz_loadu_ps(m, p); }
  static void store(T* p, __m512 v) { _mm512_storeu_ps(p, v); }
  static void store_first(T* p, __m512 v, __mmask16 m) { _mm512_mask_storeu_ps(p, m, v); }
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
  static __m512 load_first(const T* p, __mmask16 m) { return widen(_mm256_maskz_loadu_epi16(m, p)); }
  static void store(T* p, __m512 v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), round(v)); }
  static void store_first(T* p, __m512 v, __mmask16 m) { _mm256_mask_storeu_epi16(p, m, round(v)); }
  /// Two vectors at once (RoPE's half-split pair): one denormal test for both and, with the bf16
  /// instructions, one vcvtne2ps2bf16 for both.
  static void store_pair(T* p, __m512 a, T* q, __m512 b) {
    if constexpr (B) {
      if ((_mm512_fpclass_ps_mask(a, 0x20) | _mm512_fpclass_ps_mask(b, 0x20)) == 0) {
        const __m512i both = __builtin_bit_cast(__m512i, _mm512_cvtne2ps_pbh(b, a));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_castsi512_si256(both));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(q), _mm512_extracti64x4_epi64(both, 1));
        return;
      }
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), bf16_round_integer(a));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q), bf16_round_integer(b));
  }
};

template <bool B>
struct Io<Storage::f16, B> {
  using T = std::uint16_t;
  static __m512 load(const T* p) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }
  static __m512 load_first(const T* p, __mmask16 m) { return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p)); }
  static void store(T* p, __m512 v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtps_ph(v, kRoundNearest));
  }
  static void store_first(T* p, __m512 v, __mmask16 m) {
    _mm256_mask_storeu_epi16(p, m, _mm512_cvtps_ph(v, kRoundNearest));
  }
};

/// Io<S, B> as impl/simd/'s bodies call it (the names every width's Io has): one element through a
/// one-lane mask.
template <Storage S, bool B>
struct StorageIo : Io<S, B> {
  static float get(const typename Io<S, B>::T* p) { return _mm512_cvtss_f32(Io<S, B>::load_first(p, 1)); }
  static void put(typename Io<S, B>::T* p, float v) { Io<S, B>::store_first(p, _mm512_set1_ps(v), 1); }
};

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

/// impl/simd/'s width trait for AVX-512: R holds W = 16 floats, D::R 8 doubles, H::R 8 floats.
/// A mask M is an opmask; select(m, a, b) is b where m, a elsewhere. `Bf16Instructions` picks the
/// bf16 rounding of the stores (Io).
template <bool Bf16Instructions>
struct Avx512 {
  PECHECK_SIMD_LANE_TYPES(16, __m512, __m512i, __mmask16)
  template <Storage S>
  using Io = StorageIo<S, Bf16Instructions>;
  template <Storage S>
  using Elem = typename Io<S>::T;

  // ---- tuning (impl/simd/rope_body.hpp, attention_body.hpp say what each does) ----
  static constexpr std::size_t kChains = 2;  ///< attention: 16 chains in 32 registers
  /// RoPE's last token: with one head a pass the coefficient loads outnumbered the data's 5 to 2
  /// and L1 loads were the limit (800 ns a decode step, 500 with 8, Zen 5); 8 heads of 128 floats
  /// span 4 KiB, so a store to one head and a load from another never alias in the store buffer.
  static constexpr int kHeadsPerPass = 8;
  /// 16-bit tensors stream with the next token prefetched too: without it the 512-bit kernel ran
  /// at a third of the AVX2 one's speed on tensors in DRAM (Zen 5).
  static constexpr bool kPrefetchNarrow = true;
  static constexpr bool kMaskedTails = true;  ///< RoPE's tails in one masked vector

  struct D {
    PECHECK_SIMD_LANE_TYPES(8, __m512d, __m512i, __mmask8)
    PECHECK_SIMD_LANE_OPS(R, double, _mm512, pd)
    static R round(R x) { return _mm512_roundscale_pd(x, kRoundNearest); }
    static R xor_bits(R x, I bits) { return _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(x), bits)); }
    static R select(M m, R a, R b) { return _mm512_mask_blend_pd(m, a, b); }
    static R negate(R x) { return xor_bits(x, _mm512_set1_epi64(INT64_MIN)); }
    static R alternate_sign(R x) {
      return xor_bits(x, _mm512_setr_epi64(INT64_MIN, 0, INT64_MIN, 0, INT64_MIN, 0, INT64_MIN, 0));
    }
    static R dup_low(R x) { return _mm512_permutexvar_pd(_mm512_setr_epi64(0, 0, 1, 1, 2, 2, 3, 3), x); }
    static R dup_high(R x) { return _mm512_permutexvar_pd(_mm512_setr_epi64(4, 4, 5, 5, 6, 6, 7, 7), x); }
    static I bits(R x) { return _mm512_castpd_si512(x); }
    static I next(I q) { return _mm512_add_epi64(q, _mm512_set1_epi64(1)); }
    static M odd(I q) { return _mm512_test_epi64_mask(q, _mm512_set1_epi64(1)); }
    static R sign_of_bit1(I q) {
      return _mm512_castsi512_pd(_mm512_and_si512(_mm512_slli_epi64(q, 62), _mm512_set1_epi64(INT64_MIN)));
    }
    /// (s0 .. s7), (c0 .. c7) -> (s0 c0 .. s3 c3), (s4 c4 .. s7 c7).
    static void interleave(R s, R c, R& lo, R& hi) {
      lo = _mm512_permutex2var_pd(s, _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11), c);
      hi = _mm512_permutex2var_pd(s, _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15), c);
    }
  };

  struct H {
    PECHECK_SIMD_LANE_TYPES(8, __m256, __m256i, __mmask8)
    static void store(float* p, R v) { _mm256_storeu_ps(p, v); }
    static R abs(R x) { return _mm256_and_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff))); }
    static M gt(R a, R b) { return _mm256_cmp_ps_mask(a, b, _CMP_GT_OQ); }
    static R select(M m, R a, R b) { return _mm256_mask_blend_ps(m, a, b); }
    static R sign_where(M m) { return _mm256_maskz_mov_ps(m, _mm256_set1_ps(-0.0f)); }
  };
  static typename H::R narrow(typename D::R x) { return _mm512_cvtpd_ps(x); }
  static typename D::R widen(typename H::R x) { return _mm512_cvtps_pd(x); }
  static R join(typename H::R lo, typename H::R hi) { return _mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1); }
  static typename H::R lower(R x) { return _mm512_castps512_ps256(x); }
  static typename H::R upper(R x) { return _mm512_extractf32x8_ps(x, 1); }
  /// (s0 .. s7), (c0 .. c7) -> (s0 c0 s1 c1 .. s7 c7).
  static R interleave(typename H::R s, typename H::R c) {
    const __m512i order = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    return _mm512_permutex2var_ps(_mm512_castps256_ps512(s), order, _mm512_castps256_ps512(c));
  }

  PECHECK_SIMD_LANE_OPS(R, float, _mm512, ps)
  PECHECK_SIMD_FLOAT_OPS(R, _mm512, 512)
  /// A non-temporal store of 16 floats at a 16-byte aligned p: one 64-byte store where aligned,
  /// else four of 16 bytes.
  static void stream(float* p, R v) {
    if (reinterpret_cast<std::uintptr_t>(p) % 64 == 0) {
      _mm512_stream_ps(p, v);
      return;
    }
    _mm_stream_ps(p, _mm512_castps512_ps128(v));
    _mm_stream_ps(p + 4, _mm512_extractf32x4_ps(v, 1));
    _mm_stream_ps(p + 8, _mm512_extractf32x4_ps(v, 2));
    _mm_stream_ps(p + 12, _mm512_extractf32x4_ps(v, 3));
  }
  /// A broadcast operand folds into the FMA here, where AVX2 needs a separate broadcast.
  static R broadcast(const float* p) { return _mm512_set1_ps(*p); }
  static R round(R x) { return _mm512_roundscale_ps(x, kRoundNearest); }
  static R abs(R x) { return _mm512_abs_ps(x); }
  /// vrangeps 0x0a: min(|a|, |b|) with the sign cleared, in one instruction.
  static R min_abs(R a, R b) { return _mm512_range_ps(a, b, 0x0a); }
  static M lt(R a, R b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
  static M gt(R a, R b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
  static M ne(R a, R b) { return _mm512_cmp_ps_mask(a, b, _CMP_NEQ_OQ); }
  static M both(M a, M b) { return a & b; }
  static bool any(M m) { return m != 0; }
  static R select(M m, R a, R b) { return _mm512_mask_blend_ps(m, a, b); }
  static M sign_mask(R x) { return _mm512_movepi32_mask(_mm512_castps_si512(x)); }
  static float hmax(R v) { return isa::hmax(v); }
  static float hsum(R v) { return isa::hsum(v); }

  /// The first n < W lanes, for Io's masked loads and stores: masked lanes are neither read nor
  /// written.
  using Tail = __mmask16;
  static Tail first(std::size_t n) { return first_lanes(n); }
};

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

}  // namespace pecheck::avx512::isa
