// The sinusoidal table and add, and the rounding of fp32 to a storage, written once over a width
// trait V (impl/avx2/simd.hpp's Avx2, impl/avx512/simd.hpp's Avx512) and included by each width's
// position unit (an unnamed namespace: each unit its own copy, built for its own ISA).
//
// Angles by addition from per-call tables of 16 low positions, in double (row_angles.hpp); an
// entry, or its sum with x when adding, is formed in double and rounded once to fp32, then to the
// storage. Every width runs the same double operations in the same order, so the widths agree
// bit for bit; partial vectors (the row's last frequencies) touch only their own lanes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "impl/simd/calls.hpp"
#include "impl/simd/row_angles.hpp"

namespace pecheck::simd {

namespace {

namespace sinusoid_body {

template <class V, Storage S>
using Elem = typename V::template Elem<S>;

/// An fp32 table larger than this is written with non-temporal stores: it cannot stay in the
/// caches anyway, and a plain store first reads each line it writes (read for ownership), which
/// doubles the memory traffic of a table that is only written. A memset does not pay that.
constexpr std::size_t kStreamBytes = std::size_t{16} << 20;

/// Whether the call writes an fp32 table with non-temporal stores: large enough, and every whole
/// vector 16-byte aligned (the rows, and for half-split the cos half too).
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

/// dst[0 .. lanes) = v, rounded to the storage; `lanes` <= W, and only whole vectors stream.
template <class V, Storage S>
inline void store(Elem<V, S>* dst, typename V::R v, std::size_t lanes, bool stream) {
  if (lanes == V::W) {
    if constexpr (S == Storage::f32) {
      if (stream) return V::stream(dst, v);
    }
    return V::template Io<S>::store(dst, v);
  }
  V::template Io<S>::store_first(dst, v, V::first(lanes));
}

/// dst[0 .. lanes) += (lo, hi): the sum formed in double, rounded once to fp32, then to the storage.
template <class V, Storage S>
inline void add(Elem<V, S>* dst, typename V::D::R lo, typename V::D::R hi, std::size_t lanes) {
  const typename V::R x =
      lanes == V::W ? V::template Io<S>::load(dst) : V::template Io<S>::load_first(dst, V::first(lanes));
  lo = V::D::add(lo, V::widen(V::lower(x)));
  hi = V::D::add(hi, V::widen(V::upper(x)));
  store<V, S>(dst, V::join(V::narrow(lo), V::narrow(hi)), lanes, false);
}

/// A table row, interleaved: D::W frequencies a vector (s0 c0 s1 c1 ...), rounded to fp32 and then
/// interleaved (shuffles of floats, not of doubles); whole vectors first, then the rest.
template <class V, Storage S>
inline void interleaved_table_row(const RowAngles<typename V::D>& angles, std::size_t l, std::size_t half,
                                  Elem<V, S>* row, bool stream) {
  using D = typename V::D;
  std::size_t i = 0;
  for (; i + D::W <= half; i += D::W) {
    const SinCos<D> sc = angles.at(l, i);
    store<V, S>(row + 2 * i, V::interleave(V::narrow(sc.s), V::narrow(sc.c)), V::W, stream);
  }
  if (i == half) return;
  const SinCos<D> sc = angles.at(l, i);
  store<V, S>(row + 2 * i, V::interleave(V::narrow(sc.s), V::narrow(sc.c)), 2 * (half - i), false);
}

/// A table row, half-split: W frequencies into each half.
template <class V, Storage S>
inline void half_split_table_row(const RowAngles<typename V::D>& angles, std::size_t l, std::size_t half,
                                 Elem<V, S>* row, bool stream) {
  using D = typename V::D;
  for (std::size_t i = 0; i < half; i += V::W) {
    const std::size_t lanes = half - i < V::W ? half - i : V::W;
    const SinCos<D> a = angles.at(l, i), b = lanes > D::W ? angles.at(l, i + D::W) : a;
    store<V, S>(row + i, V::join(V::narrow(a.s), V::narrow(b.s)), lanes, stream);
    store<V, S>(row + half + i, V::join(V::narrow(a.c), V::narrow(b.c)), lanes, stream);
  }
}

/// x += PE for one row, either layout.
template <class V, Storage S>
inline void add_row(const SinusoidalCall& c, const RowAngles<typename V::D>& angles, std::size_t l, Elem<V, S>* row) {
  using D = typename V::D;
  const std::size_t half = c.f.count;
  if (c.interleaved) {
    for (std::size_t i = 0; i < half; i += D::W) {
      const SinCos<D> sc = angles.at(l, i);
      typename D::R lo, hi;
      D::interleave(sc.s, sc.c, lo, hi);
      add<V, S>(row + 2 * i, lo, hi, half - i < D::W ? 2 * (half - i) : V::W);
    }
    return;
  }
  for (std::size_t i = 0; i < half; i += V::W) {
    const std::size_t lanes = half - i < V::W ? half - i : V::W;
    const SinCos<D> a = angles.at(l, i), b = lanes > D::W ? angles.at(l, i + D::W) : a;
    add<V, S>(row + i, a.s, b.s, lanes);
    add<V, S>(row + half + i, a.c, b.c, lanes);
  }
}

}  // namespace sinusoid_body

/// Rows t of the call: PE(positions[t]) stored, or added to x; the padding position's row zero.
template <class V, Storage S>
void sinusoidal_rows(const SinusoidalCall& c) {
  using namespace sinusoid_body;
  using D = typename V::D;
  const std::size_t half = c.f.count;
  const bool stream = streams<S>(c);
  RowAngles<D> angles(c);
  for (std::size_t t = 0; t < c.n; ++t) {
    Elem<V, S>* row = static_cast<Elem<V, S>*>(c.data) + static_cast<std::ptrdiff_t>(t) * c.stride;
    if (c.padding_idx >= 0 && c.positions[t] == c.padding_idx) {  // the padding row is zero: x += 0 leaves x alone
      if (!c.add)
        for (std::size_t i = 0; i < 2 * half; i += V::W)
          2 * half - i < V::W ? V::template Io<S>::store_first(row + i, V::zero(), V::first(2 * half - i))
                              : V::template Io<S>::store(row + i, V::zero());
      continue;
    }
    const std::size_t l = angles.seek(c.positions[t]);
    if (c.add)
      add_row<V, S>(c, angles, l, row);
    else if (c.interleaved)
      interleaved_table_row<V, S>(angles, l, half, row, stream);
    else
      half_split_table_row<V, S>(angles, l, half, row, stream);
  }
  if (stream) _mm_sfence();  // the non-temporal stores ordered before the caller reads the table
}

/// dst[i] = src[i] rounded to the storage through the width's own stores.
template <class V, Storage S>
void from_float(const float* src, std::size_t n, void* dst) {
  auto* d = static_cast<typename V::template Elem<S>*>(dst);
  std::size_t i = 0;
  for (; i + V::W <= n; i += V::W) V::template Io<S>::store(d + i, V::load(src + i));
  if (i < n)
    V::template Io<S>::store_first(d + i, V::template Io<Storage::f32>::load_first(src + i, V::first(n - i)),
                                   V::first(n - i));
}

}  // namespace

}  // namespace pecheck::simd
