#include "tensorfiles/npy.hpp"

#include <cstring>

#include "tensorfiles/detail.hpp"
#include "tensorfiles/npy_header.hpp"

namespace pecheck::tensorfiles {

namespace {

using detail::fail;
using detail::quote_text;

struct Storage {
  ElementType type;
  bool big_endian;
};

/// Maps a descr to how its bytes are stored. '|' (no byte order) only makes sense for void data;
/// '=' is the writer's native order, taken as little-endian like every machine that dumps these.
Storage storage_of(const std::string& descr, StorageHint hint, std::string_view name) {
  std::string_view code = descr;
  char order = '=';
  if (!code.empty() && std::strchr("<>=|", code[0]) != nullptr) {
    order = code[0];
    code.remove_prefix(1);
  }
  const bool big = order == '>';
  const bool bf16 = hint == StorageHint::bf16;
  if (code == "V2") {
    if (!bf16) fail(name, "descr {} is raw 2-byte data: the manifest must say bf16 to decode it", quote_text(descr));
    return {ElementType::bf16, big};
  }
  struct Known {
    std::string_view code;
    ElementType type;
  };
  static constexpr Known kKnown[] = {{"f2", ElementType::f16}, {"f4", ElementType::f32}, {"f8", ElementType::f64},
                                     {"i4", ElementType::i32}, {"i8", ElementType::i64}, {"u2", ElementType::u16}};
  for (const Known& k : kKnown) {
    if (k.code != code) continue;
    if (order == '|')
      fail(name, "descr {} has no byte order ('|'); a 2-byte or wider type needs '<' or '>'", quote_text(descr));
    if (k.type == ElementType::u16 && bf16) return {ElementType::bf16, big};
    return {k.type, big};
  }
  fail(name, "unsupported descr {} (supported: f2 f4 f8 i4 i8 u2 with '<' or '>', and V2 holding bf16)",
       quote_text(descr));
}

/// Reorders Fortran-order (first axis fastest) elements into C order.
template <class T>
std::vector<T> fortran_to_c(const std::vector<T>& f, const std::vector<std::int64_t>& shape) {
  std::vector<T> c(f.size());
  if (f.empty()) return c;
  const std::size_t nd = shape.size();
  std::vector<std::size_t> stride(nd), index(nd, 0), extent(nd);
  std::size_t s = 1;
  for (std::size_t k = nd; k-- > 0;) {
    extent[k] = static_cast<std::size_t>(shape[k]);
    stride[k] = s;
    s *= extent[k];
  }
  std::size_t ci = 0;
  for (const T& v : f) {
    c[ci] = v;
    for (std::size_t k = 0; k < nd; ++k) {  // odometer, first axis fastest
      if (++index[k] < extent[k]) {
        ci += stride[k];
        break;
      }
      ci -= (extent[k] - 1) * stride[k];
      index[k] = 0;
    }
  }
  return c;
}

}  // namespace

Array read_npy(std::span<const std::byte> bytes, std::string_view name, StorageHint hint) {
  static constexpr char kMagic[] = "\x93NUMPY";
  if (bytes.size() < 6 || std::memcmp(bytes.data(), kMagic, 6) != 0)
    fail(name, "not an NPY file: it does not start with \\x93NUMPY");
  if (bytes.size() < 8) fail(name, "truncated: the file ends before the format version");
  const auto major = static_cast<unsigned>(bytes[6]), minor = static_cast<unsigned>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    fail(name, "unsupported NPY format version {}.{} (supported: 1.0, 2.0, 3.0)", major, minor);
  // Version 1.0 has a 2-byte header length; 2.0 and 3.0 a 4-byte one.
  const std::size_t prefix = major == 1 ? 10 : 12;
  if (bytes.size() < prefix) fail(name, "truncated: the file ends before the header length");
  const std::uint64_t header_len =
      major == 1 ? detail::load_le<std::uint16_t>(&bytes[8]) : detail::load_le<std::uint32_t>(&bytes[8]);
  if (header_len > bytes.size() - prefix)
    fail(name, "header length {} runs past the end of the file ({} bytes)", header_len, bytes.size());
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()) + prefix, header_len);
  const detail::NpyHeader h = detail::parse_npy_header(text, name, major == 1);
  const Storage st = storage_of(h.descr, hint, name);

  const std::optional<std::uint64_t> count = detail::element_count(h.shape);
  std::uint64_t need = 0;
  if (!count || __builtin_mul_overflow(*count, element_size(st.type), &need))
    fail(name, "shape {} is too large: its byte count overflows 64 bits", detail::shape_text(h.shape));
  const std::span<const std::byte> data = bytes.subspan(prefix + header_len);
  if (data.size() < need) fail(name, "truncated: header says {} bytes of data, file has {}", need, data.size());
  if (data.size() > need) fail(name, "trailing bytes: header says {} bytes of data, file has {}", need, data.size());

  Array a{.name = std::string(name), .type = st.type, .shape = h.shape};
  detail::decode(data, st.type, st.big_endian, a);
  if (h.fortran_order && h.shape.size() > 1) {
    a.values = fortran_to_c(a.values, a.shape);
    a.ints = fortran_to_c(a.ints, a.shape);
  }
  return a;
}

Array read_npy_file(const std::string& path, StorageHint hint) {
  const std::vector<std::byte> bytes = detail::read_file(path, std::uint64_t{8} << 30);
  return read_npy(bytes, path, hint);
}

}  // namespace pecheck::tensorfiles
