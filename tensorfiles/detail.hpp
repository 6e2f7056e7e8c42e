// Internals shared by the NPY and safetensors readers: error messages, checked sizes, decoding.
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tensorfiles/array.hpp"

namespace pecheck::tensorfiles::detail {

/// Replaces control characters so that a message stays on one line whatever the file held.
std::string one_line(std::string s);

/// Throws FormatError "NAME: MESSAGE" (one line).
template <class... Args>
[[noreturn]] void fail(std::string_view name, fmt::format_string<Args...> f, Args&&... args) {
  throw FormatError(one_line(fmt::format("{}: {}", name, fmt::format(f, std::forward<Args>(args)...))));
}

/// Text taken from a file, quoted for a message: non-printable bytes escaped, long text cut.
std::string quote_text(std::string_view s);

/// Product of the dims, or nothing when it overflows 63 bits. A zero dim makes the product zero
/// whatever the other dims are (numpy accepts such shapes).
std::optional<std::uint64_t> element_count(std::span<const std::int64_t> shape);

/// Most dims a reader accepts; numpy allows 32 (64 since 2.0).
inline constexpr std::size_t kMaxDims = 64;

/// Shape as "(2, 3)" for messages.
std::string shape_text(std::span<const std::int64_t> shape);

/// Decodes data (exactly count * element_size(type) bytes) in file order into out.values or
/// out.ints.
void decode(std::span<const std::byte> data, ElementType type, bool big_endian, Array& out);

/// Little-endian unsigned load; memcpy keeps unaligned reads defined.
template <class T>
T load_le(const std::byte* p) {
  unsigned char b[sizeof(T)];
  std::memcpy(b, p, sizeof(T));
  T v = 0;
  for (std::size_t i = sizeof(T); i-- > 0;) v = static_cast<T>((v << 8) | b[i]);
  return v;
}

/// Whole file, FormatError when unreadable or larger than max_bytes.
std::vector<std::byte> read_file(const std::string& path, std::uint64_t max_bytes);

}  // namespace pecheck::tensorfiles::detail
