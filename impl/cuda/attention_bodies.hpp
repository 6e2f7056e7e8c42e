// The attention forward pass as CUDA thread and block bodies (see kernel_bodies.hpp for what a
// body is). Inputs are widened to float working copies and the PE applied to them (the sinusoid
// added to Q, K and V; RoPE on Q and K) by element bodies; then either the general kernel (one
// thread per (query, head), double) or the tiled one (a block of queries of one head sharing
// tiles of K and V in shared memory, fp32 dot products and accumulators, the softmax's running
// maximum, sum and weights in double). C++17: nvcc compiles this.
#pragma once

#include <math.h>

#include <cstddef>
#include <cstdint>

#include "impl/cuda/kernel_bodies.hpp"
#include "impl/cuda/kernel_storage.hpp"
#include "impl/cuda/kernels.hpp"

namespace pecheck::cuda {

/// Widens storage to the float working copies attention transforms and reads.
template <class T>
struct WidenBody {
  struct Args {
    float* out;
    const T* in;
    std::int64_t count;
  };
  static std::int64_t threads(const Args& a) { return a.count; }
  PECHECK_HOST_DEVICE static void run(std::int64_t idx, const Args& a) {
    a.out[idx] = static_cast<float>(load(a.in + idx));
  }
};

/// Adds a row of the PE table to every one of Q, K and V (identity projections), in float; Q
/// holds the last tokens only, from element q_from of the table on.
struct AddPeBody {
  struct Args {
    float *q, *k, *v;
    const float* pe;
    std::int64_t count;
    std::int64_t q_from;
  };
  static std::int64_t threads(const Args& a) { return a.count; }
  PECHECK_HOST_DEVICE static void run(std::int64_t idx, const Args& a) {
    if (idx >= a.q_from) a.q[idx - a.q_from] += a.pe[idx];
    a.k[idx] += a.pe[idx];
    a.v[idx] += a.pe[idx];
  }
};

template <class T>
struct AttentionArgs {
  T* out;                  ///< (queries, heads, d)
  const float *q, *k, *v;  ///< float working copies, PE already applied
  const float* table;      ///< Shaw's (2K + 1, d) for pe == 4, T5's (num_buckets, heads) for pe == 5
  const double* slopes;    ///< (heads) for pe == 3
  const std::int64_t* pos;
  std::int64_t n;
  int heads, d;
  bool causal;
  double scale;
  int pe;  ///< numbered as pecheck::AttentionPE: 3 ALiBi, 4 Shaw, 5 T5 enter the scores here
  int max_distance;
  int kv_heads;          ///< k, v are (n, kv_heads, d); 0 means heads
  int window;            ///< 0, or the sliding window: token t sees keys (t - window, t]
  std::int64_t queries;  ///< q and out rows: tokens n - queries .. n - 1 (the mask aligned bottom-right)
  t5::Buckets buckets;   ///< T5's bucketing, for pe == 5
};

/// What ALiBi (pe 3) or T5's table (pe 5) adds to head h's scaled logit of token i and key j.
template <class T>
PECHECK_HOST_DEVICE inline double score_bias(const AttentionArgs<T>& a, int h, std::int64_t i, std::int64_t j) {
  if (a.pe == 3) {
    const double dist = static_cast<double>(a.pos[i] - a.pos[j]);
    return -a.slopes[h] * (a.causal ? dist : fabs(dist));
  }
  if (a.pe == 5) return a.table[t5::bucket(a.pos[j] - a.pos[i], a.buckets) * a.heads + h];
  return 0;
}

/// The token of query row i.
template <class T>
PECHECK_HOST_DEVICE inline std::int64_t query_token(const AttentionArgs<T>& a, std::int64_t i) {
  return a.n - a.queries + i;
}

/// The first key token t sees.
template <class T>
PECHECK_HOST_DEVICE inline std::int64_t first_key(const AttentionArgs<T>& a, std::int64_t t) {
  return a.window > 0 && t + 1 > a.window ? t + 1 - a.window : 0;
}

/// Row j of K (or V) for query head h: its group's K/V head h / (heads / kv_heads).
template <class T>
PECHECK_HOST_DEVICE inline std::int64_t kv_row(const AttentionArgs<T>& a, std::int64_t j, int h) {
  const int kv = a.kv_heads > 0 ? a.kv_heads : a.heads;
  return (j * kv + h / (a.heads / kv)) * a.d;
}

/// One thread per (query, head): an online softmax over the keys in double, the accumulator in
/// a per-thread array. The general kernel: Shaw's scores (whose r rows differ for every (i, j)),
/// and the reference the tiled kernel is checked against.
template <class T>
struct AttentionBody {
  using Args = AttentionArgs<T>;
  static std::int64_t threads(const Args& a) { return a.queries * a.heads; }
  PECHECK_HOST_DEVICE static void run(std::int64_t idx, const Args& a) {
    const std::int64_t i = query_token(a, idx / a.heads);  // the token; q and out rows are idx / heads
    const int h = static_cast<int>(idx % a.heads), d = a.d;
    const std::int64_t keys = a.causal ? i + 1 : a.n;
    const float* qi = a.q + idx * d;
    double m = -HUGE_VAL, sum = 0;
    double acc[kMaxAttentionHeadDim];
    for (int c = 0; c < d; ++c) acc[c] = 0;
    for (std::int64_t j = first_key(a, i); j < keys; ++j) {
      const float* kj = a.k + kv_row(a, j, h);
      double dot = 0;
      for (int c = 0; c < d; ++c) dot += static_cast<double>(qi[c]) * kj[c];
      if (a.pe == 4) {  // Shaw: q_i . r(p_j - p_i), before scaling
        const float* r = a.table + (clamp_distance(a.pos[j] - a.pos[i], a.max_distance) + a.max_distance) * d;
        for (int c = 0; c < d; ++c) dot += static_cast<double>(qi[c]) * r[c];
      }
      const double l = a.scale * dot + score_bias(a, h, i, j);
      if (l > m) {  // a new maximum rescales what was accumulated
        const double correction = exp(m - l);
        sum *= correction;
        for (int c = 0; c < d; ++c) acc[c] *= correction;
        m = l;
      }
      const double w = exp(l - m);
      sum += w;
      const float* vj = a.v + kv_row(a, j, h);
      for (int c = 0; c < d; ++c) acc[c] += w * vj[c];
    }
    for (int c = 0; c < d; ++c) store(a.out + idx * d + c, acc[c] / sum);
  }
};

/// A block body: Args, kThreads, kSharedFloats, State (one thread's registers), blocks(Args) and,
/// per block and thread, start, then for each of tiles(block) tiles: load (into shared memory),
/// a barrier, consume, a barrier; then finish. The GPU runs it as one kernel
/// (kernels.cu's block_kernel); the emulator runs each phase for every thread before the next,
/// and poisons the shared memory before every load, so a thread that reads what no thread loaded
/// reads NaN.
///
/// Tiled attention: a block of kThreads queries of one head, one thread each, its query row and
/// output accumulator in registers (DMax floats each, head_dim <= DMax). K and V arrive in tiles
/// of kKeys rows (32 KiB of shared memory for both); every thread reads each key row from shared
/// memory as a broadcast. Per key: an fp32 dot product (FMA, four partial sums), the logit scaled and biased in
/// double, the running maximum, the weight exp(l - m) and its sum in double, the weight rounded to
/// fp32 into the accumulator (FMA). Within the bound of docs/error-model.md section 6, whose
/// terms are those of an fp32 kernel with an online softmax. Shaw goes to the general kernel.
template <class T, int DMax>
struct AttentionTileBody {
  using Args = AttentionArgs<T>;
  static constexpr int kThreads = 64;
  static constexpr int kKeys = DMax <= 64 ? 64 : 4096 / DMax;
  static constexpr int kSharedFloats = 2 * kKeys * DMax;  ///< K tile, then V tile

  struct State {
    float q[DMax];
    float acc[DMax];
    double m, sum;
  };

  static std::int64_t blocks(const Args& a) { return (a.queries + kThreads - 1) / kThreads * a.heads; }

  /// Block b holds query rows [i0, i0 + kThreads) of head b % heads (tokens from query_token(i0)).
  PECHECK_HOST_DEVICE static std::int64_t first_query(std::int64_t b, const Args& a) { return b / a.heads * kThreads; }

  PECHECK_HOST_DEVICE static int tiles(std::int64_t b, const Args& a) {
    const std::int64_t end = query_token(a, first_query(b, a) + kThreads);
    const std::int64_t keys = a.causal && end < a.n ? end : a.n;  // a causal block sees no later key
    return static_cast<int>((keys + kKeys - 1) / kKeys);
  }

  PECHECK_HOST_DEVICE static void start(std::int64_t b, int tid, const Args& a, State& st) {
    const std::int64_t i = first_query(b, a) + tid;
    const int h = static_cast<int>(b % a.heads);
    PECHECK_UNROLL
    for (int c = 0; c < DMax; ++c) {
      st.q[c] = c < a.d && i < a.queries ? a.q[(i * a.heads + h) * a.d + c] : 0.0f;
      st.acc[c] = 0.0f;
    }
    st.m = -HUGE_VAL;
    st.sum = 0;
  }

  /// Rows [j0, j0 + kKeys) of K and V (those below n) into shared memory, the block's threads
  /// striding over the elements: consecutive threads, consecutive addresses.
  PECHECK_HOST_DEVICE static void load(std::int64_t b, int tile, int tid, const Args& a, float* shared) {
    const std::int64_t j0 = static_cast<std::int64_t>(tile) * kKeys;
    const int h = static_cast<int>(b % a.heads);
    const int rows = static_cast<int>(a.n - j0 < kKeys ? a.n - j0 : kKeys);
    for (int e = tid; e < rows * a.d; e += kThreads) {
      const int r = e / a.d, c = e % a.d;
      const std::int64_t at = kv_row(a, j0 + r, h) + c;
      shared[r * DMax + c] = a.k[at];
      shared[kKeys * DMax + r * DMax + c] = a.v[at];
    }
  }

  PECHECK_HOST_DEVICE static void consume(std::int64_t b, int tile, int tid, const Args& a, const float* shared,
                                          State& st) {
    const std::int64_t row = first_query(b, a) + tid;
    if (row >= a.queries) return;
    const std::int64_t i = query_token(a, row);
    const int h = static_cast<int>(b % a.heads);
    const std::int64_t j0 = static_cast<std::int64_t>(tile) * kKeys;
    std::int64_t last = j0 + kKeys - 1;  // the last key this thread takes from the tile
    if (last >= a.n) last = a.n - 1;
    if (a.causal && last > i) last = i;
    for (std::int64_t j = j0 < first_key(a, i) ? first_key(a, i) : j0; j <= last; ++j) {
      const float* kr = shared + (j - j0) * DMax;
      const float* vr = kr + kKeys * DMax;
      float part[4] = {0.0f, 0.0f, 0.0f, 0.0f};  // four chains of FMAs in flight, not one
      PECHECK_UNROLL
      for (int c = 0; c < DMax; ++c)
        if (c < a.d) part[c % 4] = fmaf(st.q[c], kr[c], part[c % 4]);
      const float dot = (part[0] + part[1]) + (part[2] + part[3]);
      const double l = a.scale * static_cast<double>(dot) + score_bias(a, h, i, j);
      if (l > st.m) {  // a new maximum rescales what was accumulated
        const float correction = static_cast<float>(exp(st.m - l));
        st.sum *= static_cast<double>(correction);
        PECHECK_UNROLL
        for (int c = 0; c < DMax; ++c) st.acc[c] *= correction;
        st.m = l;
      }
      const float w = static_cast<float>(exp(l - st.m));
      st.sum += static_cast<double>(w);
      PECHECK_UNROLL
      for (int c = 0; c < DMax; ++c)
        if (c < a.d) st.acc[c] = fmaf(w, vr[c], st.acc[c]);
    }
  }

  PECHECK_HOST_DEVICE static void finish(std::int64_t b, int tid, const Args& a, const State& st) {
    const std::int64_t i = first_query(b, a) + tid;
    if (i >= a.queries) return;
    const int h = static_cast<int>(b % a.heads);
    T* row = a.out + (i * a.heads + h) * a.d;
    PECHECK_UNROLL
    for (int c = 0; c < DMax; ++c)  // constant indices: the arrays stay in registers
      if (c < a.d) store(row + c, static_cast<double>(st.acc[c]) / st.sum);
  }
};

}  // namespace pecheck::cuda
