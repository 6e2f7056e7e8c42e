// What each CUDA thread does, written once for two targets: impl/cuda/kernels.cu launches every
// body as a grid of threads on the GPU, and impl/cuda/emulator.cpp runs the same bodies thread by
// thread on the CPU, so the kernels' indexing, vector accesses and arithmetic are checked by the
// property catalogue on machines without a GPU. A body is a struct with Args (plain pointers and
// sizes), threads(Args) (how many threads its grid has, host side) and run(thread index, Args).
// Angles are formed as on the host backends (impl/angles.hpp), arithmetic is double, and every
// output is rounded once into the dtype. C++17: nvcc compiles this.
#pragma once

#include <math.h>

#include <cstddef>
#include <cstdint>

#include "impl/angles.hpp"
#include "impl/cuda/kernel_storage.hpp"
#include "impl/cuda/kernels.hpp"
#include "impl/t5_bucket.hpp"

namespace pecheck::cuda {

/// Consecutive pairs per RoPE or sinusoid thread: the widest G (8, 4, 2, 1) whose accesses are
/// aligned vectors of at most 16 bytes. An access covers G elements (half-split: x1's and x2's
/// separately) or 2G (interleaved: the pairs side by side), starting at offset + a multiple of
/// it in rows `stride` elements apart, so stride, offset and the pair count must all divide.
inline int access_group(std::size_t element_bytes, int stride, int offset, int pairs, bool interleaved) {
  for (int g = 8; g > 1; g /= 2) {
    const int width = interleaved ? 2 * g : g;
    if (static_cast<std::size_t>(width) * element_bytes <= 16 && pairs % g == 0 && stride % width == 0 &&
        offset % width == 0)
      return g;
  }
  return 1;
}

// ---- RoPE: one thread per (token, group of G pairs), its sin and cos applied to every head ----

template <class T>
struct RopeArgs {
  T* x;  ///< (tokens, heads, head_dim)
  const std::int64_t* pos;
  const angles::Frequency* freq;  ///< pairs frequencies
  std::int64_t tokens;
  int heads, head_dim;
  int offset;  ///< first dim of the rotated segment: 0, or head_dim / 2 for 2-D RoPE's columns
  int pairs;   ///< the segment is 2 * pairs dims wide; dims outside it are never touched
  bool interleaved;
  double magnitude;  ///< YaRN's factor on cos and sin, else 1
};

template <class T, int G>
struct RopeBody {
  using Args = RopeArgs<T>;
  static constexpr int kHeadBatch = 4;  ///< heads loaded before any is stored: loads in flight
  static std::int64_t threads(const Args& a) { return a.tokens * (a.pairs / G); }

  PECHECK_HOST_DEVICE static void run(std::int64_t idx, const Args& a) {
    const int groups = a.pairs / G;
    const std::int64_t t = idx / groups;
    const int p0 = static_cast<int>(idx % groups) * G;
    double c[G], s[G];
    PECHECK_UNROLL
    for (int g = 0; g < G; ++g) {
      const angles::SinCos sc = angles::sincos(a.pos[t], a.freq[p0 + g]);
      c[g] = a.magnitude * sc.c;
      s[g] = a.magnitude * sc.s;
    }
    T* token = a.x + t * a.heads * a.head_dim + a.offset;
    if (a.interleaved)
      interleaved(token, p0, c, s, a);
    else
      half_split(token, p0, c, s, a);
  }

  /// Pairs (2p, 2p+1): one access of 2G elements per head.
  PECHECK_HOST_DEVICE static void interleaved(T* token, int p0, const double* c, const double* s, const Args& a) {
    for (int h0 = 0; h0 < a.heads; h0 += kHeadBatch) {
      Pack<T, 2 * G> v[kHeadBatch];
      PECHECK_UNROLL
      for (int b = 0; b < kHeadBatch; ++b)
        if (h0 + b < a.heads) v[b] = load_pack<T, 2 * G>(token + (h0 + b) * a.head_dim + 2 * p0);
      PECHECK_UNROLL
      for (int b = 0; b < kHeadBatch; ++b) {
        if (h0 + b >= a.heads) continue;
        Pack<T, 2 * G> o;
        PECHECK_UNROLL
        for (int g = 0; g < G; ++g) {
          const double x1 = widen(v[b].v[2 * g]), x2 = widen(v[b].v[2 * g + 1]);
          o.v[2 * g] = Narrow<T>::from(x1 * c[g] - x2 * s[g]);
          o.v[2 * g + 1] = Narrow<T>::from(x2 * c[g] + x1 * s[g]);
        }
        store_pack<T, 2 * G>(token + (h0 + b) * a.head_dim + 2 * p0, o);
      }
    }
  }

  /// Pairs (p, p + pairs): two accesses of G elements per head.
  PECHECK_HOST_DEVICE static void half_split(T* token, int p0, const double* c, const double* s, const Args& a) {
    for (int h0 = 0; h0 < a.heads; h0 += kHeadBatch) {
      Pack<T, G> v1[kHeadBatch], v2[kHeadBatch];
      PECHECK_UNROLL
      for (int b = 0; b < kHeadBatch; ++b)
        if (h0 + b < a.heads) {
          v1[b] = load_pack<T, G>(token + (h0 + b) * a.head_dim + p0);
          v2[b] = load_pack<T, G>(token + (h0 + b) * a.head_dim + a.pairs + p0);
        }
      PECHECK_UNROLL
      for (int b = 0; b < kHeadBatch; ++b) {
        if (h0 + b >= a.heads) continue;
        Pack<T, G> o1, o2;
        PECHECK_UNROLL
        for (int g = 0; g < G; ++g) {
          const double x1 = widen(v1[b].v[g]), x2 = widen(v2[b].v[g]);
          o1.v[g] = Narrow<T>::from(x1 * c[g] - x2 * s[g]);
          o2.v[g] = Narrow<T>::from(x2 * c[g] + x1 * s[g]);
        }
        store_pack<T, G>(token + (h0 + b) * a.head_dim + p0, o1);
        store_pack<T, G>(token + (h0 + b) * a.head_dim + a.pairs + p0, o2);
      }
    }
  }
};

// ---- the sinusoidal table: one thread per (group of G pairs, run of Rows rows) ----

/// Rows per thread when the positions are consecutive: sin and cos are computed exactly at the
/// run's first row and carried to the next by the rotation through one step's angle, in double
/// (two roundings a step: |error| <= ~64 * 2^-53 over a run, far below fp32's 2^-25).
constexpr int kSinusoidRun = 32;

template <class T>
struct SinusoidArgs {
  T* out;  ///< rows of row_stride elements; this table fills [col_offset, col_offset + 2 * pairs)
  const std::int64_t* pos;
  const angles::Frequency* freq;  ///< pairs frequencies
  std::int64_t rows;
  int row_stride, col_offset, pairs;
  bool interleaved;          ///< (sin, cos) side by side, else sines then cosines
  std::int64_t padding_idx;  ///< fairseq's all-zero row, or -1
};

template <class T, int G, int Rows>
struct SinusoidBody {
  using Args = SinusoidArgs<T>;
  static std::int64_t threads(const Args& a) { return (a.rows + Rows - 1) / Rows * (a.pairs / G); }

  PECHECK_HOST_DEVICE static void run(std::int64_t idx, const Args& a) {
    const int groups = a.pairs / G;
    const std::int64_t t0 = idx / groups * Rows;
    const int i0 = static_cast<int>(idx % groups) * G;
    const std::int64_t t1 = t0 + Rows < a.rows ? t0 + Rows : a.rows;
    double s[G], c[G], step_s[G], step_c[G];
    PECHECK_UNROLL
    for (int g = 0; g < G; ++g) {
      const angles::SinCos sc = angles::sincos(a.pos[t0], a.freq[i0 + g]);
      s[g] = sc.s;
      c[g] = sc.c;
      if constexpr (Rows > 1) {
        const angles::SinCos step = angles::sincos(1, a.freq[i0 + g]);
        step_s[g] = step.s;
        step_c[g] = step.c;
      }
    }
    for (std::int64_t t = t0; t < t1; ++t) {
      const bool zero = a.padding_idx >= 0 && a.pos[t] == a.padding_idx;
      T* row = a.out + t * a.row_stride + a.col_offset;
      if (a.interleaved) {
        Pack<T, 2 * G> o;
        PECHECK_UNROLL
        for (int g = 0; g < G; ++g) {
          o.v[2 * g] = Narrow<T>::from(zero ? 0.0 : s[g]);
          o.v[2 * g + 1] = Narrow<T>::from(zero ? 0.0 : c[g]);
        }
        store_pack<T, 2 * G>(row + 2 * i0, o);
      } else {
        Pack<T, G> os, oc;
        PECHECK_UNROLL
        for (int g = 0; g < G; ++g) {
          os.v[g] = Narrow<T>::from(zero ? 0.0 : s[g]);
          oc.v[g] = Narrow<T>::from(zero ? 0.0 : c[g]);
        }
        store_pack<T, G>(row + i0, os);
        store_pack<T, G>(row + a.pairs + i0, oc);
      }
      if constexpr (Rows > 1) {
        PECHECK_UNROLL
        for (int g = 0; g < G; ++g) {  // rotate by one step: (s, c) at position p + 1
          const double next_s = s[g] * step_c[g] + c[g] * step_s[g];
          c[g] = c[g] * step_c[g] - s[g] * step_s[g];
          s[g] = next_s;
        }
      }
    }
  }
};

// ---- biases: one thread per entry (ALiBi) or per (i, j) (T5) ----

template <class T>
struct AlibiArgs {
  T* out;  ///< (heads, n, n)
  const std::int64_t* pos;
  const double* slopes;
  std::int64_t n;
  int heads;
  bool causal;
};

template <class T>
struct AlibiBody {
  using Args = AlibiArgs<T>;
  static std::int64_t threads(const Args& a) { return a.heads * a.n * a.n; }
  PECHECK_HOST_DEVICE static void run(std::int64_t idx, const Args& a) {
    const std::int64_t j = idx % a.n, i = idx / a.n % a.n;
    const int h = static_cast<int>(idx / (a.n * a.n));
    if (a.causal && j > i) return store(a.out + idx, -HUGE_VAL);
    const double distance = static_cast<double>(a.pos[i] - a.pos[j]);  // exact below 2^53
    store(a.out + idx, -a.slopes[h] * (a.causal ? distance : fabs(distance)));
  }
};

template <class T>
struct T5Args {
  T* out;          ///< (heads, n, n)
  const T* table;  ///< (num_buckets, heads)
  const std::int64_t* pos;
  std::int64_t n;
  int heads;
  t5::Buckets buckets;
};

template <class T>
struct T5Body {
  using Args = T5Args<T>;
  static std::int64_t threads(const Args& a) { return a.n * a.n; }
  PECHECK_HOST_DEVICE static void run(std::int64_t idx, const Args& a) {
    const std::int64_t j = idx % a.n, i = idx / a.n;
    const int b = t5::bucket(a.pos[j] - a.pos[i], a.buckets);
    for (int h = 0; h < a.heads; ++h) a.out[(h * a.n + i) * a.n + j] = a.table[b * a.heads + h];
  }
};

// ---- learned table and Shaw scores ----

template <class T>
struct LearnedArgs {
  T* x;            ///< (n, d), in place
  const T* table;  ///< (max_len, d)
  const std::int64_t* pos;
  std::int64_t n;
  int d;
};

/// One thread per element: the sum of two dtype values is exact in double, then rounded once.
template <class T>
struct LearnedBody {
  using Args = LearnedArgs<T>;
  static std::int64_t threads(const Args& a) { return a.n * a.d; }
  PECHECK_HOST_DEVICE static void run(std::int64_t idx, const Args& a) {
    const std::int64_t t = idx / a.d, c = idx % a.d;
    store(a.x + idx, load(a.x + idx) + load(a.table + a.pos[t] * a.d + c));
  }
};

/// Shaw's relative distance, clipped to [-k, k].
PECHECK_HOST_DEVICE inline std::int64_t clamp_distance(std::int64_t rel, int k) {
  return rel < -k ? -k : rel > k ? k : rel;
}

template <class T>
struct ShawArgs {
  T* out;              ///< (n, n)
  const T *q, *k, *r;  ///< q, k (n, d), r (2K + 1, d)
  const std::int64_t* pos;
  std::int64_t n;
  int d, max_distance;
};

/// One thread per (i, j), the dot products accumulated in double and rounded once.
template <class T>
struct ShawBody {
  using Args = ShawArgs<T>;
  static std::int64_t threads(const Args& a) { return a.n * a.n; }
  PECHECK_HOST_DEVICE static void run(std::int64_t idx, const Args& a) {
    const std::int64_t j = idx % a.n, i = idx / a.n;
    const T* row = a.r + (clamp_distance(a.pos[j] - a.pos[i], a.max_distance) + a.max_distance) * a.d;
    double acc = 0;
    for (int c = 0; c < a.d; ++c) acc += load(a.q + i * a.d + c) * (load(a.k + j * a.d + c) + load(row + c));
    store(a.out + idx, acc);
  }
};

}  // namespace pecheck::cuda
