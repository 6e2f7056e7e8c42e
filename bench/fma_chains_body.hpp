// The FMA peak's loop for any vector width: fma_kernel.cpp (256-bit) and fma_kernel512.cpp
// (512-bit) each instantiate it under their own -m flags. It lives in an anonymous namespace, so
// each unit's copy has internal linkage: the linker cannot keep one unit's copy for the other (the
// reason fma_kernel.hpp itself holds no inline function or template).
#pragma once

#include "bench/fma_kernel.hpp"

namespace pecheck::bench {
namespace {

/// V gives the vector type R and set1(float), fmadd(a, b, c), add(a, b), first(v) over it.
template <class V>
float run_fma_chains(long long rounds) {
  using R = typename V::R;
  // c <- c a + b converges to b / (1 - a) = 1: no overflow, no subnormals, however long it runs.
  const R a = V::set1(0.5f), b = V::set1(0.5f);
  R c0 = V::set1(0.0f), c1 = V::set1(0.1f), c2 = V::set1(0.2f), c3 = V::set1(0.3f), c4 = V::set1(0.4f),
    c5 = V::set1(0.5f), c6 = V::set1(0.6f), c7 = V::set1(0.7f), c8 = V::set1(0.8f), c9 = V::set1(0.9f),
    c10 = V::set1(1.1f), c11 = V::set1(1.2f);
  static_assert(kFmaChains == 12, "one accumulator per chain below");
  for (long long r = 0; r < rounds; ++r) {
    c0 = V::fmadd(c0, a, b);
    c1 = V::fmadd(c1, a, b);
    c2 = V::fmadd(c2, a, b);
    c3 = V::fmadd(c3, a, b);
    c4 = V::fmadd(c4, a, b);
    c5 = V::fmadd(c5, a, b);
    c6 = V::fmadd(c6, a, b);
    c7 = V::fmadd(c7, a, b);
    c8 = V::fmadd(c8, a, b);
    c9 = V::fmadd(c9, a, b);
    c10 = V::fmadd(c10, a, b);
    c11 = V::fmadd(c11, a, b);
  }
  const R s = V::add(V::add(V::add(V::add(c0, c1), V::add(c2, c3)), V::add(V::add(c4, c5), V::add(c6, c7))),
                     V::add(V::add(c8, c9), V::add(c10, c11)));
  return V::first(s);
}

}  // namespace
}  // namespace pecheck::bench
