// The storage the CUDA kernels read and write, for both compilers that see the kernels: nvcc,
// where they run on the GPU, and the host compiler, where the emulator (impl/cuda/emulator.cpp)
// runs the same code thread by thread. bf16 and fp16 are carried as their bits; loads widen to
// double exactly and stores round once from double to nearest-even (the device's conversion
// intrinsics there, spec/half_bits.hpp's bit-field encoder here: the same function).
// C++17: nvcc compiles this.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#ifdef __CUDACC__
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

#include "impl/angles.hpp"  // PECHECK_HOST_DEVICE
#include "spec/half_bits.hpp"

// The device pass unrolls; the host compiler (nvcc's host pass included) knows no such pragma.
#ifdef __CUDA_ARCH__
#define PECHECK_UNROLL _Pragma("unroll")
#else
#define PECHECK_UNROLL
#endif

namespace pecheck::cuda {

struct Bf16 {
  std::uint16_t bits;
};
struct F16 {
  std::uint16_t bits;
};

PECHECK_HOST_DEVICE inline double widen(float v) { return v; }
PECHECK_HOST_DEVICE inline double widen(Bf16 v) {
#ifdef __CUDA_ARCH__
  return __bfloat162float(__ushort_as_bfloat16(v.bits));
#else
  return bf16_to_double(v.bits);
#endif
}
PECHECK_HOST_DEVICE inline double widen(F16 v) {
#ifdef __CUDA_ARCH__
  return __half2float(__ushort_as_half(v.bits));
#else
  return f16_to_double(v.bits);
#endif
}

/// Rounds once from double to T, to nearest even.
template <class T>
struct Narrow;
template <>
struct Narrow<float> {
  PECHECK_HOST_DEVICE static float from(double v) { return static_cast<float>(v); }
};
template <>
struct Narrow<Bf16> {
  PECHECK_HOST_DEVICE static Bf16 from(double v) {
#ifdef __CUDA_ARCH__
    return {__bfloat16_as_ushort(__double2bfloat16(v))};
#else
    return {double_to_bf16(v)};
#endif
  }
};
template <>
struct Narrow<F16> {
  PECHECK_HOST_DEVICE static F16 from(double v) {
#ifdef __CUDA_ARCH__
    return {__half_as_ushort(__double2half(v))};
#else
    return {double_to_f16(v)};
#endif
  }
};

template <class T>
PECHECK_HOST_DEVICE inline double load(const T* p) {
  return widen(*p);
}
template <class T>
PECHECK_HOST_DEVICE inline void store(T* p, double v) {
  *p = Narrow<T>::from(v);
}

/// N consecutive elements moved as one aligned access (up to 16 bytes: one vector load or store
/// per thread on the GPU). The caller guarantees the alignment: see the launch rules.
template <class T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

#ifndef __CUDA_ARCH__
/// The emulator's stand-in for the GPU's fault on a misaligned vector access.
inline void check_alignment(const void* p, std::size_t bytes) {
  if (reinterpret_cast<std::uintptr_t>(p) % bytes != 0)
    throw std::logic_error("misaligned " + std::to_string(bytes) + "-byte access in a CUDA kernel");
}
#endif

template <class T, int N>
PECHECK_HOST_DEVICE inline Pack<T, N> load_pack(const T* p) {
#ifdef __CUDA_ARCH__
  return *reinterpret_cast<const Pack<T, N>*>(p);
#else
  check_alignment(p, sizeof(Pack<T, N>));
  Pack<T, N> r;
  std::memcpy(&r, p, sizeof r);
  return r;
#endif
}

template <class T, int N>
PECHECK_HOST_DEVICE inline void store_pack(T* p, const Pack<T, N>& v) {
#ifdef __CUDA_ARCH__
  *reinterpret_cast<Pack<T, N>*>(p) = v;
#else
  check_alignment(p, sizeof v);
  std::memcpy(p, &v, sizeof v);
#endif
}

}  // namespace pecheck::cuda
