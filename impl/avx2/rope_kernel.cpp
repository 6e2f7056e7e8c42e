// AVX2 RoPE in place, in fp32 with cos and sin carried as float pairs (hi + lo). Every output lane
// is y = self c + other s' (s' = -s for the first dim of a pair, +s for the second), evaluated as
//   y = fma(a, k_a, fma(b, k_b, self c_lo + other s'_lo))
// where (a, k_a) is the term with the larger coefficient: the inner rounding then errs by at most
// u min(|c|, |s|) |b| <= u |x| / sqrt(2), the outer by u |y|, the lo terms by O(u^2): per pair
// within (1 + 1/sqrt(2)) u |x| ~ 1.71u normwise, under the 2u of rope.pair, at fp32 speed (a double
// pipeline needs four conversions per eight floats, which Zen 1 and 2 run at half rate).
// cos and sin come from simd::sincos4 once per token and serve every head of every tensor.
#include <cmath>
#include <cstring>
#include <type_traits>

#include "impl/avx2/simd.hpp"

namespace pecheck::avx2::detail {

namespace {

using simd::Io;

template <Storage S>
using Elem = typename Io<S>::T;

/// The seven per-lane coefficient arrays, stored by blocks of 8 lanes: block b holds lanes
/// [8b, 8b + 8) of ka, kb, sw, cl, sl, ch, sh, in that order. A group of 8 lanes is then one base
/// pointer and constant offsets: seven separate arrays needed seven pointers, more than the
/// registers left in the rotation loop, and the spilled pointers' reloads took the load ports.
enum Array : std::size_t { kKa, kKb, kSw, kCl, kSl, kCh, kSh, kArrays };
constexpr std::size_t kBlock = 8 * kArrays;

/// One token's coefficients, in the call's scratch.
struct Coefficients {
  double *c, *s;  // per pair, times the magnitude
  float* blocks;  // per output lane, by blocks; sw's sign bit set where a = other
  /// Where lane j of array a lives.
  float* at(Array a, std::size_t j) const { return blocks + j / 8 * kBlock + a * 8 + j % 8; }
};

Coefficients views(const RopeCall& call) {
  const std::size_t P = padded8(call.f.count);
  return {call.scratch, call.scratch + P, reinterpret_cast<float*>(call.scratch + 2 * P)};
}

/// Stores the coefficients of lanes [j, j + 4) from cos and sin' (signs applied) in double: all
/// seven arrays for fp32 tensors, only ch and sh for 16-bit ones (CheapLanes8 reads no other).
template <bool Fp32>
inline void store_lanes4(const Coefficients& k, std::size_t j, __m256d c, __m256d s) {
  const __m128 ch = _mm256_cvtpd_ps(c), sh = _mm256_cvtpd_ps(s);
  _mm_storeu_ps(k.at(kCh, j), ch);
  _mm_storeu_ps(k.at(kSh, j), sh);
  if constexpr (Fp32) {
    const __m128 cl = _mm256_cvtpd_ps(_mm256_sub_pd(c, _mm256_cvtps_pd(ch)));
    const __m128 sl = _mm256_cvtpd_ps(_mm256_sub_pd(s, _mm256_cvtps_pd(sh)));
    const __m128 abs = _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff));
    const __m128 swap = _mm_cmpgt_ps(_mm_and_ps(sh, abs), _mm_and_ps(ch, abs));  // a = other where |s| > |c|
    _mm_storeu_ps(k.at(kKa, j), _mm_blendv_ps(ch, sh, swap));
    _mm_storeu_ps(k.at(kKb, j), _mm_blendv_ps(sh, ch, swap));
    _mm_storeu_ps(k.at(kSw, j), _mm_and_ps(swap, _mm_set1_ps(-0.0f)));
    _mm_storeu_ps(k.at(kCl, j), cl);
    _mm_storeu_ps(k.at(kSl, j), sl);
  }
}

/// One token's coefficients. Half-split: lanes [0, P) are the first dims (s' = -s); the second
/// dims' coefficients are the same up to signs and are derived in registers (second_half()).
/// Interleaved: lanes 2p and 2p + 1 share pair p, with s' = -s and +s.
template <bool Fp32>
void build(const RopeCall& call, std::int64_t pos, const Coefficients& k) {
  const __m256d p = _mm256_set1_pd(static_cast<double>(pos)), m = _mm256_set1_pd(call.magnitude);
  const std::size_t P = call.f.count;
  const __m256d negate = _mm256_set1_pd(-0.0);
  for (std::size_t i = 0; i < P; i += 4) {  // the frequency arrays are padded to 4
    const simd::SinCos4 sc = simd::sincos4(p, _mm256_loadu_pd(call.f.hi + i), _mm256_loadu_pd(call.f.lo + i));
    const __m256d c = _mm256_mul_pd(sc.c, m), s = _mm256_mul_pd(sc.s, m);
    _mm256_storeu_pd(k.c + i, c);
    _mm256_storeu_pd(k.s + i, s);
    if (call.interleaved) {  // (c0 c0 c1 c1), (c2 c2 c3 c3); sines with alternating signs
      const __m256d c01 = _mm256_permute4x64_pd(c, 0b01010000), c23 = _mm256_permute4x64_pd(c, 0b11111010);
      const __m256d alt = _mm256_setr_pd(-0.0, 0.0, -0.0, 0.0);
      store_lanes4<Fp32>(k, 2 * i, c01, _mm256_xor_pd(_mm256_permute4x64_pd(s, 0b01010000), alt));
      store_lanes4<Fp32>(k, 2 * i + 4, c23, _mm256_xor_pd(_mm256_permute4x64_pd(s, 0b11111010), alt));
    } else {
      store_lanes4<Fp32>(k, i, c, _mm256_xor_pd(s, negate));
    }
  }
}

/// The sign bit of every lane. A function, not a namespace-scope constant: a static initializer
/// in this file would run AVX instructions at program start, on CPUs without them too.
inline __m256 sign_bits() { return _mm256_set1_ps(-0.0f); }

/// Eight output lanes of an fp32 tensor: the nested FMAs of the header (within 1.71u).
struct Lanes8 {
  __m256 ka, kb, sw, cl, sl;
  explicit Lanes8(const float* g)
      : ka(_mm256_loadu_ps(g + 8 * kKa)),
        kb(_mm256_loadu_ps(g + 8 * kKb)),
        sw(_mm256_loadu_ps(g + 8 * kSw)),
        cl(_mm256_loadu_ps(g + 8 * kCl)),
        sl(_mm256_loadu_ps(g + 8 * kSl)) {}
  Lanes8(__m256 a, __m256 b, __m256 w, __m256 l, __m256 s) : ka(a), kb(b), sw(w), cl(l), sl(s) {}
  /// The lanes of the second dims of the same pairs (half-split): s' = +s where these had -s.
  /// The larger coefficient is the same one, so ka (s' where sw is set, else c) flips sign where
  /// sw is set, kb (c where sw is set, else s') where it is not, and sl everywhere: three xors
  /// in place of five loads.
  Lanes8 second_half() const {
    return {_mm256_xor_ps(ka, sw), _mm256_xor_ps(kb, _mm256_xor_ps(sw, sign_bits())), sw, cl,
            _mm256_xor_ps(sl, sign_bits())};
  }
  /// self c + other s' for the eight lanes.
  __m256 rotate(__m256 self, __m256 other) const {
    const __m256 a = _mm256_blendv_ps(self, other, sw), b = _mm256_blendv_ps(other, self, sw);
    const __m256 lo = _mm256_fmadd_ps(self, cl, _mm256_mul_ps(other, sl));
    return _mm256_fmadd_ps(a, ka, _mm256_fmadd_ps(b, kb, lo));
  }
};

/// Eight output lanes of a bf16 or fp16 tensor: plain fp32, self c_hi + other s'_hi. Per lane
/// u32 (|self c| + 2 |other s| + |y|), so per pair within (1 + sqrt(5)) u32 |x| < 3.3 u32 |x|:
/// 2^-11.3 of fp16's u and 2^-14.3 of bf16's, beside the rounding to the storage (0.5u per lane).
/// It saves a third of the work, and the 16-bit loads and stores are most of what is left.
struct CheapLanes8 {
  __m256 c, s;
  explicit CheapLanes8(const float* g) : c(_mm256_loadu_ps(g + 8 * kCh)), s(_mm256_loadu_ps(g + 8 * kSh)) {}
  CheapLanes8(__m256 c_, __m256 s_) : c(c_), s(s_) {}
  CheapLanes8 second_half() const { return {c, _mm256_xor_ps(s, sign_bits())}; }
  __m256 rotate(__m256 self, __m256 other) const { return _mm256_fmadd_ps(self, c, _mm256_mul_ps(other, s)); }
};

template <Storage S>
using LanesFor = std::conditional_t<S == Storage::f32, Lanes8, CheapLanes8>;

/// Whether a tile of fp32 pairs (lane by lane: a value and its partner) holds a pair whose
/// larger value is nonzero and below 2^-120 (64 times fp32's smallest normal). Lanes8's three
/// roundings then land in the subnormal range, each costing up to u min_normal absolute, which
/// the pair's bound 2u max(|x_p|, min_normal) does not allow (measured: 2.3 to 2.4u); such a tile
/// takes the double path, rounded once. First one compare: is any value of the tile below 2^-120
/// at all (nearly never)? `Interleaved`: `self` holds every value of the tile. (bf16 and fp16
/// compute in fp32, whose subnormal spacing is far below their own u.)
template <Storage S, bool Interleaved>
inline bool has_tiny_pair(__m256 self, __m256 other) {
  if constexpr (S != Storage::f32) {
    return false;
  } else {
    const __m256 abs = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)), limit = _mm256_set1_ps(0x1p-120f);
    const __m256 a = _mm256_and_ps(self, abs), b = _mm256_and_ps(other, abs);
    const __m256 smallest = Interleaved ? a : _mm256_min_ps(a, b);
    if (_mm256_movemask_ps(_mm256_cmp_ps(smallest, limit, _CMP_LT_OQ)) == 0) return false;
    const __m256 m = _mm256_max_ps(a, b);
    const __m256 tiny =
        _mm256_and_ps(_mm256_cmp_ps(m, limit, _CMP_LT_OQ), _mm256_cmp_ps(m, _mm256_setzero_ps(), _CMP_NEQ_OQ));
    return _mm256_movemask_ps(tiny) != 0;
  }
}

/// (x1, x2) <- (x1 c - x2 s, x2 c + x1 s) in double, rounded once: the tails.
template <Storage S>
inline void rotate_pair(Elem<S>* a, Elem<S>* b, double c, double s) {
  const double x1 = Io<S>::get(a), x2 = Io<S>::get(b);
  Io<S>::put(a, static_cast<float>(std::fma(x1, c, -(x2 * s))));
  Io<S>::put(b, static_cast<float>(std::fma(x2, c, x1 * s)));
}

/// Heads rotated per pass over the coefficients on a call's last token (a decode step's only
/// one): a block's coefficients, loaded once, serve this many heads (the decode step took 0.9x the
/// time of one head a pass, Zen 5). Four heads of 128 floats span 2 KiB, so a store to one head
/// and a load from another never sit 4 KiB apart, where they would alias in the store buffer
/// (eight did: the reason an earlier version rotated one head a pass). Tokens with a successor
/// keep one head a pass, in memory order.
constexpr int kHeadsPerPass = 4;

/// Where a streaming token's prefetch of its successor puts the lines: L2 (T1), not L1 (T0). On
/// Zen 4 the fp32 prefill took 9.2-10.2 ms with T1 against 14.2-14.6 ms with T0 (medians of 5,
/// three alternating rounds, its rmw floor 8-11 ms): with T0 the computation and the memory
/// traffic barely overlapped (why T1 does better was not measured: no hardware counters there).
constexpr auto kStreamPrefetch = _MM_HINT_T1;

/// Rotates `heads` heads from x, `stride` apart. k comes by value and the block pointers advance
/// by a constant, so the loop keeps them in registers (a store to x could alias a Coefficients
/// reached through a reference, which made the compiler reload its members).
template <Storage S, bool Prefetch>
void rotate_heads(const RopeCall& call, Elem<S>* x, std::ptrdiff_t stride, int heads, std::ptrdiff_t ahead,
                  const Coefficients k) {
  const std::size_t P = call.f.count;
  if (call.interleaved) {
    std::size_t j = 0;
    const float* g = k.blocks;
    for (; j + 8 <= 2 * P; j += 8, g += kBlock) {  // other = the pair partner: lanes (1 0 3 2 ..)
      const LanesFor<S> coefficients(g);
      for (int h = 0; h < heads; ++h) {
        Elem<S>* head = x + h * stride;
        if constexpr (Prefetch) _mm_prefetch(reinterpret_cast<const char*>(head + j + ahead), kStreamPrefetch);
        const __m256 v = Io<S>::load8(head + j), partner = _mm256_permute_ps(v, 0b10110001);
        if (has_tiny_pair<S, true>(v, partner)) {
          for (std::size_t p = j / 2; p < j / 2 + 4; ++p)
            rotate_pair<S>(head + 2 * p, head + 2 * p + 1, k.c[p], k.s[p]);
          continue;
        }
        Io<S>::store8(head + j, coefficients.rotate(v, partner));
      }
    }
    for (int h = 0; h < heads; ++h)
      for (std::size_t p = j / 2; p < P; ++p)
        rotate_pair<S>(x + h * stride + 2 * p, x + h * stride + 2 * p + 1, k.c[p], k.s[p]);
    return;
  }
  std::size_t i = 0;
  const float* g = k.blocks;
  for (; i + 8 <= P; i += 8, g += kBlock) {
    const LanesFor<S> first(g);
    const LanesFor<S> second = first.second_half();
    for (int h = 0; h < heads; ++h) {  // both halves read before either is written
      Elem<S>* head = x + h * stride;
      if constexpr (Prefetch) {
        _mm_prefetch(reinterpret_cast<const char*>(head + i + ahead), kStreamPrefetch);
        _mm_prefetch(reinterpret_cast<const char*>(head + P + i + ahead), kStreamPrefetch);
      }
      const __m256 x1 = Io<S>::load8(head + i), x2 = Io<S>::load8(head + P + i);
      if (has_tiny_pair<S, false>(x1, x2)) {
        for (std::size_t p = i; p < i + 8; ++p) rotate_pair<S>(head + p, head + P + p, k.c[p], k.s[p]);
        continue;
      }
      Io<S>::store8(head + i, first.rotate(x1, x2));
      Io<S>::store8(head + P + i, second.rotate(x2, x1));
    }
  }
  for (int h = 0; h < heads; ++h)
    for (std::size_t p = i; p < P; ++p) rotate_pair<S>(x + h * stride + p, x + h * stride + P + p, k.c[p], k.s[p]);
}

template <Storage S>
void rope_impl(const RopeCall& call) {
  const Coefficients k = views(call);
  for (std::size_t t = 0; t < call.n; ++t) {
    build<S == Storage::f32>(call, call.positions[t], k);
    const int per_pass = t + 1 < call.n ? 1 : kHeadsPerPass;
    for (std::size_t m = 0; m < call.count; ++m) {
      const RopeTensor& x = call.tensors[m];
      Elem<S>* token = static_cast<Elem<S>*>(x.data) + static_cast<std::ptrdiff_t>(t) * x.token_stride;
      if (S == Storage::f32 && t + 1 < call.n) {  // fp32 streams: the next token's same head prefetched
        for (int h = 0; h < x.heads; ++h)
          rotate_heads<S, true>(call, token + h * x.head_stride, x.head_stride, 1, x.token_stride, k);
        continue;
      }
      for (int h = 0; h < x.heads; h += per_pass)
        rotate_heads<S, false>(call, token + h * x.head_stride, x.head_stride,
                               x.heads - h < per_pass ? x.heads - h : per_pass, 0, k);
    }
  }
}

}  // namespace

void rope(Storage s, const RopeCall& c) { PECHECK_AVX2_DISPATCH(s, rope_impl, c) }

}  // namespace pecheck::avx2::detail
