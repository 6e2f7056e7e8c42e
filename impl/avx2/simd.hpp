// The AVX2 instruction set as impl/simd/'s kernel bodies see it: loads and stores of each storage
// format (rounding to nearest even on the way out), and the width trait Avx2 (8 floats, 4 doubles)
// whose one-line operations the bodies are written over. Included only by translation units
// compiled with -mavx2 -mfma -mf16c.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "impl/avx2/detail.hpp"
#include "impl/simd/lane_ops.hpp"
#include "impl/simd/math.hpp"

namespace pecheck::avx2::isa {

using detail::Storage;

// ---- storage formats -------------------------------------------------------------------------

/// float -> bfloat16 bits, round to nearest even, for a vector that holds no NaN.
inline __m256i bf16_round8_numbers(__m256 v) {
  const __m256i bits = _mm256_castps_si256(v);
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
  return _mm256_srli_epi32(_mm256_add_epi32(bits, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff))), 16);
}

/// float -> bfloat16 bits, round to nearest even; a NaN stays a (quiet) NaN. The NaN fix-up runs
/// only when the vector holds one (a compare and a mask test otherwise, where it cost four
/// operations on every vector of a bf16 store).
inline __m256i bf16_round8(__m256 v) {
  const __m256i rounded = bf16_round8_numbers(v);
  const __m256 nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
  if (_mm256_movemask_ps(nan) == 0) return rounded;
  const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(_mm256_castps_si256(v), 16), _mm256_set1_epi32(0x40));
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

/// Loads and stores of 8 elements (as __m256), stores of 4 (as __m128), unaligned, and of one.
template <Storage S>
struct Io;

template <>
struct Io<Storage::f32> {
  using T = float;
  static __m256 load(const T* p) { return _mm256_loadu_ps(p); }
  static void store(T* p, __m256 v) { _mm256_storeu_ps(p, v); }
  static void store4(T* p, __m128 v) { _mm_storeu_ps(p, v); }
  static float get(const T* p) { return *p; }
  static void put(T* p, float v) { *p = v; }
};

template <>
struct Io<Storage::bf16> {
  using T = std::uint16_t;
  static __m256 load(const T* p) {
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
  }
  static void store(T* p, __m256 v) {
    const __m256i r = bf16_round8(v);  // values < 2^16: the signed-saturating pack keeps them
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0b1000);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(packed));
  }
  /// Two vectors at once (RoPE's half-split pair): one NaN test, one pack and one permute for both.
  static void store_pair(T* p, __m256 a, T* q, __m256 b) {
    const bool numbers = _mm256_movemask_ps(_mm256_cmp_ps(a, b, _CMP_UNORD_Q)) == 0;  // one test: a NaN in either
    const __m256i ra = numbers ? bf16_round8_numbers(a) : bf16_round8(a);
    const __m256i rb = numbers ? bf16_round8_numbers(b) : bf16_round8(b);
    const __m256i both = _mm256_permute4x64_epi64(_mm256_packus_epi32(ra, rb), 0b11011000);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(both));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q), _mm256_extracti128_si256(both, 1));
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
  static __m256 load(const T* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
  static void store(T* p, __m256 v) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(v, kRoundNearest));
  }
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

/// Io<S> as impl/simd/'s bodies call it (the names every width's Io has): the first n < 8 lanes
/// through memory, never touching p + n on.
template <Storage S>
struct StorageIo : Io<S> {
  static __m256 load_first(const typename Io<S>::T* p, std::size_t n) { return load_partial<S>(p, n); }
  static void store_first(typename Io<S>::T* p, __m256 v, std::size_t n) { store_partial<S>(p, v, n); }
};

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

/// impl/simd/'s width trait for AVX2: R holds W = 8 floats, D::R 4 doubles, H::R 4 floats (the
/// floats of one D::R). A mask M is a compare's result (every bit of a true lane set); select(m,
/// a, b) is b where m, a elsewhere.
struct Avx2 {
  PECHECK_SIMD_LANE_TYPES(8, __m256, __m256i, __m256)
  template <Storage S>
  using Io = StorageIo<S>;
  template <Storage S>
  using Elem = typename Io<S>::T;

  // ---- tuning (impl/simd/rope_body.hpp, attention_body.hpp say what each does) ----
  static constexpr std::size_t kChains = 1;  ///< attention: 16 registers hold one chain of chunks
  /// RoPE's last token (a decode step's only one): a block's coefficients, loaded once, serve this
  /// many heads (the decode step took 0.9x the time of one head a pass, Zen 5). Four heads of 128
  /// floats span 2 KiB, so a store to one head and a load from another never sit 4 KiB apart,
  /// where they would alias in the store buffer (eight did).
  static constexpr int kHeadsPerPass = 4;
  static constexpr bool kPrefetchNarrow = false;
  /// RoPE's tails (pairs past the last whole vector) in double, rounded once; partial vectors are
  /// built through memory here (no masked loads of 16-bit lanes before AVX-512).
  static constexpr bool kMaskedTails = false;

  struct D {
    PECHECK_SIMD_LANE_TYPES(4, __m256d, __m256i, __m256d)
    PECHECK_SIMD_LANE_OPS(R, double, _mm256, pd)
    static R round(R x) { return _mm256_round_pd(x, kRoundNearest); }
    static R select(M m, R a, R b) { return _mm256_blendv_pd(a, b, m); }
    static R negate(R x) { return _mm256_xor_pd(x, _mm256_set1_pd(-0.0)); }
    /// x with the sign of every other lane flipped, from lane 0.
    static R alternate_sign(R x) { return _mm256_xor_pd(x, _mm256_setr_pd(-0.0, 0.0, -0.0, 0.0)); }
    /// (x0 x0 x1 x1) and (x2 x2 x3 x3).
    static R dup_low(R x) { return _mm256_permute4x64_pd(x, 0b01010000); }
    static R dup_high(R x) { return _mm256_permute4x64_pd(x, 0b11111010); }
    static I bits(R x) { return _mm256_castpd_si256(x); }
    static I next(I q) { return _mm256_add_epi64(q, _mm256_set1_epi64x(1)); }
    static M odd(I q) { return _mm256_castsi256_pd(_mm256_slli_epi64(q, 63)); }  // the sign bit decides
    static R sign_of_bit1(I q) { return _mm256_and_pd(_mm256_castsi256_pd(_mm256_slli_epi64(q, 62)), set1(-0.0)); }
    /// (s0 s1 s2 s3), (c0 c1 c2 c3) -> (s0 c0 s1 c1), (s2 c2 s3 c3). 128-bit shuffles: a
    /// lane-crossing 256-bit permute costs several micro-ops on Zen 1 and 2.
    static void interleave(R s, R c, R& lo, R& hi) {
      const __m128d s0 = _mm256_castpd256_pd128(s), s1 = _mm256_extractf128_pd(s, 1);
      const __m128d c0 = _mm256_castpd256_pd128(c), c1 = _mm256_extractf128_pd(c, 1);
      lo = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_unpacklo_pd(s0, c0)), _mm_unpackhi_pd(s0, c0), 1);
      hi = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_unpacklo_pd(s1, c1)), _mm_unpackhi_pd(s1, c1), 1);
    }
  };

  struct H {
    PECHECK_SIMD_LANE_TYPES(4, __m128, __m128i, __m128)
    static void store(float* p, R v) { _mm_storeu_ps(p, v); }
    static R abs(R x) { return _mm_and_ps(x, _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff))); }
    static M gt(R a, R b) { return _mm_cmpgt_ps(a, b); }
    static R select(M m, R a, R b) { return _mm_blendv_ps(a, b, m); }
    static R sign_where(M m) { return _mm_and_ps(m, _mm_set1_ps(-0.0f)); }
  };
  static H::R narrow(D::R x) { return _mm256_cvtpd_ps(x); }
  static D::R widen(H::R x) { return _mm256_cvtps_pd(x); }
  static R join(H::R lo, H::R hi) { return _mm256_set_m128(hi, lo); }
  static H::R lower(R x) { return _mm256_castps256_ps128(x); }
  static H::R upper(R x) { return _mm256_extractf128_ps(x, 1); }
  /// (s0 s1 s2 s3), (c0 c1 c2 c3) -> (s0 c0 s1 c1 s2 c2 s3 c3), by 128-bit unpacks.
  static R interleave(H::R s, H::R c) { return join(_mm_unpacklo_ps(s, c), _mm_unpackhi_ps(s, c)); }

  PECHECK_SIMD_LANE_OPS(R, float, _mm256, ps)
  PECHECK_SIMD_FLOAT_OPS(R, _mm256, 256)
  /// A non-temporal store of 8 floats at a 16-byte aligned p.
  static void stream(float* p, R v) {
    _mm_stream_ps(p, lower(v));
    _mm_stream_ps(p + 4, upper(v));
  }
  static R broadcast(const float* p) { return _mm256_broadcast_ss(p); }
  static R round(R x) { return _mm256_round_ps(x, kRoundNearest); }
  static R abs(R x) { return _mm256_and_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff))); }
  static R min_abs(R a, R b) { return _mm256_min_ps(abs(a), abs(b)); }
  static M lt(R a, R b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
  static M gt(R a, R b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
  static M ne(R a, R b) { return _mm256_cmp_ps(a, b, _CMP_NEQ_OQ); }
  static M both(M a, M b) { return _mm256_and_ps(a, b); }
  static bool any(M m) { return _mm256_movemask_ps(m) != 0; }
  static R select(M m, R a, R b) { return _mm256_blendv_ps(a, b, m); }
  /// The mask of the lanes whose sign bit is set.
  static M sign_mask(R x) { return x; }
  static float hmax(R v) { return isa::hmax(v); }
  static float hsum(R v) { return isa::hsum(v); }

  /// The first n < W lanes, for Io's partial loads and stores: their count.
  using Tail = std::size_t;
  static Tail first(std::size_t n) { return n; }
};

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

}  // namespace pecheck::avx2::isa
