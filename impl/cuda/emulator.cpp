// The CUDA backend's kernels on the CPU: every thread body of impl/cuda/kernel_bodies.hpp run in
// turn, over host buffers fenced as the device's are (sentinels after each, outputs poisoned),
// through the same host flow (impl/cuda/host_flow.hpp). Slow, and exact about what the GPU code
// computes except for the libm behind sin, cos, exp and log, so the property catalogue checks the
// kernels' indexing, vector accesses and arithmetic on machines without a GPU.
#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "impl/cuda/host_flow.hpp"
#include "impl/cuda/kernels.hpp"

namespace pecheck::cuda {

namespace {

struct HostTarget {
  /// n elements of T followed by kGuard sentinel elements, checked after use, as on the device.
  template <class T>
  class Buffer {
   public:
    static constexpr std::size_t kGuard = 64;
    explicit Buffer(std::size_t n) : n_(n), chunks_(((n + kGuard) * sizeof(T) + 15) / 16) {
      std::memset(bytes() + n * sizeof(T), kSentinel, kGuard * sizeof(T));
    }
    T* data() { return reinterpret_cast<T*>(bytes()); }
    void upload(const T* host) { std::memcpy(bytes(), host, n_ * sizeof(T)); }
    void download(T* host) const { std::memcpy(host, bytes(), n_ * sizeof(T)); }
    void poison() { std::memset(bytes(), 0xFF, n_ * sizeof(T)); }
    void check_guard(const char* name) const {
      for (std::size_t i = 0; i < kGuard * sizeof(T); ++i)
        if (bytes()[n_ * sizeof(T) + i] != kSentinel)
          throw std::runtime_error(std::string("CUDA kernel wrote past the end of ") + name + " (byte " +
                                   std::to_string(i) + " after it)");
    }

   private:
    static constexpr unsigned char kSentinel = 0xA5;
    /// 16-byte aligned, as cudaMalloc's memory is (256): the packs' alignment is checked.
    struct alignas(16) Chunk {
      unsigned char b[16];
    };
    unsigned char* bytes() { return reinterpret_cast<unsigned char*>(chunks_.data()); }
    const unsigned char* bytes() const { return reinterpret_cast<const unsigned char*>(chunks_.data()); }
    std::size_t n_;
    std::vector<Chunk> chunks_;
  };

  template <class Body>
  void run(const typename Body::Args& args, const char*) const {
    const std::int64_t threads = Body::threads(args);
    for (std::int64_t idx = 0; idx < threads; ++idx) Body::run(idx, args);
  }

  /// Each phase for every thread of the block before the next phase: what the barriers between
  /// them guarantee on the GPU, and no more. Shared memory is NaN before every load phase.
  template <class Body>
  void run_blocks(const typename Body::Args& args, const char*) const {
    std::vector<typename Body::State> state(Body::kThreads);
    std::vector<float> shared(Body::kSharedFloats);
    for (std::int64_t b = 0; b < Body::blocks(args); ++b) {
      for (int tid = 0; tid < Body::kThreads; ++tid) Body::start(b, tid, args, state[tid]);
      for (int tile = 0; tile < Body::tiles(b, args); ++tile) {
        std::fill(shared.begin(), shared.end(), std::numeric_limits<float>::quiet_NaN());
        for (int tid = 0; tid < Body::kThreads; ++tid) Body::load(b, tile, tid, args, shared.data());
        for (int tid = 0; tid < Body::kThreads; ++tid) Body::consume(b, tile, tid, args, shared.data(), state[tid]);
      }
      for (int tid = 0; tid < Body::kThreads; ++tid) Body::finish(b, tid, args, state[tid]);
    }
  }
};

}  // namespace

const Launcher& emulator() {
  static const TargetLauncher<HostTarget> launcher{HostTarget{}};
  return launcher;
}

}  // namespace pecheck::cuda
