#include "tensorfiles/detail.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>

#include "spec/half_bits.hpp"

namespace pecheck::tensorfiles::detail {

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r' || c == '\0') c = ' ';
  return s;
}

std::string quote_text(std::string_view s) {
  constexpr std::size_t kMax = 40;  // enough to recognise a descr or a tensor name
  // Like Python's repr: single quotes unless the text holds one and no double quote.
  const char q = s.find('\'') != std::string_view::npos && s.find('"') == std::string_view::npos ? '"' : '\'';
  std::string out(1, q);
  for (std::size_t i = 0; i < s.size() && i < kMax; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\' && c != q)
      out += static_cast<char>(c);
    else
      out += fmt::format("\\x{:02x}", c);
  }
  out += q;
  return s.size() > kMax ? out + "..." : out;
}

std::optional<std::uint64_t> element_count(std::span<const std::int64_t> shape) {
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;
  std::uint64_t n = 1;
  for (std::int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(n, static_cast<std::uint64_t>(d), &n) || n > INT64_MAX) return std::nullopt;
  return n;
}

std::string shape_text(std::span<const std::int64_t> shape) {
  std::string out = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) out += fmt::format("{}{}", i ? ", " : "", shape[i]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

namespace {

/// Bits of one element as an unsigned integer, whatever the file's byte order.
template <class U>
U load(const std::byte* p, bool big_endian) {
  if (!big_endian) return load_le<U>(p);
  std::byte swapped[sizeof(U)];
  std::reverse_copy(p, p + sizeof(U), swapped);
  return load_le<U>(swapped);
}

}  // namespace

void decode(std::span<const std::byte> data, ElementType type, bool big_endian, Array& out) {
  const std::size_t size = element_size(type);
  const std::size_t n = data.size() / size;
  if (is_floating(type))
    out.values.resize(n);
  else
    out.ints.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::byte* p = data.data() + i * size;
    switch (type) {
      case ElementType::f16:
        out.values[i] = f16_to_double(load<std::uint16_t>(p, big_endian));
        break;
      case ElementType::bf16:
        out.values[i] = bf16_to_double(load<std::uint16_t>(p, big_endian));
        break;
      case ElementType::f32:
        out.values[i] = std::bit_cast<float>(load<std::uint32_t>(p, big_endian));
        break;
      case ElementType::f64:
        out.values[i] = std::bit_cast<double>(load<std::uint64_t>(p, big_endian));
        break;
      case ElementType::i32:
        out.ints[i] = static_cast<std::int32_t>(load<std::uint32_t>(p, big_endian));
        break;
      case ElementType::i64:
        out.ints[i] = static_cast<std::int64_t>(load<std::uint64_t>(p, big_endian));
        break;
      case ElementType::u16:
        out.ints[i] = load<std::uint16_t>(p, big_endian);
        break;
    }
  }
}

std::vector<std::byte> read_file(const std::string& path, std::uint64_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(path, "cannot open: {}", std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail(path, "cannot stat: {}", std::strerror(errno));
  if (!S_ISREG(st.st_mode)) fail(path, "not a regular file");
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > max_bytes)
    fail(path, "file is {} bytes, more than the {} GiB a dump file may have", size, max_bytes >> 30);
  std::vector<std::byte> bytes(size);
  std::size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t r = ::read(fd, bytes.data() + got, bytes.size() - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) fail(path, "read error: {}", std::strerror(errno));
    if (r == 0) fail(path, "file shrank while being read ({} of {} bytes)", got, size);
    got += static_cast<std::size_t>(r);
  }
  return bytes;
}

}  // namespace pecheck::tensorfiles::detail
