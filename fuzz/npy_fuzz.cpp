// libFuzzer target: read_npy on any bytes either decodes or throws FormatError with one line.
// What decodes must survive a round trip through the writer bit for bit (NaN payloads aside).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "tensorfiles/npy.hpp"

namespace {

using pecheck::tensorfiles::Array;
using pecheck::tensorfiles::ElementType;
using pecheck::tensorfiles::StorageHint;

volatile double sink;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

/// Reads every element, so that ASan sees a short or stale buffer, and checks the size invariant.
void touch(const Array& a) {
  check(a.values.size() + a.ints.size() == a.size());
  double s = 0;
  for (double v : a.values) s += v;
  for (std::int64_t v : a.ints) s += static_cast<double>(v);
  sink = s;
}

void round_trip(const Array& a) {
  const std::string bytes = pecheck::tensorfiles::npy_bytes(a);
  const Array b = pecheck::tensorfiles::read_npy({reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()}, "rt",
                                                 a.type == ElementType::bf16 ? StorageHint::bf16 : StorageHint::none);
  check(b.type == a.type && b.shape == a.shape && b.ints == a.ints && b.values.size() == a.values.size());
  for (std::size_t i = 0; i < a.values.size(); ++i)
    check(std::isnan(a.values[i]) ? std::isnan(b.values[i])
                                  : std::memcmp(&a.values[i], &b.values[i], sizeof(double)) == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  for (StorageHint hint : {StorageHint::none, StorageHint::bf16}) {
    try {
      const Array a = pecheck::tensorfiles::read_npy(bytes, "fuzz.npy", hint);
      touch(a);
      round_trip(a);
    } catch (const pecheck::tensorfiles::FormatError& e) {
      check(std::strchr(e.what(), '\n') == nullptr);
    }
  }
  return 0;
}
