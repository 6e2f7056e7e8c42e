// The AVX-512 API (impl/avx512/kernels.hpp), built without -mavx512f: CPU detection, then the AVX2
// API's checked calls (impl/avx2/checked_calls.hpp) with the AVX-512 vector units behind them.
#include <cpuid.h>

#include <cstdlib>
#include <string_view>

#include "impl/avx2/checked_calls.hpp"
#include "impl/avx512/detail.hpp"
#include "impl/avx512/kernels.hpp"

namespace pecheck::avx512 {

namespace {

bool cpu_has_bf16_instructions() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a >> 5 & 1u);  // leaf 7 subleaf 1, EAX bit 5
}

void rope_units(detail::Storage s, const detail::RopeCall& c) { detail::rope(s, c, has_bf16_instructions()); }
void sinusoid_units(detail::Storage s, const detail::SinusoidalCall& c) {
  detail::sinusoidal_rows(s, c, has_bf16_instructions());
}

void attention_units(detail::Storage s, const detail::AttentionCall& c) {
  detail::attention(s, c, has_bf16_instructions());
}

const avx2::detail::VectorUnits& units() {
  static const avx2::detail::VectorUnits u{&rope_units, &sinusoid_units, &attention_units};
  return u;
}

}  // namespace

Cpu availability() {
  if (const char* off = std::getenv("PECHECK_DISABLE_AVX512"); off && *off && std::string_view(off) != "0")
    return {false, "disabled by PECHECK_DISABLE_AVX512"};
  if (const Cpu base = avx2::availability(); !base.ok) return {false, "needs the AVX2 kernels' ISA: " + base.reason};
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return {false, "CPUID leaf 7 unavailable"};
  const bool f = b >> 16 & 1u, dq = b >> 17 & 1u, bw = b >> 30 & 1u, vl = b >> 31 & 1u;
  if (!f) return {false, "CPU lacks AVX-512F"};
  if (!bw || !vl || !dq) return {false, "CPU lacks AVX-512 BW, VL or DQ"};
  unsigned xcr0_lo = 0, xcr0_hi = 0;
  __asm__("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  if ((xcr0_lo & 0xe6) != 0xe6) return {false, "OS does not save the opmask and ZMM registers (XCR0)"};
  return {true, ""};
}

bool has_bf16_instructions() {
  static const bool has = cpu_has_bf16_instructions();
  return has;
}

template <class T>
void sinusoidal_table(const SinusoidalSpec& s, std::span<const std::int64_t> positions, Rows<T> out) {
  avx2::detail::checked_sinusoidal(units(), s, positions, out, false);
}

template <class T>
void sinusoidal_add(const SinusoidalSpec& s, std::span<const std::int64_t> positions, Rows<T> x) {
  avx2::detail::checked_sinusoidal(units(), s, positions, x, true);
}

template <class T>
void rope_apply(const RopeSpec& s, std::span<const std::int64_t> positions, std::span<const Heads<T>> tensors) {
  avx2::detail::checked_rope(units(), s, positions, tensors);
}

template <class T>
void attention(const AttentionSpec& s, std::span<const std::int64_t> positions, const T* q, const T* k, const T* v,
               const T* pe_table, T* out) {
  avx2::detail::checked_attention(units(), s, positions, q, k, v, pe_table, out);
}

#define PECHECK_AVX512_INSTANTIATE(T)                                                                           \
  template void sinusoidal_table<T>(const SinusoidalSpec&, std::span<const std::int64_t>, Rows<T>);             \
  template void sinusoidal_add<T>(const SinusoidalSpec&, std::span<const std::int64_t>, Rows<T>);               \
  template void rope_apply<T>(const RopeSpec&, std::span<const std::int64_t>, std::span<const Heads<T>>);       \
  template void attention<T>(const AttentionSpec&, std::span<const std::int64_t>, const T*, const T*, const T*, \
                             const T*, T*);

PECHECK_AVX512_INSTANTIATE(float)
PECHECK_AVX512_INSTANTIATE(bf16)
PECHECK_AVX512_INSTANTIATE(f16)

}  // namespace pecheck::avx512
