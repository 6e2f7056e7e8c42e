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

#include "impl/avx2/simd.hpp"

namespace pecheck::avx2::detail {

namespace {

using simd::Io;

template <Storage S>
using Elem = typename Io<S>::T;

/// One token's coefficients, in the call's scratch.
struct Coefficients {
  double *c, *s;                  // per pair, times the magnitude
  float *ka, *kb, *sw, *cl, *sl;  // per output lane; sw's sign bit set where a = other
};

Coefficients views(const RopeCall& call) {
  const std::size_t P = padded4(call.f.count), L = rope_lanes(call.f.count);
  auto* f = reinterpret_cast<float*>(call.scratch + 2 * P);
  return {call.scratch, call.scratch + P, f, f + L, f + 2 * L, f + 3 * L, f + 4 * L};
}

/// Lane j's pair and whether it is the pair's first dim, in either layout.
inline void lane_pair(const RopeCall& call, std::size_t j, std::size_t& pair, bool& first) {
  const std::size_t P = call.f.count;
  pair = call.interleaved ? j / 2 : (j < P ? j : j - P);
  first = call.interleaved ? j % 2 == 0 : j < P;
}

void build(const RopeCall& call, std::int64_t pos, const Coefficients& k) {
  const __m256d p = _mm256_set1_pd(static_cast<double>(pos)), m = _mm256_set1_pd(call.magnitude);
  for (std::size_t i = 0; i < call.f.count; i += 4) {  // the frequency arrays are padded to 4
    const simd::SinCos4 sc = simd::sincos4(p, _mm256_loadu_pd(call.f.hi + i), _mm256_loadu_pd(call.f.lo + i));
    _mm256_storeu_pd(k.c + i, _mm256_mul_pd(sc.c, m));
    _mm256_storeu_pd(k.s + i, _mm256_mul_pd(sc.s, m));
  }
  for (std::size_t j = 0; j < 2 * call.f.count; ++j) {
    std::size_t pair;
    bool first;
    lane_pair(call, j, pair, first);
    const double c = k.c[pair], s = first ? -k.s[pair] : k.s[pair];
    const float ch = static_cast<float>(c), sh = static_cast<float>(s);
    const bool swap = std::fabs(s) > std::fabs(c);
    k.ka[j] = swap ? sh : ch;
    k.kb[j] = swap ? ch : sh;
    k.sw[j] = swap ? -0.0f : 0.0f;
    k.cl[j] = static_cast<float>(c - ch);
    k.sl[j] = static_cast<float>(s - sh);
  }
}

/// The coefficients of eight output lanes.
struct Lanes8 {
  __m256 ka, kb, sw, cl, sl;
  Lanes8(const Coefficients& k, std::size_t j)
      : ka(_mm256_loadu_ps(k.ka + j)),
        kb(_mm256_loadu_ps(k.kb + j)),
        sw(_mm256_loadu_ps(k.sw + j)),
        cl(_mm256_loadu_ps(k.cl + j)),
        sl(_mm256_loadu_ps(k.sl + j)) {}
  /// self c + other s' for the eight lanes.
  __m256 rotate(__m256 self, __m256 other) const {
    const __m256 a = _mm256_blendv_ps(self, other, sw), b = _mm256_blendv_ps(other, self, sw);
    const __m256 lo = _mm256_fmadd_ps(self, cl, _mm256_mul_ps(other, sl));
    return _mm256_fmadd_ps(a, ka, _mm256_fmadd_ps(b, kb, lo));
  }
};

/// (x1, x2) <- (x1 c - x2 s, x2 c + x1 s) in double, rounded once: the tails.
template <Storage S>
inline void rotate_pair(Elem<S>* a, Elem<S>* b, double c, double s) {
  const double x1 = Io<S>::get(a), x2 = Io<S>::get(b);
  Io<S>::put(a, static_cast<float>(std::fma(x1, c, -(x2 * s))));
  Io<S>::put(b, static_cast<float>(std::fma(x2, c, x1 * s)));
}

/// Rotates one head. Heads outer, lanes inner: with heads inner, the store to a head and the
/// load from the head 4 KiB further (8 heads of 128 floats) alias in the store buffer, which cost
/// more than reloading the coefficients (L1 hits) for every head.
template <Storage S>
void rotate_head(const RopeCall& call, Elem<S>* x, const Coefficients& k) {
  const std::size_t P = call.f.count;
  if (call.interleaved) {
    std::size_t j = 0;
    for (; j + 8 <= 2 * P; j += 8) {  // other = the pair partner: lanes (1 0 3 2 ..)
      const __m256 v = Io<S>::load8(x + j);
      Io<S>::store8(x + j, Lanes8(k, j).rotate(v, _mm256_permute_ps(v, 0b10110001)));
    }
    for (std::size_t p = j / 2; p < P; ++p) rotate_pair<S>(x + 2 * p, x + 2 * p + 1, k.c[p], k.s[p]);
    return;
  }
  std::size_t i = 0;
  for (; i + 8 <= P; i += 8) {  // both halves read before either is written
    const __m256 x1 = Io<S>::load8(x + i), x2 = Io<S>::load8(x + P + i);
    Io<S>::store8(x + i, Lanes8(k, i).rotate(x1, x2));
    Io<S>::store8(x + P + i, Lanes8(k, P + i).rotate(x2, x1));
  }
  for (; i < P; ++i) rotate_pair<S>(x + i, x + P + i, k.c[i], k.s[i]);
}

template <Storage S>
void rope_impl(const RopeCall& call) {
  const Coefficients k = views(call);
  for (std::size_t t = 0; t < call.n; ++t) {
    build(call, call.positions[t], k);
    for (std::size_t m = 0; m < call.count; ++m) {
      const RopeTensor& x = call.tensors[m];
      Elem<S>* token = static_cast<Elem<S>*>(x.data) + static_cast<std::ptrdiff_t>(t) * x.token_stride;
      for (int h = 0; h < x.heads; ++h) rotate_head<S>(call, token + h * x.head_stride, k);
    }
  }
}

}  // namespace

void rope(Storage s, const RopeCall& c) { PECHECK_AVX2_DISPATCH(s, rope_impl, c) }

}  // namespace pecheck::avx2::detail
