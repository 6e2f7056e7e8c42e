// libFuzzer target: read_safetensors on any bytes either decodes or throws FormatError with one
// line; what decodes comes back sorted by name, each tensor's buffer the size its shape says.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "tensorfiles/safetensors.hpp"

namespace {

volatile double sink;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  try {
    const std::vector<pecheck::tensorfiles::Array> tensors =
        pecheck::tensorfiles::read_safetensors(bytes, "fuzz.safetensors");
    double s = 0;
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      const pecheck::tensorfiles::Array& a = tensors[i];
      check(i == 0 || tensors[i - 1].name < a.name);
      check(a.values.size() + a.ints.size() == a.size());
      for (double v : a.values) s += v;
      for (std::int64_t v : a.ints) s += static_cast<double>(v);
    }
    sink = s;
  } catch (const pecheck::tensorfiles::FormatError& e) {
    check(std::strchr(e.what(), '\n') == nullptr);
  }
  return 0;
}
