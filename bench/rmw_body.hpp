// The read-modify-write floors' loops for any vector width: rmw_kernel.cpp (256-bit) and
// rmw_kernel512.cpp (512-bit) each instantiate them under their own -m flags, with internal
// linkage (the reason given in fma_chains_body.hpp).
#pragma once

#include "bench/rmw_kernel.hpp"

namespace pecheck::bench {
namespace {

/// V gives kFloats and kShorts (lanes), the float vector F with load/store/set1/mul, the integer
/// vector I with iload/istore/flip (x ^ 0x8000 in every 16-bit lane), and prefetch(p) into L2.
/// Each pass also asks `next`'s same element into L2 as it goes (null: none), as the fp32 kernels
/// ask for the next token's head while they rotate this one's.
template <class V>
void run_scale(float* x, long long n, float c, const float* next) {
  const typename V::F s = V::set1(c);
  long long i = 0;
  for (; i + V::kFloats <= n; i += V::kFloats) {
    if (next) V::prefetch(next + i);
    V::store(x + i, V::mul(V::load(x + i), s));
  }
  for (; i < n; ++i) x[i] *= c;
}

template <class V>
void run_flip(unsigned short* x, long long n, const unsigned short* next) {
  long long i = 0;
  for (; i + V::kShorts <= n; i += V::kShorts) {
    if (next) V::prefetch(next + i);
    V::istore(x + i, V::flip(V::iload(x + i)));
  }
  for (; i < n; ++i) x[i] = static_cast<unsigned short>(x[i] ^ 0x8000u);
}

}  // namespace
}  // namespace pecheck::bench
