// RoPE in place, written once over a width trait V (impl/avx2/simd.hpp's Avx2: 8 floats a vector;
// impl/avx512/simd.hpp's Avx512: 16) and included by each width's RoPE unit, which supplies V and
// its compile flags (an unnamed namespace: each unit its own copy, built for its own ISA).
//
// fp32 tensors rotate in fp32 with cos and sin carried as float pairs (hi + lo). Every output lane
// is y = self c + other s' (s' = -s for the first dim of a pair, +s for the second), evaluated as
//   y = fma(a, k_a, fma(b, k_b, self c_lo + other s'_lo))
// where (a, k_a) is the term with the larger coefficient: the inner rounding then errs by at most
// u min(|c|, |s|) |b| <= u |x| / sqrt(2), the outer by u |y|, the lo terms by O(u^2): per pair
// within (1 + 1/sqrt(2)) u |x| ~ 1.71u normwise, under the 2u of rope.pair, at fp32 speed (a double
// pipeline needs four conversions per eight floats, which Zen 1 and 2 run at half rate). bf16 and
// fp16 tensors rotate in plain fp32 (CheapLanes). Each lane computes the same operations at every
// width, so the widths agree bit for bit except on the tails, which a width without masked 16-bit
// loads rotates in double (V::kMaskedTails). cos and sin come from simd::sincos once per token and
// serve every head of every tensor.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "impl/simd/calls.hpp"
#include "impl/simd/math.hpp"

namespace pecheck::simd {

namespace {

namespace rope_body {

template <class V, Storage S>
using Elem = typename V::template Elem<S>;

/// The seven per-lane coefficient arrays, stored by blocks of W lanes: block b holds lanes
/// [W b, W b + W) of ka, kb, sw, cl, sl, ch, sh, in that order. A group of W lanes is then one base
/// pointer and constant offsets: seven separate arrays needed seven pointers, more than the
/// registers left in the rotation loop, and the spilled pointers' reloads took the load ports.
enum Array : std::size_t { kKa, kKb, kSw, kCl, kSl, kCh, kSh, kArrays };

/// One token's coefficients, in the call's (64-byte aligned) scratch.
template <class V>
struct Coefficients {
  static constexpr std::size_t kBlock = V::W * kArrays;
  double *c, *s;  // per pair, times the magnitude
  float* blocks;  // per output lane, by blocks; sw's sign bit set where a = other
  /// Where lane j of array a lives.
  float* at(Array a, std::size_t j) const { return blocks + j / V::W * kBlock + a * V::W + j % V::W; }
};

template <class V>
Coefficients<V> views(const RopeCall& call) {
  const std::size_t P = padded8(call.f.count);
  return {call.scratch, call.scratch + P, reinterpret_cast<float*>(call.scratch + 2 * P)};
}

/// Stores the coefficients of lanes [j, j + D::W) from cos and sin' (signs applied) in double:
/// all seven arrays for fp32 tensors, only ch and sh for 16-bit ones (CheapLanes reads no other).
template <class V, bool Fp32>
inline void store_lanes(const Coefficients<V>& k, std::size_t j, typename V::D::R c, typename V::D::R s) {
  using H = typename V::H;
  const typename H::R ch = V::narrow(c), sh = V::narrow(s);
  H::store(k.at(kCh, j), ch);
  H::store(k.at(kSh, j), sh);
  if constexpr (Fp32) {
    const typename H::R cl = V::narrow(V::D::sub(c, V::widen(ch))), sl = V::narrow(V::D::sub(s, V::widen(sh)));
    const typename H::M swap = H::gt(H::abs(sh), H::abs(ch));  // a = other where |s| > |c|
    H::store(k.at(kKa, j), H::select(swap, ch, sh));
    H::store(k.at(kKb, j), H::select(swap, sh, ch));
    H::store(k.at(kSw, j), H::sign_where(swap));
    H::store(k.at(kCl, j), cl);
    H::store(k.at(kSl, j), sl);
  }
}

/// One token's coefficients. Half-split: lanes [0, P) are the first dims (s' = -s); the second
/// dims' coefficients are the same up to signs and are derived in registers (second_half()).
/// Interleaved: lanes 2p and 2p + 1 share pair p, with s' = -s and +s.
template <class V, bool Fp32>
void build(const RopeCall& call, std::int64_t pos, const Coefficients<V>& k) {
  using D = typename V::D;
  const typename D::R p = D::set1(static_cast<double>(pos)), m = D::set1(call.magnitude);
  for (std::size_t i = 0; i < call.f.count; i += D::W) {  // the frequency arrays are padded to 8
    const SinCos<D> sc = sincos<D>(p, D::load(call.f.hi + i), D::load(call.f.lo + i));
    const typename D::R c = D::mul(sc.c, m), s = D::mul(sc.s, m);
    D::store(k.c + i, c);
    D::store(k.s + i, s);
    if (call.interleaved) {  // (c0 c0 c1 c1 ..); sines with alternating signs
      store_lanes<V, Fp32>(k, 2 * i, D::dup_low(c), D::alternate_sign(D::dup_low(s)));
      store_lanes<V, Fp32>(k, 2 * i + D::W, D::dup_high(c), D::alternate_sign(D::dup_high(s)));
    } else {
      store_lanes<V, Fp32>(k, i, c, D::negate(s));
    }
  }
}

/// W output lanes of an fp32 tensor: the nested FMAs of the header (within 1.71u).
template <class V>
struct Lanes {
  using R = typename V::R;
  R ka, kb, sw, cl, sl;
  explicit Lanes(const float* g)
      : Lanes(V::load(g + V::W * kKa), V::load(g + V::W * kKb), V::load(g + V::W * kSw), V::load(g + V::W * kCl),
              V::load(g + V::W * kSl)) {}
  Lanes(R a, R b, R w, R l, R s) : ka(a), kb(b), sw(w), cl(l), sl(s) {}
  /// The lanes of the second dims of the same pairs (half-split): s' = +s where these had -s.
  /// The larger coefficient is the same one, so ka (s' where sw is set, else c) flips sign where
  /// sw is set, kb (c where sw is set, else s') where it is not, and sl everywhere: three xors
  /// in place of five loads.
  Lanes second_half() const {
    return {V::xor_(ka, sw), V::xor_(kb, V::xor_(sw, V::sign_bits())), sw, cl, V::xor_(sl, V::sign_bits())};
  }
  /// self c + other s' for the W lanes (the mask from sw's sign bits is the same for every head:
  /// the compiler takes it out of the loop).
  R rotate(R self, R other) const {
    const typename V::M swap = V::sign_mask(sw);
    const R a = V::select(swap, self, other), b = V::select(swap, other, self);
    const R lo = V::fmadd(self, cl, V::mul(other, sl));
    return V::fmadd(a, ka, V::fmadd(b, kb, lo));
  }
};

/// W output lanes of a bf16 or fp16 tensor: plain fp32, self c_hi + other s'_hi. Per lane
/// u32 (|self c| + 2 |other s| + |y|), so per pair within (1 + sqrt(5)) u32 |x| < 3.3 u32 |x|:
/// 2^-11.3 of fp16's u and 2^-14.3 of bf16's, beside the rounding to the storage (0.5u per lane).
/// It saves a third of the work, and the 16-bit loads and stores are most of what is left.
template <class V>
struct CheapLanes {
  using R = typename V::R;
  R c, s;
  explicit CheapLanes(const float* g) : c(V::load(g + V::W * kCh)), s(V::load(g + V::W * kSh)) {}
  CheapLanes(R c_, R s_) : c(c_), s(s_) {}
  CheapLanes second_half() const { return {c, V::xor_(s, V::sign_bits())}; }
  R rotate(R self, R other) const { return V::fmadd(self, c, V::mul(other, s)); }
};

template <class V, Storage S>
using LanesFor = std::conditional_t<S == Storage::f32, Lanes<V>, CheapLanes<V>>;

/// Whether a tile of fp32 pairs (lane by lane: a value and its partner) holds a pair whose
/// larger value is nonzero and below 2^-120 (64 times fp32's smallest normal). Lanes' three
/// roundings then land in the subnormal range, each costing up to u min_normal absolute, which
/// the pair's bound 2u max(|x_p|, min_normal) does not allow (measured: 2.3 to 2.4u); such a tile
/// takes the double path, rounded once. First one compare: is any value of the tile below 2^-120
/// at all (nearly never)? `Interleaved`: `self` holds every value of the tile. Lanes a partial
/// vector did not load are zeros and never count. (bf16 and fp16 compute in fp32, whose subnormal
/// spacing is far below their own u.)
template <class V, Storage S, bool Interleaved>
inline bool has_tiny_pair(typename V::R self, typename V::R other) {
  if constexpr (S != Storage::f32) {
    return false;
  } else {
    const typename V::R limit = V::set1(0x1p-120f);
    const typename V::R smallest = Interleaved ? V::abs(self) : V::min_abs(self, other);
    if (!V::any(V::lt(smallest, limit))) return false;
    const typename V::R m = V::max(V::abs(self), V::abs(other));
    return V::any(V::both(V::lt(m, limit), V::ne(m, V::zero())));
  }
}

/// (x1, x2) <- (x1 c - x2 s, x2 c + x1 s) in double, rounded once: tiny pairs, and the tails.
template <class V, Storage S>
inline void rotate_pair(Elem<V, S>* a, Elem<V, S>* b, double c, double s) {
  const double x1 = V::template Io<S>::get(a), x2 = V::template Io<S>::get(b);
  V::template Io<S>::put(a, static_cast<float>(std::fma(x1, c, -(x2 * s))));
  V::template Io<S>::put(b, static_cast<float>(std::fma(x2, c, x1 * s)));
}

/// Where a streaming token's prefetch of its successor puts the lines: L2 (T1), not L1 (T0). On
/// Zen 4 the fp32 prefill took 9.2-10.2 ms with T1 against 14.2-14.6 ms with T0 (AVX2; AVX-512
/// 8.4-9.9 against 14.7-16.0; medians of 5, three alternating rounds): with T0 the computation
/// and the memory traffic barely overlapped (why T1 does better was not measured: no hardware
/// counters there).
constexpr auto kStreamPrefetch = _MM_HINT_T1;

/// Where one pass writes: `heads` heads from x, `stride` apart; `ahead` elements further on is the
/// next token's same head, prefetched while this one rotates (not on the last token: a decode
/// step has no next one; the hardware prefetchers follow the heads' interleaved order badly).
template <class V, Storage S>
struct Pass {
  Elem<V, S>* x;
  std::ptrdiff_t stride, ahead;
  int heads;
};

/// The loads and stores of one block of lanes: all W (`Full`), or the first ones of `tail`.
template <class V, Storage S, bool Full>
struct BlockIo {
  typename V::Tail tail;
  typename V::R load(const Elem<V, S>* p) const {
    if constexpr (Full)
      return V::template Io<S>::load(p);
    else
      return V::template Io<S>::load_first(p, tail);
  }
  void store(Elem<V, S>* p, typename V::R v) const {
    if constexpr (Full)
      V::template Io<S>::store(p, v);
    else
      V::template Io<S>::store_first(p, v, tail);
  }
  /// Both halves of a half-split block: through the storage's store_pair where it has one.
  void store_pair(Elem<V, S>* p, typename V::R a, Elem<V, S>* q, typename V::R b) const {
    if constexpr (Full && requires { V::template Io<S>::store_pair(p, a, q, b); }) {
      V::template Io<S>::store_pair(p, a, q, b);
    } else {
      store(p, a);
      store(q, b);
    }
  }
};

/// Lanes [j, j + lanes) of every head of the pass, interleaved: other = the pair partner.
template <class V, Storage S, bool Full, bool Prefetch>
inline void interleaved_block(const Pass<V, S> pass, std::size_t j, std::size_t lanes, const float* g,
                              const Coefficients<V> k) {
  const BlockIo<V, S, Full> io{V::first(lanes)};
  const LanesFor<V, S> coefficients(g);
  for (int h = 0; h < pass.heads; ++h) {
    Elem<V, S>* head = pass.x + h * pass.stride;
    if constexpr (Prefetch) _mm_prefetch(reinterpret_cast<const char*>(head + j + pass.ahead), kStreamPrefetch);
    const typename V::R v = io.load(head + j), partner = V::swap_pairs(v);
    if (has_tiny_pair<V, S, true>(v, partner)) {
      for (std::size_t p = j / 2; p < (j + lanes) / 2; ++p)
        rotate_pair<V, S>(head + 2 * p, head + 2 * p + 1, k.c[p], k.s[p]);
      continue;
    }
    io.store(head + j, coefficients.rotate(v, partner));
  }
}

/// Pairs [i, i + lanes) of every head of the pass, half-split: both halves read before either is
/// written.
template <class V, Storage S, bool Full, bool Prefetch>
inline void half_split_block(const Pass<V, S> pass, std::size_t P, std::size_t i, std::size_t lanes, const float* g,
                             const Coefficients<V> k) {
  const BlockIo<V, S, Full> io{V::first(lanes)};
  const LanesFor<V, S> first(g);
  const LanesFor<V, S> second = first.second_half();
  for (int h = 0; h < pass.heads; ++h) {
    Elem<V, S>* head = pass.x + h * pass.stride;
    if constexpr (Prefetch) {
      _mm_prefetch(reinterpret_cast<const char*>(head + i + pass.ahead), kStreamPrefetch);
      _mm_prefetch(reinterpret_cast<const char*>(head + P + i + pass.ahead), kStreamPrefetch);
    }
    const typename V::R x1 = io.load(head + i), x2 = io.load(head + P + i);
    if (has_tiny_pair<V, S, false>(x1, x2)) {
      for (std::size_t p = i; p < i + lanes; ++p) rotate_pair<V, S>(head + p, head + P + p, k.c[p], k.s[p]);
      continue;
    }
    io.store_pair(head + i, first.rotate(x1, x2), head + P + i, second.rotate(x2, x1));
  }
}

/// The pairs past the last whole block, from lane i on, pair by pair in double (a width without
/// masked 16-bit loads).
template <class V, Storage S, bool Interleaved>
void tail_in_double(const Pass<V, S> pass, std::size_t P, std::size_t i, const Coefficients<V> k) {
  for (int h = 0; h < pass.heads; ++h) {
    Elem<V, S>* head = pass.x + h * pass.stride;
    if constexpr (Interleaved)
      for (std::size_t p = i / 2; p < P; ++p) rotate_pair<V, S>(head + 2 * p, head + 2 * p + 1, k.c[p], k.s[p]);
    else
      for (std::size_t p = i; p < P; ++p) rotate_pair<V, S>(head + p, head + P + p, k.c[p], k.s[p]);
  }
}

/// Rotates the pass's heads: whole blocks of W lanes, then the rest in one masked block or, where
/// V has no masked 16-bit loads (V::kMaskedTails), pair by pair in double. The pass and k come by
/// value and the layout is decided outside the loop, so the loop keeps them in registers (a store
/// to x could alias a Coefficients reached through a reference, which made the compiler reload its
/// members; a layout test inside the block loop reloaded the pass from the stack each block).
template <class V, Storage S, bool Interleaved, bool Prefetch>
void rotate_layout(const Pass<V, S> pass, std::size_t P, const Coefficients<V> k) {
  const std::size_t lanes = Interleaved ? 2 * P : P;
  const float* g = k.blocks;
  std::size_t i = 0;
  for (; i + V::W <= lanes; i += V::W, g += Coefficients<V>::kBlock) {
    if constexpr (Interleaved)
      interleaved_block<V, S, true, Prefetch>(pass, i, V::W, g, k);
    else
      half_split_block<V, S, true, Prefetch>(pass, P, i, V::W, g, k);
  }
  if (i == lanes) return;
  if constexpr (!V::kMaskedTails)
    tail_in_double<V, S, Interleaved>(pass, P, i, k);
  else if constexpr (Interleaved)
    interleaved_block<V, S, false, Prefetch>(pass, i, lanes - i, g, k);
  else
    half_split_block<V, S, false, Prefetch>(pass, P, i, lanes - i, g, k);
}

template <class V, Storage S, bool Prefetch>
void rotate_heads(const RopeCall& call, const Pass<V, S> pass, const Coefficients<V> k) {
  call.interleaved ? rotate_layout<V, S, true, Prefetch>(pass, call.f.count, k)
                   : rotate_layout<V, S, false, Prefetch>(pass, call.f.count, k);
}

}  // namespace rope_body

/// Rotates every tensor of the call, token by token. A token with a successor streams: one head a
/// pass, the next token's same head prefetched (fp32 always; 16-bit tensors where
/// V::kPrefetchNarrow). The last token (a decode step's only one) rotates V::kHeadsPerPass heads
/// a pass, each block of coefficients loaded once for all of them.
template <class V, Storage S>
void rope(const RopeCall& call) {
  using namespace rope_body;
  const Coefficients<V> k = views<V>(call);
  for (std::size_t t = 0; t < call.n; ++t) {
    build<V, S == Storage::f32>(call, call.positions[t], k);
    for (std::size_t m = 0; m < call.count; ++m) {
      const RopeTensor& x = call.tensors[m];
      Elem<V, S>* token = static_cast<Elem<V, S>*>(x.data) + static_cast<std::ptrdiff_t>(t) * x.token_stride;
      const bool more = t + 1 < call.n;
      if (more && (S == Storage::f32 || V::kPrefetchNarrow)) {
        for (int h = 0; h < x.heads; ++h)
          rotate_heads<V, S, true>(call, {token + h * x.head_stride, x.head_stride, x.token_stride, 1}, k);
        continue;
      }
      const int per_pass = more ? 1 : V::kHeadsPerPass;
      for (int h = 0; h < x.heads; h += per_pass)
        rotate_heads<V, S, false>(
            call, {token + h * x.head_stride, x.head_stride, 0, x.heads - h < per_pass ? x.heads - h : per_pass}, k);
    }
  }
}

}  // namespace

}  // namespace pecheck::simd
