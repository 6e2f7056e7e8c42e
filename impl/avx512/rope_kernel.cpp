// AVX-512 RoPE in place: impl/avx2/rope_kernel.cpp's arithmetic on 16 lanes. fp32 tensors rotate
// in fp32 with cos and sin as float pairs (hi + lo), the larger coefficient's FMA outermost (within
// 1.71u normwise per pair, docs/error-model.md section 4.1); bf16 and fp16 ones in plain fp32.
// Each lane computes exactly what the AVX2 kernel's lane computes, so the two agree bit for bit,
// except the tails: AVX2 rotates them in double, this kernel with masked vectors (within the same
// bound). cos and sin come from simd::sincos8 once per token and serve every head of every tensor.
#include <cmath>

#include "impl/avx512/simd.hpp"

namespace pecheck::avx512::detail {

namespace {

using simd::Io;

template <Storage S>
using Elem = typename Io<S>::T;

/// The seven per-lane coefficient arrays by blocks of 16 lanes (block b: lanes [16b, 16b + 16) of
/// ka, kb, sw, cl, sl, ch, sh), one base pointer and constant offsets for the rotation loop.
enum Array : std::size_t { kKa, kKb, kSw, kCl, kSl, kCh, kSh, kArrays };
constexpr std::size_t kLanes = 16, kBlock = kLanes * kArrays;

/// One token's coefficients, in the call's (64-byte aligned) scratch.
struct Coefficients {
  double *c, *s;  // per pair, times the magnitude
  float* blocks;  // per output lane, by blocks; sw's sign bit set where a = other
  float* at(Array a, std::size_t j) const { return blocks + j / kLanes * kBlock + a * kLanes + j % kLanes; }
};

Coefficients views(const RopeCall& call) {
  const std::size_t P = avx2::detail::padded8(call.f.count);
  return {call.scratch, call.scratch + P, reinterpret_cast<float*>(call.scratch + 2 * P)};
}

/// Stores the coefficients of lanes [j, j + 8) from cos and sin' (signs applied) in double: all
/// seven arrays for fp32 tensors, only ch and sh for 16-bit ones (CheapLanes16 reads no other).
template <bool Fp32>
inline void store_lanes8(const Coefficients& k, std::size_t j, __m512d c, __m512d s) {
  const __m256 ch = _mm512_cvtpd_ps(c), sh = _mm512_cvtpd_ps(s);
  _mm256_storeu_ps(k.at(kCh, j), ch);
  _mm256_storeu_ps(k.at(kSh, j), sh);
  if constexpr (Fp32) {
    const __m256 cl = _mm512_cvtpd_ps(_mm512_sub_pd(c, _mm512_cvtps_pd(ch)));
    const __m256 sl = _mm512_cvtpd_ps(_mm512_sub_pd(s, _mm512_cvtps_pd(sh)));
    const __m256 abs = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    const __mmask8 swap = _mm256_cmp_ps_mask(_mm256_and_ps(sh, abs), _mm256_and_ps(ch, abs), _CMP_GT_OQ);  // a = other
    _mm256_storeu_ps(k.at(kKa, j), _mm256_mask_blend_ps(swap, ch, sh));
    _mm256_storeu_ps(k.at(kKb, j), _mm256_mask_blend_ps(swap, sh, ch));
    _mm256_storeu_ps(k.at(kSw, j), _mm256_maskz_mov_ps(swap, _mm256_set1_ps(-0.0f)));
    _mm256_storeu_ps(k.at(kCl, j), cl);
    _mm256_storeu_ps(k.at(kSl, j), sl);
  }
}

/// One token's coefficients. Half-split: lanes [0, P) are the first dims (s' = -s), the second
/// dims' derived in registers. Interleaved: lanes 2p and 2p + 1 share pair p, with s' = -s and +s.
template <bool Fp32>
void build(const RopeCall& call, std::int64_t pos, const Coefficients& k) {
  const __m512d p = _mm512_set1_pd(static_cast<double>(pos)), m = _mm512_set1_pd(call.magnitude);
  const __m512i low = _mm512_setr_epi64(0, 0, 1, 1, 2, 2, 3, 3), high = _mm512_setr_epi64(4, 4, 5, 5, 6, 6, 7, 7);
  const __m512i alternate = _mm512_setr_epi64(INT64_MIN, 0, INT64_MIN, 0, INT64_MIN, 0, INT64_MIN, 0);
  const __m512i negate = _mm512_set1_epi64(INT64_MIN);
  const auto flip = [](__m512d x, __m512i signs) {
    return _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(x), signs));
  };
  for (std::size_t i = 0; i < call.f.count; i += 8) {  // the frequency arrays are padded to 8
    const simd::SinCos8 sc = simd::sincos8(p, _mm512_loadu_pd(call.f.hi + i), _mm512_loadu_pd(call.f.lo + i));
    const __m512d c = _mm512_mul_pd(sc.c, m), s = _mm512_mul_pd(sc.s, m);
    _mm512_storeu_pd(k.c + i, c);
    _mm512_storeu_pd(k.s + i, s);
    if (call.interleaved) {
      store_lanes8<Fp32>(k, 2 * i, _mm512_permutexvar_pd(low, c), flip(_mm512_permutexvar_pd(low, s), alternate));
      store_lanes8<Fp32>(k, 2 * i + 8, _mm512_permutexvar_pd(high, c), flip(_mm512_permutexvar_pd(high, s), alternate));
    } else {
      store_lanes8<Fp32>(k, i, c, flip(s, negate));
    }
  }
}

/// The sign bit of every lane (a function: no static initializer may run AVX-512 at start-up).
inline __m512 sign_bits() { return _mm512_set1_ps(-0.0f); }

/// Sixteen output lanes of an fp32 tensor: the nested FMAs of impl/avx2/rope_kernel.cpp's Lanes8.
struct Lanes16 {
  __m512 ka, kb, sw, cl, sl;
  __mmask16 swap;
  explicit Lanes16(const float* g)
      : Lanes16(_mm512_loadu_ps(g + kLanes * kKa), _mm512_loadu_ps(g + kLanes * kKb), _mm512_loadu_ps(g + kLanes * kSw),
                _mm512_loadu_ps(g + kLanes * kCl), _mm512_loadu_ps(g + kLanes * kSl)) {}
  Lanes16(__m512 a, __m512 b, __m512 w, __m512 l, __m512 s)
      : ka(a), kb(b), sw(w), cl(l), sl(s), swap(_mm512_movepi32_mask(_mm512_castps_si512(w))) {}
  /// The second dims of the same pairs (half-split): s' = +s where these had -s (see Lanes8).
  Lanes16 second_half() const {
    return {_mm512_xor_ps(ka, sw), _mm512_xor_ps(kb, _mm512_xor_ps(sw, sign_bits())), sw, cl,
            _mm512_xor_ps(sl, sign_bits())};
  }
  __m512 rotate(__m512 self, __m512 other) const {
    const __m512 a = _mm512_mask_blend_ps(swap, self, other), b = _mm512_mask_blend_ps(swap, other, self);
    const __m512 lo = _mm512_fmadd_ps(self, cl, _mm512_mul_ps(other, sl));
    return _mm512_fmadd_ps(a, ka, _mm512_fmadd_ps(b, kb, lo));
  }
};

/// Sixteen output lanes of a bf16 or fp16 tensor: plain fp32, self c_hi + other s'_hi (see CheapLanes8).
struct CheapLanes16 {
  __m512 c, s;
  explicit CheapLanes16(const float* g) : c(_mm512_loadu_ps(g + kLanes * kCh)), s(_mm512_loadu_ps(g + kLanes * kSh)) {}
  CheapLanes16(__m512 c_, __m512 s_) : c(c_), s(s_) {}
  CheapLanes16 second_half() const { return {c, _mm512_xor_ps(s, sign_bits())}; }
  __m512 rotate(__m512 self, __m512 other) const { return _mm512_fmadd_ps(self, c, _mm512_mul_ps(other, s)); }
};

template <Storage S>
using LanesFor = std::conditional_t<S == Storage::f32, Lanes16, CheapLanes16>;

/// Whether a tile of fp32 pairs holds one whose larger value is nonzero and below 2^-120: such a
/// pair takes the double path (the reason is in impl/avx2/rope_kernel.cpp's has_tiny_pair).
/// Masked-out lanes load as zeros and never count. The first test (any value below 2^-120) runs
/// on every tile: three instructions here, five in AVX2.
template <Storage S, bool Interleaved>
inline bool has_tiny_pair(__m512 self, __m512 other) {
  if constexpr (S != Storage::f32) {
    return false;
  } else {
    // vrangeps 0x0a: min(|self|, |other|) with the sign cleared, in one instruction (a NaN lane
    // gives NaN, which compares false: its pair is NaN on either path).
    const __m512 limit = _mm512_set1_ps(0x1p-120f);
    const __m512 smallest = Interleaved ? _mm512_abs_ps(self) : _mm512_range_ps(self, other, 0x0a);
    if (_mm512_cmp_ps_mask(smallest, limit, _CMP_LT_OQ) == 0) return false;
    const __m512 m = _mm512_max_ps(_mm512_abs_ps(self), _mm512_abs_ps(other));
    return (_mm512_cmp_ps_mask(m, limit, _CMP_LT_OQ) & _mm512_cmp_ps_mask(m, _mm512_setzero_ps(), _CMP_NEQ_OQ)) != 0;
  }
}

/// (x1, x2) <- (x1 c - x2 s, x2 c + x1 s) in double, rounded once: the tiny pairs.
template <Storage S, bool B>
inline void rotate_pair(Elem<S>* a, Elem<S>* b, double c, double s) {
  const double x1 = simd::get<S, B>(a), x2 = simd::get<S, B>(b);
  simd::put<S, B>(a, static_cast<float>(std::fma(x1, c, -(x2 * s))));
  simd::put<S, B>(b, static_cast<float>(std::fma(x2, c, x1 * s)));
}

/// Heads rotated per pass over the coefficients on a call's last token (a decode step's only
/// one): each block's coefficients are loaded once and serve this many heads (with one head a
/// pass the coefficient loads outnumbered the data's 5 to 2 and L1 loads were the limit: 800 ns
/// a decode step, 500 now, Zen 5). Eight heads of 128 floats span 4 KiB, so a store to one head and a
/// load from another never sit 4 KiB apart (which would alias in the store buffer). Tokens with a
/// successor stream through memory instead: one head a pass, the next token's same head
/// prefetched, which measured faster there (1.18 against 1.6 us a token at 4096 tokens, Zen 5).
constexpr int kHeadsPerPass = 8;

/// Prefetches go to L2, as in impl/avx2/rope_kernel.cpp (kStreamPrefetch): on Zen 4 the fp32
/// prefill took 8.4-9.9 ms with T1 against 14.7-16.0 ms with T0 (medians of 5, three alternating
/// rounds, its rmw floor 7.9-12.5 ms); bf16 measured within the noise of T0 (5.5-6.7 ms).
constexpr auto kStreamPrefetch = _MM_HINT_T1;

/// Where one pass writes: `heads` heads from x, `stride` apart; `ahead` elements further on is the
/// next token's same head, prefetched while this one rotates (not on the last token: a decode
/// step has no next one). Without it the 512-bit kernel ran at a third of the AVX2 one's speed on
/// tensors in DRAM (Zen 5) (the hardware prefetchers follow the heads' interleaved access pattern badly).
template <Storage S>
struct Pass {
  Elem<S>* x;
  std::ptrdiff_t stride, ahead;
  int heads;
};

/// The loads and stores of one block of lanes: all 16 (`Full`), or the first `m`.
template <Storage S, bool B, bool Full>
struct BlockIo {
  __mmask16 m;
  __m512 load(const Elem<S>* p) const {
    if constexpr (Full)
      return Io<S, B>::load(p);
    else
      return Io<S, B>::load(p, m);
  }
  void store(Elem<S>* p, __m512 v) const {
    if constexpr (Full)
      Io<S, B>::store(p, v);
    else
      Io<S, B>::store(p, v, m);
  }
};

/// Lanes [j, j + lanes) of every head of the pass, interleaved: other = the pair partner.
template <Storage S, bool B, bool Full, bool Prefetch>
inline void interleaved_block(const Pass<S>& pass, std::size_t j, std::size_t lanes, const float* g,
                              const Coefficients& k) {
  const BlockIo<S, B, Full> io{simd::first_lanes(lanes)};
  const LanesFor<S> coefficients(g);
  for (int h = 0; h < pass.heads; ++h) {
    Elem<S>* head = pass.x + h * pass.stride;
    if constexpr (Prefetch) _mm_prefetch(reinterpret_cast<const char*>(head + j + pass.ahead), kStreamPrefetch);
    const __m512 v = io.load(head + j), partner = _mm512_permute_ps(v, 0b10110001);
    if (has_tiny_pair<S, true>(v, partner)) {
      for (std::size_t p = j / 2; p < (j + lanes) / 2; ++p)
        rotate_pair<S, B>(head + 2 * p, head + 2 * p + 1, k.c[p], k.s[p]);
      continue;
    }
    io.store(head + j, coefficients.rotate(v, partner));
  }
}

/// Pairs [i, i + lanes) of every head of the pass, half-split: both halves read before either is
/// written.
template <Storage S, bool B, bool Full, bool Prefetch>
inline void half_split_block(const Pass<S>& pass, std::size_t P, std::size_t i, std::size_t lanes, const float* g,
                             const Coefficients& k) {
  const BlockIo<S, B, Full> io{simd::first_lanes(lanes)};
  const LanesFor<S> first(g);
  const LanesFor<S> second = first.second_half();
  for (int h = 0; h < pass.heads; ++h) {
    Elem<S>* head = pass.x + h * pass.stride;
    if constexpr (Prefetch) {
      _mm_prefetch(reinterpret_cast<const char*>(head + i + pass.ahead), kStreamPrefetch);
      _mm_prefetch(reinterpret_cast<const char*>(head + P + i + pass.ahead), kStreamPrefetch);
    }
    const __m512 x1 = io.load(head + i), x2 = io.load(head + P + i);
    if (has_tiny_pair<S, false>(x1, x2)) {
      for (std::size_t p = i; p < i + lanes; ++p) rotate_pair<S, B>(head + p, head + P + p, k.c[p], k.s[p]);
      continue;
    }
    io.store(head + i, first.rotate(x1, x2));
    io.store(head + P + i, second.rotate(x2, x1));
  }
}

/// Rotates the pass's heads: whole blocks of 16 lanes, then one masked block for the rest.
template <Storage S, bool B, bool Prefetch>
void rotate_heads(const RopeCall& call, const Pass<S>& pass, const Coefficients& k) {
  const std::size_t P = call.f.count, lanes = call.interleaved ? 2 * P : P;
  const float* g = k.blocks;
  std::size_t i = 0;
  for (; i + kLanes <= lanes; i += kLanes, g += kBlock)
    call.interleaved ? interleaved_block<S, B, true, Prefetch>(pass, i, kLanes, g, k)
                     : half_split_block<S, B, true, Prefetch>(pass, P, i, kLanes, g, k);
  if (i < lanes)
    call.interleaved ? interleaved_block<S, B, false, Prefetch>(pass, i, lanes - i, g, k)
                     : half_split_block<S, B, false, Prefetch>(pass, P, i, lanes - i, g, k);
}

template <Storage S, bool B>
void rope_impl(const RopeCall& call) {
  const Coefficients k = views(call);
  for (std::size_t t = 0; t < call.n; ++t) {
    build<S == Storage::f32>(call, call.positions[t], k);
    for (std::size_t m = 0; m < call.count; ++m) {
      const avx2::detail::RopeTensor& x = call.tensors[m];
      Elem<S>* token = static_cast<Elem<S>*>(x.data) + static_cast<std::ptrdiff_t>(t) * x.token_stride;
      if (t + 1 < call.n) {  // more tokens to come: one head a pass, the next token's prefetched
        for (int h = 0; h < x.heads; ++h)
          rotate_heads<S, B, true>(call, {token + h * x.head_stride, x.head_stride, x.token_stride, 1}, k);
        continue;
      }
      for (int h = 0; h < x.heads; h += kHeadsPerPass)  // the last (a decode step's only) token
        rotate_heads<S, B, false>(
            call,
            {token + h * x.head_stride, x.head_stride, 0, x.heads - h < kHeadsPerPass ? x.heads - h : kHeadsPerPass},
            k);
    }
  }
}

}  // namespace

void rope(Storage s, const RopeCall& c, bool bf16_instructions) {
  PECHECK_AVX512_DISPATCH(s, bf16_instructions, rope_impl, c)
}

}  // namespace pecheck::avx512::detail
