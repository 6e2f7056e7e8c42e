// The read-modify-write floors at the kernels' own vector widths (rmw_kernel.cpp, built with
// -mavx2; rmw_kernel512.cpp, built with -mavx512f). One core's bandwidth on an in-place pass need
// not be the same at every width: on an Intel Xeon (family 6, model 207) one array after the
// other, without prefetch, a 16-byte loop moved 19 GB/s, a 32-byte one 23 and a 64-byte one 28.
// So the passes run at every width, and bench/ratio_table.py holds a kernel against the fastest.
// Nothing here may be inline or a template: see fma_kernel.hpp.
#pragma once

namespace pecheck::bench {

/// x[i] *= c for i < n, 256-bit, with next[i] asked into L2 as it goes (next may be null). Call
/// only after avx2::availability() said yes.
void scale_in_place_avx2(float* x, long long n, float c, const float* next);
/// The same, 512-bit. Call only after avx512::availability() said yes.
void scale_in_place_avx512(float* x, long long n, float c, const float* next);

/// x[i] ^= 0x8000 (a bf16 sign) for i < n, 256-bit, next prefetched; avx2::availability() first.
void flip_bf16_signs_avx2(unsigned short* x, long long n, const unsigned short* next);
/// The same, 512-bit; avx512::availability() first.
void flip_bf16_signs_avx512(unsigned short* x, long long n, const unsigned short* next);

}  // namespace pecheck::bench
