// The host side of every CUDA backend call, written once over a Target: pack the float host
// values into native storage, upload, fence (sentinels after every buffer, outputs poisoned with
// all-ones bits), run the thread bodies (impl/cuda/kernel_bodies.hpp), check, download, unpack.
// kernels.cu instantiates it with the GPU as the target, emulator.cpp with the CPU. A Target has
//   template <class T> class Buffer   (n elements: data(), upload(const T*), download(T*),
//                                      poison(), check_guard(name))
//   template <class Body> void run(const typename Body::Args&, const char* kernel) const
//   template <class Body> void run_blocks(const typename Body::Args&, const char* kernel) const
// run() launches Body::threads(args) threads, run_blocks() Body::blocks(args) blocks of a block
// body (attention_bodies.hpp), and both check them. C++17: nvcc compiles this.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "impl/cuda/attention_bodies.hpp"
#include "impl/cuda/kernel_bodies.hpp"
#include "impl/cuda/kernels.hpp"

namespace pecheck::cuda {

/// Float values of the dtype -> native storage (exact: they are values of the dtype).
template <class T>
std::vector<T> to_storage(const float* v, std::size_t n) {
  std::vector<T> out(n);
  if constexpr (std::is_same_v<T, float>)
    std::copy(v, v + n, out.begin());  // bit for bit, NaN payloads included
  else
    for (std::size_t i = 0; i < n; ++i) out[i] = Narrow<T>::from(v[i]);
  return out;
}

template <class T>
void from_storage(const std::vector<T>& s, float* out) {
  for (std::size_t i = 0; i < s.size(); ++i) out[i] = static_cast<float>(widen(s[i]));
}

/// Throws when an element of a poisoned output still holds all-ones bits: never written (no
/// kernel writes that NaN: computed NaNs are canonical).
template <class T>
void check_written(const std::vector<T>& back, const char* kernel) {
  for (std::size_t i = 0; i < back.size(); ++i) {
    unsigned char bytes[sizeof(T)];
    std::memcpy(bytes, &back[i], sizeof(T));
    if (std::all_of(bytes, bytes + sizeof(T), [](unsigned char b) { return b == 0xFF; }))
      throw std::runtime_error(std::string("CUDA ") + kernel + " left out[" + std::to_string(i) + "] unwritten");
  }
}

template <class F>
void with_storage(Storage dt, F&& f) {
  switch (dt) {
    case Storage::f32:
      return f(float{});
    case Storage::bf16:
      return f(Bf16{});
    case Storage::f16:
      return f(F16{});
  }
}

/// Calls f(std::integral_constant<int, G>) for the access group g (1, 2, 4 or 8) that
/// access_group chose; groups wider than 16 bytes of T are never chosen, so never instantiated.
template <class T, class F>
void with_group(int g, F&& f) {
  switch (g) {
    case 8:
      if constexpr (8 * sizeof(T) <= 16) return f(std::integral_constant<int, 8>{});
      break;
    case 4:
      if constexpr (4 * sizeof(T) <= 16) return f(std::integral_constant<int, 4>{});
      break;
    case 2:
      return f(std::integral_constant<int, 2>{});
    default:
      return f(std::integral_constant<int, 1>{});
  }
  throw std::logic_error("access group wider than 16 bytes");
}

template <class Target, class T>
void launch_rope(const Target& target, const RopeArgs<T>& a) {
  with_group<T>(access_group(sizeof(T), a.head_dim, a.offset, a.pairs, a.interleaved),
                [&](auto g) { target.template run<RopeBody<T, decltype(g)::value>>(a, "rope_kernel"); });
}

/// Consecutive positions let a sinusoid thread carry its angles down a run of rows.
inline bool consecutive(const std::int64_t* positions, std::size_t n) {
  for (std::size_t t = 1; t < n; ++t)
    if (positions[t] != positions[t - 1] + 1) return false;
  return true;
}

template <class Target, class T>
void launch_sinusoid(const Target& target, const SinusoidArgs<T>& a, bool consecutive_positions) {
  with_group<T>(access_group(sizeof(T), a.row_stride, a.col_offset, a.pairs, a.interleaved), [&](auto g) {
    constexpr int G = decltype(g)::value;
    if (consecutive_positions)
      target.template run<SinusoidBody<T, G, kSinusoidRun>>(a, "sinusoidal_kernel");
    else
      target.template run<SinusoidBody<T, G, 1>>(a, "sinusoidal_kernel");
  });
}

/// Attention's RoPE on the float working copies: Q (the last nq of the n tokens, at their
/// positions) and K (every token, kv heads), by RoPE's whole spec (rotary pairs, cos/sin factor).
template <class Target>
void launch_attention_rope(const Target& target, const AttentionLaunch& a, const std::int64_t* positions,
                           const angles::Frequency* freqs, std::int64_t n, std::int64_t nq, float* q, float* k) {
  launch_rope<Target, float>(target, {q, positions + (n - nq), freqs, nq, a.heads, a.head_dim, 0, a.rotary_pairs(),
                                      a.rope_interleaved, a.magnitude});
  launch_rope<Target, float>(
      target, {k, positions, freqs, n, a.kv_count(), a.head_dim, 0, a.rotary_pairs(), a.rope_interleaved, a.magnitude});
}

/// The tiled kernel for head_dim <= 128 without Shaw, the general one otherwise.
template <class Target, class T>
void launch_attention(const Target& target, const AttentionArgs<T>& a) {
  if (a.pe == 4 || a.d > 128)
    target.template run<AttentionBody<T>>(a, "attention_kernel");
  else if (a.d <= 32)
    target.template run_blocks<AttentionTileBody<T, 32>>(a, "attention_tile_kernel");
  else if (a.d <= 64)
    target.template run_blocks<AttentionTileBody<T, 64>>(a, "attention_tile_kernel");
  else
    target.template run_blocks<AttentionTileBody<T, 128>>(a, "attention_tile_kernel");
}

template <class Target>
class TargetLauncher final : public Launcher {
  template <class T>
  using Buffer = typename Target::template Buffer<T>;

 public:
  explicit TargetLauncher(Target target) : target_(target) {}

  void rope_apply(Storage dt, const RopeLaunch& r, const std::int64_t* positions, std::size_t tokens,
                  const angles::Frequency* freqs, float* x) const override {
    if (tokens == 0) return;
    const std::size_t n = tokens * static_cast<std::size_t>(r.heads) * static_cast<std::size_t>(r.head_dim);
    with_storage(dt, [&](auto tag) {
      using T = decltype(tag);
      Buffer<T> xd(n);
      Buffer<std::int64_t> pd(tokens);
      Buffer<angles::Frequency> fd(static_cast<std::size_t>(r.rotary_dim / 2));
      xd.upload(to_storage<T>(x, n).data());
      pd.upload(positions);
      fd.upload(freqs);
      launch_rope<Target, T>(target_, {xd.data(), pd.data(), fd.data(), static_cast<std::int64_t>(tokens), r.heads,
                                       r.head_dim, 0, r.rotary_dim / 2, r.interleaved, r.magnitude});
      read_back(xd, n, x);
    });
  }

  void rope2d_apply(Storage dt, int heads, int head_dim, bool interleaved, const std::int64_t* rows,
                    const std::int64_t* cols, std::size_t n, const angles::Frequency* freqs, float* x) const override {
    if (n == 0) return;
    const std::size_t count = n * static_cast<std::size_t>(heads) * static_cast<std::size_t>(head_dim);
    with_storage(dt, [&](auto tag) {
      using T = decltype(tag);
      Buffer<T> xd(count);
      Buffer<std::int64_t> rd(n), cd(n);
      Buffer<angles::Frequency> fd(static_cast<std::size_t>(head_dim / 4));
      xd.upload(to_storage<T>(x, count).data());
      rd.upload(rows);
      cd.upload(cols);
      fd.upload(freqs);
      const auto n64 = static_cast<std::int64_t>(n);
      launch_rope<Target, T>(
          target_, {xd.data(), rd.data(), fd.data(), n64, heads, head_dim, 0, head_dim / 4, interleaved, 1.0});
      launch_rope<Target, T>(target_, {xd.data(), cd.data(), fd.data(), n64, heads, head_dim, head_dim / 2,
                                       head_dim / 4, interleaved, 1.0});
      read_back(xd, count, x);
    });
  }

  void sinusoidal_table(Storage dt, int d_model, bool interleaved, std::int64_t padding_idx,
                        const std::int64_t* positions, std::size_t rows, const angles::Frequency* freqs,
                        float* out) const override {
    if (rows == 0) return;
    const std::size_t n = rows * static_cast<std::size_t>(d_model);
    with_storage(dt, [&](auto tag) {
      using T = decltype(tag);
      Buffer<T> od(n);
      Buffer<std::int64_t> pd(rows);
      Buffer<angles::Frequency> fd(static_cast<std::size_t>(d_model / 2));
      od.poison();
      pd.upload(positions);
      fd.upload(freqs);
      launch_sinusoid<Target, T>(target_,
                                 {od.data(), pd.data(), fd.data(), static_cast<std::int64_t>(rows), d_model, 0,
                                  d_model / 2, interleaved, padding_idx},
                                 consecutive(positions, rows));
      collect(od, n, "sinusoidal_kernel", out);
    });
  }

  void sinusoidal2d_table(Storage dt, int d_model, bool interleaved, const std::int64_t* rows, const std::int64_t* cols,
                          std::size_t n, const angles::Frequency* freqs, float* out) const override {
    if (n == 0) return;
    const std::size_t count = n * static_cast<std::size_t>(d_model);
    with_storage(dt, [&](auto tag) {
      using T = decltype(tag);
      Buffer<T> od(count);
      Buffer<std::int64_t> rd(n), cd(n);
      Buffer<angles::Frequency> fd(static_cast<std::size_t>(d_model / 4));
      od.poison();
      rd.upload(rows);
      cd.upload(cols);
      fd.upload(freqs);
      const auto n64 = static_cast<std::int64_t>(n);
      launch_sinusoid<Target, T>(target_,
                                 {od.data(), rd.data(), fd.data(), n64, d_model, 0, d_model / 4, interleaved, -1},
                                 consecutive(rows, n));
      launch_sinusoid<Target, T>(
          target_, {od.data(), cd.data(), fd.data(), n64, d_model, d_model / 2, d_model / 4, interleaved, -1},
          consecutive(cols, n));
      collect(od, count, "sinusoidal_kernel", out);
    });
  }

  void alibi_bias(Storage dt, int heads, bool causal, const double* slopes, const std::int64_t* positions,
                  std::size_t n, float* out) const override {
    if (n == 0) return;
    const std::size_t count = static_cast<std::size_t>(heads) * n * n;
    with_storage(dt, [&](auto tag) {
      using T = decltype(tag);
      Buffer<T> od(count);
      Buffer<std::int64_t> pd(n);
      Buffer<double> sd(static_cast<std::size_t>(heads));
      od.poison();
      pd.upload(positions);
      sd.upload(slopes);
      target_.template run<AlibiBody<T>>({od.data(), pd.data(), sd.data(), static_cast<std::int64_t>(n), heads, causal},
                                         "alibi_kernel");
      collect(od, count, "alibi_kernel", out);
    });
  }

  void t5_bias(Storage dt, const T5Launch& t, const float* table, const std::int64_t* positions, std::size_t n,
               float* out) const override {
    if (n == 0) return;
    const std::size_t count = static_cast<std::size_t>(t.heads) * n * n;
    const std::size_t table_size = static_cast<std::size_t>(t.num_buckets) * static_cast<std::size_t>(t.heads);
    const t5::Buckets buckets = t.buckets();
    with_storage(dt, [&](auto tag) {
      using T = decltype(tag);
      Buffer<T> od(count), td(table_size);
      Buffer<std::int64_t> pd(n);
      od.poison();
      td.upload(to_storage<T>(table, table_size).data());
      pd.upload(positions);
      target_.template run<T5Body<T>>({od.data(), td.data(), pd.data(), static_cast<std::int64_t>(n), t.heads, buckets},
                                      "t5_kernel");
      collect(od, count, "t5_kernel", out);
    });
  }

  void learned_add(Storage dt, int d, int max_len, const float* table, const std::int64_t* positions, std::size_t n,
                   float* x) const override {
    if (n == 0) return;
    const std::size_t count = n * static_cast<std::size_t>(d);
    const std::size_t table_size = static_cast<std::size_t>(max_len) * static_cast<std::size_t>(d);
    with_storage(dt, [&](auto tag) {
      using T = decltype(tag);
      Buffer<T> xd(count), td(table_size);
      Buffer<std::int64_t> pd(n);
      xd.upload(to_storage<T>(x, count).data());
      td.upload(to_storage<T>(table, table_size).data());
      pd.upload(positions);
      target_.template run<LearnedBody<T>>({xd.data(), td.data(), pd.data(), static_cast<std::int64_t>(n), d},
                                           "learned_kernel");
      read_back(xd, count, x);
    });
  }

  void shaw_scores(Storage dt, int d, int max_distance, const float* q, const float* k, const float* table,
                   const std::int64_t* positions, std::size_t n, float* out) const override {
    if (n == 0) return;
    const std::size_t qk = n * static_cast<std::size_t>(d);
    const std::size_t rows = static_cast<std::size_t>(2 * max_distance + 1) * static_cast<std::size_t>(d);
    with_storage(dt, [&](auto tag) {
      using T = decltype(tag);
      Buffer<T> od(n * n), qd(qk), kd(qk), rd(rows);
      Buffer<std::int64_t> pd(n);
      od.poison();
      qd.upload(to_storage<T>(q, qk).data());
      kd.upload(to_storage<T>(k, qk).data());
      rd.upload(to_storage<T>(table, rows).data());
      pd.upload(positions);
      target_.template run<ShawBody<T>>(
          {od.data(), qd.data(), kd.data(), rd.data(), pd.data(), static_cast<std::int64_t>(n), d, max_distance},
          "shaw_kernel");
      collect(od, n * n, "shaw_kernel", out);
    });
  }

  void attention(Storage dt, const AttentionLaunch& a, const std::int64_t* positions, std::size_t n, const float* q,
                 const float* k, const float* v, const float* pe_table, std::size_t table_size, const double* slopes,
                 const angles::Frequency* freqs, std::size_t freq_count, float* out) const override {
    if (n == 0 || a.query_count(n) == 0) return;
    // Q and the output hold the last nq tokens (a decode step: one), K and V all n.
    const std::size_t nq = a.query_count(n), width = static_cast<std::size_t>(a.heads * a.head_dim);
    const std::size_t count = nq * width;
    const std::size_t kv_count = n * static_cast<std::size_t>(a.kv_count()) * static_cast<std::size_t>(a.head_dim);
    const auto c64 = static_cast<std::int64_t>(count), kv64 = static_cast<std::int64_t>(kv_count),
               n64 = static_cast<std::int64_t>(n), nq64 = static_cast<std::int64_t>(nq);
    with_storage(dt, [&](auto tag) {
      using T = decltype(tag);
      Buffer<T> od(count), qs(count), ks(kv_count), vs(kv_count);
      Buffer<float> qf(count), kf(kv_count), vf(kv_count), table(std::max<std::size_t>(table_size, 1));
      Buffer<std::int64_t> pd(n);
      Buffer<double> sd(static_cast<std::size_t>(a.heads));
      Buffer<angles::Frequency> fd(std::max<std::size_t>(freq_count, 1));
      od.poison();
      // Inputs arrive as dtype values: stored in T, widened to float working copies by a kernel.
      qs.upload(to_storage<T>(q, count).data());
      ks.upload(to_storage<T>(k, kv_count).data());
      vs.upload(to_storage<T>(v, kv_count).data());
      target_.template run<WidenBody<T>>({qf.data(), qs.data(), c64}, "widen_kernel");
      target_.template run<WidenBody<T>>({kf.data(), ks.data(), kv64}, "widen_kernel");
      target_.template run<WidenBody<T>>({vf.data(), vs.data(), kv64}, "widen_kernel");
      pd.upload(positions);
      if (table_size) table.upload(pe_table);
      if (a.pe == 3) sd.upload(slopes);
      if (freq_count) fd.upload(freqs);
      const int w = a.heads * a.head_dim;
      if (a.pe == 1) {  // the sinusoid of width heads*head_dim, in float, added to Q, K and V
        Buffer<float> table(n * width);
        launch_sinusoid<Target, float>(target_, {table.data(), pd.data(), fd.data(), n64, w, 0, w / 2, true, -1},
                                       consecutive(positions, n));
        target_.template run<AddPeBody>(
            {qf.data(), kf.data(), vf.data(), table.data(), kv64, static_cast<std::int64_t>((n - nq) * width)},
            "add_pe_kernel");
      } else if (a.pe == 2) {
        launch_attention_rope(target_, a, pd.data(), fd.data(), n64, nq64, qf.data(), kf.data());
      }
      const AttentionArgs<T> args{
          od.data(),  qf.data(), kf.data(),  vf.data(),     table.data(), sd.data(), pd.data(),
          n64,        a.heads,   a.head_dim, a.causal,      a.scale,      a.pe,      a.shaw_max_distance,
          a.kv_heads, a.window,  nq64,       a.t5.buckets()};
      launch_attention<Target, T>(target_, args);
      collect(od, count, "attention_kernel", out);
    });
  }

 private:
  /// After a kernel that must write all of od: its sentinels, then every element written, then the
  /// values into out.
  template <class T>
  static void collect(const Buffer<T>& od, std::size_t count, const char* kernel, float* out) {
    od.check_guard("out");
    std::vector<T> back(count);
    od.download(back.data());
    check_written(back, kernel);
    from_storage(back, out);
  }

  /// After a kernel that updates x in place: its sentinels, then the values into x.
  template <class T>
  static void read_back(const Buffer<T>& xd, std::size_t count, float* x) {
    xd.check_guard("x");
    std::vector<T> back(count);
    xd.download(back.data());
    from_storage(back, x);
  }

  Target target_;
};

}  // namespace pecheck::cuda
