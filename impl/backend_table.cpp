#include "impl/backend_table.hpp"

#include "impl/scalar/scalar_encoder.hpp"
#ifdef PECHECK_HAVE_CUDA
#include "impl/cuda/cuda_encoder.hpp"
#include "impl/cuda/kernels.hpp"
#endif
#ifdef PECHECK_HAVE_AVX2
#include "impl/avx2/avx2_encoder.hpp"
#include "impl/avx2/kernels.hpp"
#include "impl/avx512/kernels.hpp"
#endif

namespace pecheck {

namespace {
constexpr const char* kAvx512Description =
    "AVX-512 (F/BW/VL/DQ, BF16 where present) RoPE, sinusoid and attention kernels, 16 lanes; its other "
    "operations are the AVX2 kernels";
}  // namespace

const std::vector<Backend>& backend_table() {
  static const std::vector<Backend> table = {
      {"scalar", "portable C++: fp32 arithmetic, accurate double angles",
       [] {
         return Availability{true, ""};
       },
       [] { return make_scalar_encoder(); }},
#ifdef PECHECK_HAVE_AVX2
      {"avx2", "AVX2+FMA+F16C kernels on native fp32/bf16/fp16 storage, double angles, online softmax",
       [] {
         const avx2::Cpu cpu = avx2::availability();
         return Availability{cpu.ok, cpu.reason};
       },
       [] { return make_avx2_encoder(); }},
      {"avx512", kAvx512Description,
       [] {
         const avx512::Cpu cpu = avx512::availability();
         return Availability{cpu.ok, cpu.reason};
       },
       [] { return make_avx512_encoder(); }},
#else
      {"avx2", "AVX2+FMA+F16C kernels on native fp32/bf16/fp16 storage, double angles, online softmax",
       [] {
         return Availability{false, "not an x86-64 build"};
       },
       [] { return std::unique_ptr<Encoder>(); }},
      {"avx512", kAvx512Description,
       [] {
         return Availability{false, "not an x86-64 build"};
       },
       [] { return std::unique_ptr<Encoder>(); }},
#endif
#ifdef PECHECK_HAVE_CUDA
      {"cuda", "CUDA kernels (sm_90) on native fp32/bf16/fp16 storage, double angles",
       [] {
         const cuda::Device& d = cuda::availability();
         return Availability{d.ok, d.ok ? "" : d.reason};
       },
       [] { return make_cuda_encoder(); }},
#else
      {"cuda", "CUDA kernels (sm_90) on native fp32/bf16/fp16 storage, double angles",
       [] {
         return Availability{false, "built without CUDA (nvcc not found, or -DPECHECK_ENABLE_CUDA=OFF)"};
       },
       [] { return std::unique_ptr<Encoder>(); }},
#endif
  };
  return table;
}

}  // namespace pecheck
