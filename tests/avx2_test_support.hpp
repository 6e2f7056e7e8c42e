// Shared by the AVX2 and AVX-512 kernel tests: buffers inside sentinel guards, deterministic data,
// an element-wise comparison in units of the dtype's u; the kernel sets, and typed fixtures that
// skip (with the reason) where the CPU cannot run a set.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "impl/avx2/detail.hpp"
#include "impl/avx2/kernels.hpp"
#include "impl/avx2/storage.hpp"
#include "impl/avx512/kernels.hpp"
#include "spec/dtype.hpp"

namespace pecheck::avx2_test {

template <class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, float>) return DType::f32;
  if constexpr (std::is_same_v<T, avx2::bf16>) return DType::bf16;
  if constexpr (std::is_same_v<T, avx2::f16>) return DType::f16;
}
using avx2::storage_of;

constexpr std::size_t kGuard = 24;    // elements of sentinel on each side
constexpr std::size_t kMaxSize = 17;  // 2 x (8 floats per vector) + 1, for the AVX2 kernels

/// A buffer of `size` elements at `offset` elements past a 32-byte boundary, everything around it
/// (and every element the test does not mark as written) filled with a sentinel bit pattern.
template <class T>
class Guarded {
 public:
  Guarded(std::size_t size, std::size_t offset) : size_(size), offset_(offset), raw_(size + 2 * kGuard + 8) {
    std::memset(raw_.data(), 0xA5, raw_.size() * sizeof(T));
  }
  T* data() { return raw_.data() + kGuard + offset_; }
  /// Sets data()[0..n) from floats (values of the dtype).
  void fill(const std::vector<float>& x) { avx2::detail::from_float(storage_of<T>(), x.data(), x.size(), data()); }
  std::vector<float> read(std::size_t n) {
    std::vector<float> out(n);
    avx2::detail::to_float(storage_of<T>(), data(), n, out.data());
    return out;
  }
  /// Whether every element outside data()[i], i with written(i), still holds the sentinel.
  template <class Written>
  bool untouched(Written written) const {
    const auto* bytes = reinterpret_cast<const unsigned char*>(raw_.data());
    for (std::size_t e = 0; e < raw_.size(); ++e) {
      const std::ptrdiff_t i = static_cast<std::ptrdiff_t>(e) - static_cast<std::ptrdiff_t>(kGuard + offset_);
      if (i >= 0 && i < static_cast<std::ptrdiff_t>(size_) && written(static_cast<std::size_t>(i))) continue;
      for (std::size_t b = 0; b < sizeof(T); ++b)
        if (bytes[e * sizeof(T) + b] != 0xA5) return false;
    }
    return true;
  }

 private:
  std::size_t size_, offset_;
  std::vector<T> raw_;
};

/// Deterministic values of the dtype in [-2, 2].
inline std::vector<float> values(std::size_t n, DType dt, unsigned salt) {
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i)
    x[i] = round_to(dt, 2.0 * std::sin(0.7 * static_cast<double>(i + 1) * (salt + 1) + salt));
  return x;
}

/// |got - want| <= units u max(|want|, floor) per element (floor: the scale of absolute errors).
inline void expect_close(const std::vector<float>& got, const std::vector<float>& want, DType dt, double units,
                         double floor, const std::string& where) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isinf(want[i]) && got[i] == want[i]) continue;
    const double tol = units * unit_roundoff(dt) * std::max<double>(std::fabs(want[i]), floor);
    ASSERT_LE(std::fabs(double{got[i]} - want[i]), tol)
        << where << " element " << i << ": " << got[i] << " vs " << want[i];
  }
}

/// Typed fixture base: skips (with the reason) where the CPU cannot run the kernels.
template <class T>
class Avx2Fixture : public ::testing::Test {
 protected:
  void SetUp() override {
    const avx2::Cpu cpu = avx2::availability();
    if (!cpu.ok) GTEST_SKIP() << "avx2 unavailable: " << cpu.reason;
  }
  static constexpr DType dt = dtype_of<T>();
};
using StorageTypes = ::testing::Types<float, avx2::bf16, avx2::f16>;

/// The two kernel sets of the RoPE, sinusoid and attention calls: AVX2's, and AVX-512's (impl/avx512/).
/// `max_size`: two vectors and one element, the sizes a guard test walks through.
struct Avx2Set {
  static constexpr const char* name = "avx2";
  static constexpr std::size_t max_size = kMaxSize;
  static avx2::Cpu availability() { return avx2::availability(); }
  template <class T>
  static void sinusoidal_table(const SinusoidalSpec& s, std::span<const std::int64_t> p, avx2::Rows<T> out) {
    avx2::sinusoidal_table<T>(s, p, out);
  }
  template <class T>
  static void sinusoidal_add(const SinusoidalSpec& s, std::span<const std::int64_t> p, avx2::Rows<T> x) {
    avx2::sinusoidal_add<T>(s, p, x);
  }
  template <class T>
  static void rope_apply(const RopeSpec& s, std::span<const std::int64_t> p, std::span<const avx2::Heads<T>> x) {
    avx2::rope_apply<T>(s, p, x);
  }
  template <class T>
  static void attention(const AttentionSpec& s, std::span<const std::int64_t> p, const T* q, const T* k, const T* v,
                        const T* table, T* out) {
    avx2::attention<T>(s, p, q, k, v, table, out);
  }
};
struct Avx512Set {
  static constexpr const char* name = "avx512";
  static constexpr std::size_t max_size = 2 * 16 + 1;
  static avx2::Cpu availability() { return avx512::availability(); }
  template <class T>
  static void sinusoidal_table(const SinusoidalSpec& s, std::span<const std::int64_t> p, avx2::Rows<T> out) {
    avx512::sinusoidal_table<T>(s, p, out);
  }
  template <class T>
  static void sinusoidal_add(const SinusoidalSpec& s, std::span<const std::int64_t> p, avx2::Rows<T> x) {
    avx512::sinusoidal_add<T>(s, p, x);
  }
  template <class T>
  static void rope_apply(const RopeSpec& s, std::span<const std::int64_t> p, std::span<const avx2::Heads<T>> x) {
    avx512::rope_apply<T>(s, p, x);
  }
  template <class T>
  static void attention(const AttentionSpec& s, std::span<const std::int64_t> p, const T* q, const T* k, const T* v,
                        const T* table, T* out) {
    avx512::attention<T>(s, p, q, k, v, table, out);
  }
};

/// Typed fixture over (kernel set, storage type) pairs.
template <class Set_, class T>
struct On {
  using Set = Set_;
  using Type = T;
};
template <class P>
class SetFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    const avx2::Cpu cpu = P::Set::availability();
    if (!cpu.ok) GTEST_SKIP() << P::Set::name << " unavailable: " << cpu.reason;
  }
  static constexpr DType dt = dtype_of<typename P::Type>();
};
using SetsAndStorage = ::testing::Types<On<Avx2Set, float>, On<Avx2Set, avx2::bf16>, On<Avx2Set, avx2::f16>,
                                        On<Avx512Set, float>, On<Avx512Set, avx2::bf16>, On<Avx512Set, avx2::f16>>;
using KernelSets = ::testing::Types<Avx2Set, Avx512Set>;

/// Names typed tests by their set and type, e.g. "avx512_bf16".
struct SetNames {
  template <class P>
  static std::string GetName(int) {
    if constexpr (requires { typename P::Set; })
      return std::string(P::Set::name) + "_" + std::string(dtype_name(dtype_of<typename P::Type>()));
    else
      return P::name;
  }
};

}  // namespace pecheck::avx2_test
