// CUDA kernels for RoPE and the sinusoidal table, and the host side that packs, launches and
// checks them. Angles are formed exactly as on the host (impl/angles.hpp's sincos, shared
// __host__ __device__): double-double frequencies from the host, an FMA-exact angle split, double
// sin/cos; every output is rounded once from double into the dtype.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math_constants.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "impl/angles.hpp"
#include "impl/cuda/kernels.hpp"
#include "spec/half_bits.hpp"

namespace pecheck::cuda {

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("CUDA ") + what + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) +
                             ")");
}
#define PECHECK_CUDA(call) check((call), #call)

// ---- device side ----

__device__ inline double load(const float* p) { return *p; }
__device__ inline double load(const __nv_bfloat16* p) { return __bfloat162float(*p); }
__device__ inline double load(const __half* p) { return __half2float(*p); }

__device__ inline void store(float* p, double v) { *p = __double2float_rn(v); }
__device__ inline void store(__nv_bfloat16* p, double v) { *p = __double2bfloat16(v); }
__device__ inline void store(__half* p, double v) { *p = __double2half(v); }

/// One thread per (token, pair): the angle's sin and cos are computed once and applied to the
/// pair in every head of the token.
template <class T>
__global__ void rope_kernel(T* x, const std::int64_t* pos, const angles::Frequency* freq, std::int64_t tokens,
                            int heads, int head_dim, int pairs, bool interleaved, double magnitude) {
  const std::int64_t idx = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= tokens * pairs) return;
  const std::int64_t t = idx / pairs;
  const int p = static_cast<int>(idx % pairs);
  const angles::SinCos sc = angles::sincos(pos[t], freq[p]);
  const double c = magnitude * sc.c, s = magnitude * sc.s;
  const int a = interleaved ? 2 * p : p, b = interleaved ? 2 * p + 1 : p + pairs;
  for (int h = 0; h < heads; ++h) {
    T* row = x + (t * heads + h) * head_dim;
    const double x1 = load(row + a), x2 = load(row + b);
    store(row + a, x1 * c - x2 * s);
    store(row + b, x2 * c + x1 * s);
  }
}

/// One thread per (row, pair).
template <class T>
__global__ void sinusoidal_kernel(T* out, const std::int64_t* pos, const angles::Frequency* freq, std::int64_t rows,
                                  int d_model, bool interleaved, std::int64_t padding_idx) {
  const int half = d_model / 2;
  const std::int64_t idx = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= rows * half) return;
  const std::int64_t t = idx / half;
  const int i = static_cast<int>(idx % half);
  T* row = out + t * d_model;
  const int si = interleaved ? 2 * i : i, ci = interleaved ? 2 * i + 1 : half + i;
  if (padding_idx >= 0 && pos[t] == padding_idx) {  // fairseq's padding row
    store(row + si, 0.0);
    store(row + ci, 0.0);
    return;
  }
  const angles::SinCos sc = angles::sincos(pos[t], freq[i]);
  store(row + si, sc.s);
  store(row + ci, sc.c);
}

/// One thread per (head, i, j).
template <class T>
__global__ void alibi_kernel(T* out, const std::int64_t* pos, const double* slopes, std::int64_t n, int heads,
                             bool causal) {
  const std::int64_t idx = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= heads * n * n) return;
  const std::int64_t j = idx % n, i = idx / n % n;
  const int h = static_cast<int>(idx / (n * n));
  if (causal && j > i) {
    store(out + idx, -CUDART_INF);
    return;
  }
  const double distance = static_cast<double>(pos[i] - pos[j]);  // exact below 2^53
  store(out + idx, -slopes[h] * (causal ? distance : fabs(distance)));
}

/// T5's bucket of a relative position, as the host backends compute it (log in double).
__device__ int t5_bucket(std::int64_t relative, int half, int max_exact, bool bidirectional, double log_range) {
  const int offset = bidirectional && relative > 0 ? half : 0;
  const std::int64_t dist = bidirectional ? (relative < 0 ? -relative : relative) : (relative < 0 ? -relative : 0);
  if (dist < max_exact) return offset + static_cast<int>(dist);
  const double t = (half - max_exact) * log(static_cast<double>(dist) / max_exact) / log_range;
  return offset + static_cast<int>(fmin(max_exact + floor(t), static_cast<double>(half - 1)));
}

/// One thread per (i, j): the bucket once, then every head.
template <class T>
__global__ void t5_kernel(T* out, const T* table, const std::int64_t* pos, std::int64_t n, int heads, int half,
                          int max_exact, bool bidirectional, double log_range) {
  const std::int64_t idx = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= n * n) return;
  const std::int64_t j = idx % n, i = idx / n;
  const int b = t5_bucket(pos[j] - pos[i], half, max_exact, bidirectional, log_range);
  for (int h = 0; h < heads; ++h) out[(h * n + i) * n + j] = table[b * heads + h];
}

/// One thread per element: the sum of two dtype values is exact in double, then rounded once.
template <class T>
__global__ void learned_kernel(T* x, const T* table, const std::int64_t* pos, std::int64_t n, int d) {
  const std::int64_t idx = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= n * d) return;
  const std::int64_t t = idx / d, c = idx % d;
  store(x + idx, load(x + idx) + load(table + pos[t] * d + c));
}

/// One thread per (i, j), the dot products accumulated in double and rounded once.
template <class T>
__global__ void shaw_kernel(T* out, const T* q, const T* k, const T* r, const std::int64_t* pos, std::int64_t n, int d,
                            int max_distance) {
  const std::int64_t idx = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= n * n) return;
  const std::int64_t j = idx % n, i = idx / n;
  std::int64_t rel = pos[j] - pos[i];
  rel = rel < -max_distance ? -max_distance : rel > max_distance ? max_distance : rel;
  const T* row = r + (rel + max_distance) * d;
  double acc = 0;
  for (int c = 0; c < d; ++c) acc += load(q + i * d + c) * (load(k + j * d + c) + load(row + c));
  store(out + idx, acc);
}

/// Adds a row of the PE table to every one of Q, K and V (identity projections), in float.
__global__ void add_pe_kernel(float* q, float* k, float* v, const float* pe, std::int64_t count) {
  const std::int64_t idx = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= count) return;
  q[idx] += pe[idx];
  k[idx] += pe[idx];
  v[idx] += pe[idx];
}

/// Widens storage to float working copies.
template <class T>
__global__ void widen_kernel(float* out, const T* in, std::int64_t count) {
  const std::int64_t idx = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx < count) out[idx] = static_cast<float>(load(in + idx));
}

/// One thread per (query, head): an online softmax over the keys in double, the accumulator in
/// a per-thread array (correctness first: tiling and tensor cores are later work).
template <class T>
__global__ void attention_kernel(T* out, const float* q, const float* k, const float* v, const float* shaw,
                                 const double* slopes, const std::int64_t* pos, std::int64_t n, int heads, int d,
                                 bool causal, double scale, int pe, int max_distance) {
  const std::int64_t idx = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= n * heads) return;
  const std::int64_t i = idx / heads;
  const int h = static_cast<int>(idx % heads);
  const std::int64_t keys = causal ? i + 1 : n;
  const float* qi = q + idx * d;
  double m = -CUDART_INF, sum = 0;
  double acc[kMaxAttentionHeadDim];
  for (int c = 0; c < d; ++c) acc[c] = 0;
  for (std::int64_t j = 0; j < keys; ++j) {
    const float* kj = k + (j * heads + h) * d;
    double dot = 0;
    for (int c = 0; c < d; ++c) dot += static_cast<double>(qi[c]) * kj[c];
    if (pe == 4) {  // Shaw: q_i . r(p_j - p_i), before scaling
      std::int64_t rel = pos[j] - pos[i];
      rel = rel < -max_distance ? -max_distance : rel > max_distance ? max_distance : rel;
      const float* r = shaw + (rel + max_distance) * d;
      for (int c = 0; c < d; ++c) dot += static_cast<double>(qi[c]) * r[c];
    }
    double l = scale * dot;
    if (pe == 3) {  // ALiBi
      const double dist = static_cast<double>(pos[i] - pos[j]);
      l += -slopes[h] * (causal ? dist : fabs(dist));
    }
    if (l > m) {  // a new maximum rescales what was accumulated
      const double correction = exp(m - l);
      sum *= correction;
      for (int c = 0; c < d; ++c) acc[c] *= correction;
      m = l;
    }
    const double w = exp(l - m);
    sum += w;
    const float* vj = v + (j * heads + h) * d;
    for (int c = 0; c < d; ++c) acc[c] += w * vj[c];
  }
  for (int c = 0; c < d; ++c) store(out + idx * d + c, acc[c] / sum);
}

// ---- host side ----

/// A device buffer of n elements of T followed by kGuard sentinel elements, checked after use.
template <class T>
class DeviceBuffer {
 public:
  static constexpr std::size_t kGuard = 64;
  explicit DeviceBuffer(std::size_t n) : n_(n) {
    PECHECK_CUDA(cudaMalloc(&data_, (n + kGuard) * sizeof(T)));
    PECHECK_CUDA(cudaMemset(data_ + n, kSentinel, kGuard * sizeof(T)));
  }
  ~DeviceBuffer() { cudaFree(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  T* data() { return data_; }
  void upload(const void* host) { PECHECK_CUDA(cudaMemcpy(data_, host, n_ * sizeof(T), cudaMemcpyHostToDevice)); }
  void download(void* host) const { PECHECK_CUDA(cudaMemcpy(host, data_, n_ * sizeof(T), cudaMemcpyDeviceToHost)); }
  /// Fills the data with all-ones bits (a NaN in every format) before a kernel that must write it all.
  void poison() { PECHECK_CUDA(cudaMemset(data_, 0xFF, n_ * sizeof(T))); }
  /// Throws when a kernel wrote into the sentinels after the data.
  void check_guard(const char* name) const {
    std::vector<unsigned char> tail(kGuard * sizeof(T));
    PECHECK_CUDA(cudaMemcpy(tail.data(), data_ + n_, tail.size(), cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < tail.size(); ++i)
      if (tail[i] != kSentinel)
        throw std::runtime_error(std::string("CUDA kernel wrote past the end of ") + name + " (byte " +
                                 std::to_string(i) + " after it)");
  }

 private:
  static constexpr unsigned char kSentinel = 0xA5;
  std::size_t n_;
  T* data_ = nullptr;
};

template <class T>
std::uint32_t bits_of(float v) {
  if constexpr (std::is_same_v<T, float>) {
    std::uint32_t b;
    std::memcpy(&b, &v, 4);
    return b;
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return double_to_bf16(v);
  } else {
    return double_to_f16(v);
  }
}

template <class T>
float value_of(const unsigned char* p) {
  if constexpr (std::is_same_v<T, float>) {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  } else {
    std::uint16_t b;
    std::memcpy(&b, p, 2);
    return static_cast<float>(std::is_same_v<T, __nv_bfloat16> ? bf16_to_double(b) : f16_to_double(b));
  }
}

/// Host floats <-> native storage bytes.
template <class T>
std::vector<unsigned char> pack(const float* v, std::size_t n) {
  std::vector<unsigned char> out(n * sizeof(T));
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t b = bits_of<T>(v[i]);
    std::memcpy(out.data() + i * sizeof(T), &b, sizeof(T));
  }
  return out;
}

template <class T>
void unpack(const std::vector<unsigned char>& bytes, float* out) {
  for (std::size_t i = 0; i < bytes.size() / sizeof(T); ++i) out[i] = value_of<T>(bytes.data() + i * sizeof(T));
}

template <class F>
void with_type(Storage dt, F&& f) {
  switch (dt) {
    case Storage::f32:
      return f(float{});
    case Storage::bf16:
      return f(__nv_bfloat16{});
    case Storage::f16:
      return f(__half{});
  }
}

unsigned blocks(std::int64_t threads, unsigned per_block) {
  return static_cast<unsigned>((threads + per_block - 1) / per_block);
}

void finish_launch(const char* kernel) {
  check(cudaGetLastError(), kernel);
  check(cudaDeviceSynchronize(), kernel);
}

/// Throws when an element of a poisoned output still holds all-ones bits: never written.
template <class T>
void check_written(const std::vector<unsigned char>& back, const char* kernel) {
  for (std::size_t i = 0; i < back.size() / sizeof(T); ++i) {
    bool all_ones = true;
    for (std::size_t k = 0; k < sizeof(T); ++k) all_ones = all_ones && back[i * sizeof(T) + k] == 0xFF;
    if (all_ones)
      throw std::runtime_error(std::string("CUDA ") + kernel + " left out[" + std::to_string(i) + "] unwritten");
  }
}

/// After a kernel that must write all of od: its sentinels, then every element written, then the
/// values into out.
template <class T>
void collect(const DeviceBuffer<T>& od, std::size_t count, const char* kernel, float* out) {
  od.check_guard("out");
  std::vector<unsigned char> back(count * sizeof(T));
  od.download(back.data());
  check_written<T>(back, kernel);  // the poison: all-ones bits, never a value a kernel writes
  unpack<T>(back, out);
}

Device probe_in_child() {
  int fds[2];
  if (::pipe(fds) != 0) return {false, "cannot probe for a CUDA device: pipe failed"};
  const pid_t pid = ::fork();
  if (pid < 0) return {false, "cannot probe for a CUDA device: fork failed"};
  if (pid == 0) {
    ::close(fds[0]);
    std::string answer;
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    cudaDeviceProp prop{};
    if (e == cudaErrorInsufficientDriver) {
      answer = "0no CUDA driver on this machine, or one older than the CUDA runtime (cudaErrorInsufficientDriver)";
    } else if (e == cudaErrorNoDevice) {
      answer = "0no CUDA device (cudaErrorNoDevice)";
    } else if (e != cudaSuccess) {
      answer = std::string("0no usable CUDA device: ") + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
    } else if (n == 0) {
      answer = "0no CUDA device";
    } else if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
      answer = "0cannot read the properties of CUDA device 0";
    } else if (prop.major < 9) {
      answer = std::string("0CUDA device 0 (") + prop.name + ") has compute capability " + std::to_string(prop.major) +
               "." + std::to_string(prop.minor) + "; this build carries sm_90 code and compute_90 PTX";
    } else {
      answer = std::string("1") + prop.name;
    }
    const ssize_t written = ::write(fds[1], answer.data(), answer.size());
    _exit(written == static_cast<ssize_t>(answer.size()) ? 0 : 1);
  }
  ::close(fds[1]);
  std::string answer;
  char buf[512];
  for (ssize_t r; (r = ::read(fds[0], buf, sizeof buf)) > 0;) answer.append(buf, static_cast<std::size_t>(r));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (answer.empty()) return {false, "the CUDA probe died (status " + std::to_string(status) + ")"};
  return {answer[0] == '1', answer.substr(1)};
}

}  // namespace

const Device& availability() {
  static const Device d = probe_in_child();
  return d;
}

void rope_apply(Storage dt, const RopeLaunch& r, const std::int64_t* positions, std::size_t tokens,
                const angles::Frequency* freqs, float* x) {
  if (tokens == 0) return;
  const int pairs = r.rotary_dim / 2;
  const std::size_t n = tokens * static_cast<std::size_t>(r.heads) * static_cast<std::size_t>(r.head_dim);
  const auto t64 = static_cast<std::int64_t>(tokens);
  with_type(dt, [&](auto tag) {
    using T = decltype(tag);
    DeviceBuffer<T> xd(n);
    DeviceBuffer<std::int64_t> pd(tokens);
    DeviceBuffer<angles::Frequency> fd(static_cast<std::size_t>(pairs));
    const auto bytes = pack<T>(x, n);
    xd.upload(bytes.data());
    pd.upload(positions);
    fd.upload(freqs);
    rope_kernel<T><<<blocks(t64 * pairs, 256), 256>>>(xd.data(), pd.data(), fd.data(), t64, r.heads, r.head_dim, pairs,
                                                      r.interleaved, r.magnitude);
    finish_launch("rope_kernel");
    xd.check_guard("x");
    std::vector<unsigned char> back(bytes.size());
    xd.download(back.data());
    unpack<T>(back, x);
  });
}

void sinusoidal_table(Storage dt, int d_model, bool interleaved, std::int64_t padding_idx,
                      const std::int64_t* positions, std::size_t rows, const angles::Frequency* freqs, float* out) {
  if (rows == 0) return;
  const std::size_t n = rows * static_cast<std::size_t>(d_model);
  const auto r64 = static_cast<std::int64_t>(rows);
  with_type(dt, [&](auto tag) {
    using T = decltype(tag);
    DeviceBuffer<T> od(n);
    DeviceBuffer<std::int64_t> pd(rows);
    DeviceBuffer<angles::Frequency> fd(static_cast<std::size_t>(d_model / 2));
    od.poison();
    pd.upload(positions);
    fd.upload(freqs);
    sinusoidal_kernel<T><<<blocks(r64 * (d_model / 2), 256), 256>>>(od.data(), pd.data(), fd.data(), r64, d_model,
                                                                     interleaved, padding_idx);
    finish_launch("sinusoidal_kernel");
    collect(od, n, "sinusoidal_kernel", out);
  });
}

void alibi_bias(Storage dt, int heads, bool causal, const double* slopes, const std::int64_t* positions, std::size_t n,
                float* out) {
  if (n == 0) return;
  const std::size_t count = static_cast<std::size_t>(heads) * n * n;
  with_type(dt, [&](auto tag) {
    using T = decltype(tag);
    DeviceBuffer<T> od(count);
    DeviceBuffer<std::int64_t> pd(n);
    DeviceBuffer<double> sd(static_cast<std::size_t>(heads));
    od.poison();
    pd.upload(positions);
    sd.upload(slopes);
    alibi_kernel<T><<<blocks(static_cast<std::int64_t>(count), 256), 256>>>(od.data(), pd.data(), sd.data(),
                                                                             static_cast<std::int64_t>(n), heads, causal);
    finish_launch("alibi_kernel");
    collect(od, count, "alibi_kernel", out);
  });
}

void t5_bias(Storage dt, const T5Launch& t, const float* table, const std::int64_t* positions, std::size_t n,
             float* out) {
  if (n == 0) return;
  const std::size_t count = static_cast<std::size_t>(t.heads) * n * n;
  const std::size_t table_size = static_cast<std::size_t>(t.num_buckets) * static_cast<std::size_t>(t.heads);
  const int half = t.bidirectional ? t.num_buckets / 2 : t.num_buckets, max_exact = half / 2;
  const double log_range = std::log(static_cast<double>(t.max_distance) / max_exact);
  with_type(dt, [&](auto tag) {
    using T = decltype(tag);
    DeviceBuffer<T> od(count);
    DeviceBuffer<T> td(table_size);
    DeviceBuffer<std::int64_t> pd(n);
    od.poison();
    const auto table_bytes = pack<T>(table, table_size);
    td.upload(table_bytes.data());
    pd.upload(positions);
    t5_kernel<T><<<blocks(static_cast<std::int64_t>(n * n), 256), 256>>>(od.data(), td.data(), pd.data(),
                                                                          static_cast<std::int64_t>(n), t.heads, half,
                                                                          max_exact, t.bidirectional, log_range);
    finish_launch("t5_kernel");
    collect(od, count, "t5_kernel", out);
  });
}

void attention(Storage dt, const AttentionLaunch& a, const std::int64_t* positions, std::size_t n, const float* q,
               const float* k, const float* v, const float* shaw_table, std::size_t shaw_size, const double* slopes,
               const angles::Frequency* freqs, std::size_t freq_count, float* out) {
  if (n == 0) return;
  const std::size_t count = n * static_cast<std::size_t>(a.heads) * static_cast<std::size_t>(a.head_dim);
  const auto c64 = static_cast<std::int64_t>(count), n64 = static_cast<std::int64_t>(n);
  with_type(dt, [&](auto tag) {
    using T = decltype(tag);
    DeviceBuffer<T> od(count), qs(count), ks(count), vs(count);
    DeviceBuffer<float> qf(count), kf(count), vf(count), shaw(std::max<std::size_t>(shaw_size, 1));
    DeviceBuffer<std::int64_t> pd(n);
    DeviceBuffer<double> sd(static_cast<std::size_t>(a.heads));
    DeviceBuffer<angles::Frequency> fd(std::max<std::size_t>(freq_count, 1));
    od.poison();
    // Inputs arrive as dtype values: stored in T, widened to float working copies on the device.
    const auto qb = pack<T>(q, count), kb = pack<T>(k, count), vb = pack<T>(v, count);
    qs.upload(qb.data());
    ks.upload(kb.data());
    vs.upload(vb.data());
    widen_kernel<T><<<blocks(c64, 256), 256>>>(qf.data(), qs.data(), c64);
    widen_kernel<T><<<blocks(c64, 256), 256>>>(kf.data(), ks.data(), c64);
    widen_kernel<T><<<blocks(c64, 256), 256>>>(vf.data(), vs.data(), c64);
    finish_launch("widen_kernel");
    pd.upload(positions);
    if (shaw_size) {
      const auto sb = pack<float>(shaw_table, shaw_size);
      shaw.upload(sb.data());
    }
    if (a.pe == 3) sd.upload(slopes);
    if (freq_count) fd.upload(freqs);
    const int width = a.heads * a.head_dim;
    if (a.pe == 1) {  // the sinusoid of width heads*head_dim, in float, added to Q, K and V
      DeviceBuffer<float> table(count);
      sinusoidal_kernel<float><<<blocks(n64 * (width / 2), 256), 256>>>(table.data(), pd.data(), fd.data(), n64, width,
                                                                        true, -1);
      add_pe_kernel<<<blocks(c64, 256), 256>>>(qf.data(), kf.data(), vf.data(), table.data(), c64);
      finish_launch("add_pe_kernel");
    } else if (a.pe == 2) {  // RoPE on Q and K, in float
      const int pairs = a.head_dim / 2;
      rope_kernel<float><<<blocks(n64 * pairs, 256), 256>>>(qf.data(), pd.data(), fd.data(), n64, a.heads, a.head_dim,
                                                            pairs, a.rope_interleaved, 1.0);
      rope_kernel<float><<<blocks(n64 * pairs, 256), 256>>>(kf.data(), pd.data(), fd.data(), n64, a.heads, a.head_dim,
                                                            pairs, a.rope_interleaved, 1.0);
      finish_launch("rope_kernel");
    }
    attention_kernel<T><<<blocks(n64 * a.heads, 128), 128>>>(od.data(), qf.data(), kf.data(), vf.data(), shaw.data(),
                                                             sd.data(), pd.data(), n64, a.heads, a.head_dim, a.causal,
                                                             a.scale, a.pe, a.shaw_max_distance);
    finish_launch("attention_kernel");
    collect(od, count, "attention_kernel", out);
  });
}

void rope_apply_on_device(Storage dt, const RopeLaunch& r, const std::int64_t* positions, std::size_t tokens,
                          const angles::Frequency* freqs, void* x) {
  const auto t64 = static_cast<std::int64_t>(tokens);
  const int pairs = r.rotary_dim / 2;
  with_type(dt, [&](auto tag) {
    using T = decltype(tag);
    rope_kernel<T><<<blocks(t64 * pairs, 256), 256>>>(static_cast<T*>(x), positions, freqs, t64, r.heads, r.head_dim,
                                                      pairs, r.interleaved, r.magnitude);
  });
  check(cudaGetLastError(), "rope_kernel");
}

void sinusoidal_table_on_device(Storage dt, int d_model, bool interleaved, const std::int64_t* positions,
                                std::size_t rows, const angles::Frequency* freqs, void* out) {
  const auto r64 = static_cast<std::int64_t>(rows);
  with_type(dt, [&](auto tag) {
    using T = decltype(tag);
    sinusoidal_kernel<T><<<blocks(r64 * (d_model / 2), 256), 256>>>(static_cast<T*>(out), positions, freqs, r64,
                                                                     d_model, interleaved, -1);
  });
  check(cudaGetLastError(), "sinusoidal_kernel");
}

void learned_add(Storage dt, int d, int max_len, const float* table, const std::int64_t* positions, std::size_t n,
                 float* x) {
  if (n == 0) return;
  const std::size_t count = n * static_cast<std::size_t>(d), table_size = static_cast<std::size_t>(max_len) * d;
  with_type(dt, [&](auto tag) {
    using T = decltype(tag);
    DeviceBuffer<T> xd(count);
    DeviceBuffer<T> td(table_size);
    DeviceBuffer<std::int64_t> pd(n);
    const auto x_bytes = pack<T>(x, count), table_bytes = pack<T>(table, table_size);
    xd.upload(x_bytes.data());
    td.upload(table_bytes.data());
    pd.upload(positions);
    learned_kernel<T><<<blocks(static_cast<std::int64_t>(count), 256), 256>>>(xd.data(), td.data(), pd.data(),
                                                                                static_cast<std::int64_t>(n), d);
    finish_launch("learned_kernel");
    xd.check_guard("x");
    std::vector<unsigned char> back(x_bytes.size());
    xd.download(back.data());
    unpack<T>(back, x);
  });
}

void shaw_scores(Storage dt, int d, int max_distance, const float* q, const float* k, const float* table,
                 const std::int64_t* positions, std::size_t n, float* out) {
  if (n == 0) return;
  const std::size_t qk = n * static_cast<std::size_t>(d), rows = static_cast<std::size_t>(2 * max_distance + 1) * d;
  with_type(dt, [&](auto tag) {
    using T = decltype(tag);
    DeviceBuffer<T> od(n * n), qd(qk), kd(qk), rd(rows);
    DeviceBuffer<std::int64_t> pd(n);
    od.poison();
    const auto q_bytes = pack<T>(q, qk), k_bytes = pack<T>(k, qk), r_bytes = pack<T>(table, rows);
    qd.upload(q_bytes.data());
    kd.upload(k_bytes.data());
    rd.upload(r_bytes.data());
    pd.upload(positions);
    shaw_kernel<T><<<blocks(static_cast<std::int64_t>(n * n), 256), 256>>>(
        od.data(), qd.data(), kd.data(), rd.data(), pd.data(), static_cast<std::int64_t>(n), d, max_distance);
    finish_launch("shaw_kernel");
    collect(od, n * n, "shaw_kernel", out);
  });
}

}  // namespace pecheck::cuda
