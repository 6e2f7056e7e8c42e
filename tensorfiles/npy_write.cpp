#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "spec/half_bits.hpp"
#include "tensorfiles/detail.hpp"
#include "tensorfiles/npy.hpp"

namespace pecheck::tensorfiles {

namespace {

std::string_view descr_of(ElementType t) {
  switch (t) {
    case ElementType::f16:
      return "<f2";
    case ElementType::bf16:  // numpy has no bf16: raw bits, read back with StorageHint::bf16
    case ElementType::u16:
      return "<u2";
    case ElementType::f32:
      return "<f4";
    case ElementType::f64:
      return "<f8";
    case ElementType::i32:
      return "<i4";
    case ElementType::i64:
      return "<i8";
  }
  return "?";
}

template <class U>
void append_le(std::string& out, U v) {
  for (std::size_t i = 0; i < sizeof(U); ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

void append_int(std::string& out, ElementType t, std::int64_t v) {
  switch (t) {
    case ElementType::i32:
      if (v < INT32_MIN || v > INT32_MAX) throw std::invalid_argument(fmt::format("{} does not fit in i32", v));
      append_le(out, static_cast<std::uint32_t>(v));
      return;
    case ElementType::u16:
      if (v < 0 || v > UINT16_MAX) throw std::invalid_argument(fmt::format("{} does not fit in u16", v));
      append_le(out, static_cast<std::uint16_t>(v));
      return;
    default:
      append_le(out, static_cast<std::uint64_t>(v));
  }
}

void append_float(std::string& out, ElementType t, double v) {
  switch (t) {
    case ElementType::f16:
      append_le(out, double_to_f16(v));
      return;
    case ElementType::bf16:
      append_le(out, double_to_bf16(v));
      return;
    case ElementType::f32:  // not static_cast<float>: out of float's range that is undefined behaviour
      append_le(out, pecheck::detail::encode_binary(v, 8, 23));
      return;
    default:
      append_le(out, std::bit_cast<std::uint64_t>(v));
  }
}

}  // namespace

std::string npy_bytes(const Array& a) {
  for (std::int64_t d : a.shape)
    if (d < 0) throw std::invalid_argument(fmt::format("{}: negative dimension {}", a.name, d));
  const std::optional<std::uint64_t> count = detail::element_count(a.shape);
  const bool floating = is_floating(a.type);
  const std::size_t have = floating ? a.values.size() : a.ints.size();
  if (!count || *count != have)
    throw std::invalid_argument(fmt::format("{}: shape {} does not match the {} {} given", a.name,
                                            detail::shape_text(a.shape), have, floating ? "values" : "ints"));
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr_of(a.type),
                                   detail::shape_text(a.shape));
  // Pad with spaces so that magic (6) + version (2) + length (2) + header, ending in '\n', is a
  // multiple of 64: numpy does so that the data can be memory-mapped aligned.
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  if (header.size() > UINT16_MAX) throw std::invalid_argument(fmt::format("{}: too many dims for NPY 1.0", a.name));

  std::string out("\x93NUMPY\x01\x00", 8);
  append_le(out, static_cast<std::uint16_t>(header.size()));
  out += header;
  out.reserve(out.size() + have * element_size(a.type));
  try {
    if (floating)
      for (double v : a.values) append_float(out, a.type, v);
    else
      for (std::int64_t v : a.ints) append_int(out, a.type, v);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("{}: {}", a.name, e.what()));
  }
  return out;
}

void write_npy(const std::string& path, const Array& a) {
  const std::string bytes = npy_bytes(a);
  const std::string tmp = path + ".tmp";
  auto fail = [&](const char* what) {
    const int err = errno;
    std::remove(tmp.c_str());
    throw std::runtime_error(detail::one_line(fmt::format("{}: cannot {}: {}", path, what, std::strerror(err))));
  };
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) fail("create");
  const bool written = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  if (std::fclose(f) != 0 || !written) fail("write");
  if (std::rename(tmp.c_str(), path.c_str()) != 0) fail("rename into place");
}

}  // namespace pecheck::tensorfiles
