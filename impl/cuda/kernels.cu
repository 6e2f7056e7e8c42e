// The CUDA backend on the GPU: the thread bodies of impl/cuda/kernel_bodies.hpp launched as
// grids, device buffers fenced with sentinels, every CUDA call and launch checked, and the host
// flow of impl/cuda/host_flow.hpp (shared with the CPU emulator) around them.
#include <cuda_runtime.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "impl/cuda/host_flow.hpp"
#include "impl/cuda/kernel_bodies.hpp"
#include "impl/cuda/kernels.hpp"

namespace pecheck::cuda {

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("CUDA ") + what + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) +
                             ")");
}
#define PECHECK_CUDA(call) check((call), #call)

/// One thread per index below `threads`: the body does the rest.
template <class Body>
__global__ void grid_kernel(typename Body::Args args, std::int64_t threads) {
  const std::int64_t idx = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx < threads) Body::run(idx, args);
}

/// One block per index below Body::blocks(args), Body::kThreads threads each: start, then per
/// tile load, barrier, consume, barrier; then finish.
template <class Body>
__global__ void __launch_bounds__(Body::kThreads) block_kernel(typename Body::Args args) {
  __shared__ __align__(16) float shared[Body::kSharedFloats];
  typename Body::State state;
  const std::int64_t b = blockIdx.x;
  const int tid = static_cast<int>(threadIdx.x);
  Body::start(b, tid, args, state);
  const int tiles = Body::tiles(b, args);
  for (int tile = 0; tile < tiles; ++tile) {
    Body::load(b, tile, tid, args, shared);
    __syncthreads();
    Body::consume(b, tile, tid, args, shared, state);
    __syncthreads();
  }
  Body::finish(b, tid, args, state);
}

struct DeviceTarget {
  bool synchronize = true;  ///< false for the benchmarks: the launch is only queued

  /// n elements of T followed by kGuard sentinel elements, checked after use.
  template <class T>
  class Buffer {
   public:
    static constexpr std::size_t kGuard = 64;
    explicit Buffer(std::size_t n) : n_(n) {
      PECHECK_CUDA(cudaMalloc(&data_, (n + kGuard) * sizeof(T)));
      PECHECK_CUDA(cudaMemset(data_ + n, kSentinel, kGuard * sizeof(T)));
    }
    ~Buffer() { cudaFree(data_); }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    T* data() { return data_; }
    void upload(const T* host) { PECHECK_CUDA(cudaMemcpy(data_, host, n_ * sizeof(T), cudaMemcpyHostToDevice)); }
    void download(T* host) const { PECHECK_CUDA(cudaMemcpy(host, data_, n_ * sizeof(T), cudaMemcpyDeviceToHost)); }
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

  template <class Body>
  void run(const typename Body::Args& args, const char* kernel) const {
    // 128, not 256: RoPE's widest body holds 163 registers, so a 256-thread block (41.7K) leaves
    // room for one per SM, a 128-thread one for three (384 threads, more loads in flight).
    constexpr unsigned kThreadsPerBlock = 128;
    const std::int64_t threads = Body::threads(args);
    if (threads == 0) return;
    const auto blocks = static_cast<unsigned>((threads + kThreadsPerBlock - 1) / kThreadsPerBlock);
    grid_kernel<Body><<<blocks, kThreadsPerBlock>>>(args, threads);
    check(cudaGetLastError(), kernel);
    if (synchronize) check(cudaDeviceSynchronize(), kernel);
  }

  template <class Body>
  void run_blocks(const typename Body::Args& args, const char* kernel) const {
    const std::int64_t blocks = Body::blocks(args);
    if (blocks == 0) return;
    if (blocks > 0x7fffffff) throw std::invalid_argument(std::string(kernel) + ": more blocks than a grid holds");
    block_kernel<Body><<<static_cast<unsigned>(blocks), Body::kThreads>>>(args);
    check(cudaGetLastError(), kernel);
    if (synchronize) check(cudaDeviceSynchronize(), kernel);
  }
};

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

const Launcher& device() {
  static const TargetLauncher<DeviceTarget> launcher{DeviceTarget{}};
  return launcher;
}

void rope_apply_on_device(Storage dt, const RopeLaunch& r, const std::int64_t* positions, std::size_t tokens,
                          const angles::Frequency* freqs, void* x) {
  with_storage(dt, [&](auto tag) {
    using T = decltype(tag);
    launch_rope<DeviceTarget, T>(DeviceTarget{false},
                                 {static_cast<T*>(x), positions, freqs, static_cast<std::int64_t>(tokens), r.heads,
                                  r.head_dim, 0, r.rotary_dim / 2, r.interleaved, r.magnitude});
  });
}

void sinusoidal_table_on_device(Storage dt, int d_model, bool interleaved, bool consecutive_positions,
                                const std::int64_t* positions, std::size_t rows, const angles::Frequency* freqs,
                                void* out) {
  with_storage(dt, [&](auto tag) {
    using T = decltype(tag);
    launch_sinusoid<DeviceTarget, T>(DeviceTarget{false},
                                     {static_cast<T*>(out), positions, freqs, static_cast<std::int64_t>(rows), d_model,
                                      0, d_model / 2, interleaved, -1},
                                     consecutive_positions);
  });
}

void attention_on_device(Storage dt, const AttentionLaunch& a, const std::int64_t* positions, std::size_t n,
                         const void* q, const void* k, const void* v, float* scratch, const angles::Frequency* freqs,
                         const double* slopes, void* out) {
  if (a.pe == 1 || a.pe == 4) throw std::invalid_argument("attention_on_device takes no PE, RoPE or ALiBi");
  const DeviceTarget target{false};
  const auto n64 = static_cast<std::int64_t>(n), nq = static_cast<std::int64_t>(a.query_count(n));
  const std::int64_t count = nq * a.heads * a.head_dim, kv_count = n64 * a.kv_count() * a.head_dim;
  float *qf = scratch, *kf = scratch + count, *vf = scratch + count + kv_count;
  with_storage(dt, [&](auto tag) {
    using T = decltype(tag);
    target.run<WidenBody<T>>({qf, static_cast<const T*>(q), count}, "widen_kernel");
    target.run<WidenBody<T>>({kf, static_cast<const T*>(k), kv_count}, "widen_kernel");
    target.run<WidenBody<T>>({vf, static_cast<const T*>(v), kv_count}, "widen_kernel");
    if (a.pe == 2) launch_attention_rope(target, a, positions, freqs, n64, nq, qf, kf);
    launch_attention<DeviceTarget, T>(
        target, {static_cast<T*>(out), qf, kf, vf, nullptr, slopes, positions, n64, a.heads, a.head_dim, a.causal,
                 a.scale, a.pe, 0, a.kv_heads, a.window, nq});
  });
}

}  // namespace pecheck::cuda
