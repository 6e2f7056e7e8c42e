// NPY reader and writer: every supported descr in both byte orders decodes to the exact values,
// Fortran order is transposed, the writer round-trips and aligns, and every malformed file is
// rejected with one line that says what is wrong.
#include "tensorfiles/npy.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>

#include "spec/half_bits.hpp"

namespace pecheck::tensorfiles {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::span<const std::byte> as_bytes(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

/// An NPY file of the given format version: the dict padded so the data starts at 64, then data.
std::string npy(const std::string& dict, const std::string& data, int major = 1) {
  const std::size_t prefix = major == 1 ? 10 : 12;
  std::string header = dict;
  header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  for (std::size_t i = 0; i < prefix - 8; ++i) out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

std::string dict(const std::string& descr, const std::string& shape, bool fortran = false) {
  return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") + ", 'shape': " + shape + ", }";
}

/// The bytes of each value's bit pattern, little- or big-endian.
template <class U, class T>
std::string bytes_of(std::initializer_list<T> values, bool big = false) {
  std::string out;
  for (T v : values) {
    const U bits = std::bit_cast<U>(v);
    for (std::size_t i = 0; i < sizeof(U); ++i)
      out += static_cast<char>((bits >> (8 * (big ? sizeof(U) - 1 - i : i))) & 0xff);
  }
  return out;
}

Array read(const std::string& file, StorageHint hint = StorageHint::none) {
  return read_npy(as_bytes(file), "t.npy", hint);
}

void expect_same(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << i;
    } else {
      EXPECT_EQ(std::bit_cast<std::uint64_t>(got[i]), std::bit_cast<std::uint64_t>(want[i])) << i << ": " << got[i];
    }
  }
}

void expect_rejected(const std::string& file, const std::string& problem, StorageHint hint = StorageHint::none) {
  try {
    read(file, hint);
    ADD_FAILURE() << "accepted a file that should fail with: " << problem;
  } catch (const FormatError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    EXPECT_EQ(m.rfind("t.npy: ", 0), 0u) << m;
    EXPECT_NE(m.find(problem), std::string::npos) << m;
  }
}

TEST(NpyRead, FloatsDecodeExactlyInBothByteOrders) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (bool big : {false, true}) {
    const char* o = big ? ">" : "<";
    Array a = read(npy(dict(std::string(o) + "f4", "(2, 3)"),
                       bytes_of<std::uint32_t, float>({1.5f, -0.0f, 0x1p-149f, INFINITY, NAN, -3.0e38f}, big)));
    EXPECT_EQ(a.type, ElementType::f32);
    EXPECT_EQ(a.shape, (std::vector<std::int64_t>{2, 3}));
    expect_same(a.values, {1.5, -0.0, 0x1p-149, kInf, nan, static_cast<double>(-3.0e38f)});
    a = read(npy(dict(std::string(o) + "f8", "(3,)"), bytes_of<std::uint64_t, double>({0.1, -0x1p-1074, -kInf}, big)));
    expect_same(a.values, {0.1, -0x1p-1074, -kInf});
    // f16: one, minus two, the smallest and largest subnormals, the largest finite, infinities, NaN, -0.
    a = read(npy(dict(std::string(o) + "f2", "(9,)"),
                 bytes_of<std::uint16_t, std::uint16_t>(
                     {0x3C00, 0xC000, 0x0001, 0x03FF, 0x7BFF, 0x7C00, 0xFC00, 0x7E00, 0x8000}, big)));
    EXPECT_EQ(a.type, ElementType::f16);
    expect_same(a.values, {1, -2, 0x1p-24, 1023 * 0x1p-24, 65504, kInf, -kInf, nan, -0.0});
  }
  Array native = read(npy(dict("=f4", "(1,)"), bytes_of<std::uint32_t, float>({2.5f})));
  expect_same(native.values, {2.5});
}

TEST(NpyRead, IntegersDecodeInBothByteOrders) {
  for (bool big : {false, true}) {
    const std::string o = big ? ">" : "<";
    Array a = read(npy(dict(o + "i4", "(3,)"), bytes_of<std::uint32_t, std::int32_t>({-1, INT32_MIN, 7}, big)));
    EXPECT_EQ(a.type, ElementType::i32);
    EXPECT_EQ(a.ints, (std::vector<std::int64_t>{-1, INT32_MIN, 7}));
    a = read(npy(dict(o + "i8", "(2,)"), bytes_of<std::uint64_t, std::int64_t>({INT64_MIN, INT64_MAX}, big)));
    EXPECT_EQ(a.ints, (std::vector<std::int64_t>{INT64_MIN, INT64_MAX}));
    a = read(npy(dict(o + "u2", "(2,)"), bytes_of<std::uint16_t, std::uint16_t>({0xBEEF, 1}, big)));
    EXPECT_EQ(a.type, ElementType::u16);
    EXPECT_EQ(a.ints, (std::vector<std::int64_t>{0xBEEF, 1}));
    EXPECT_TRUE(a.values.empty());
  }
}

TEST(NpyRead, Bf16HintDecodesRawWords) {
  const std::vector<double> want = {1, 0x1p-133, kInf, std::numeric_limits<double>::quiet_NaN(), -3.140625, -0.0};
  for (const char* descr : {"<u2", ">u2", "|V2", "<V2", ">V2"}) {
    const bool big = descr[0] == '>';
    Array a = read(npy(dict(descr, "(6,)"),
                       bytes_of<std::uint16_t, std::uint16_t>({0x3F80, 0x0001, 0x7F80, 0x7FC0, 0xC049, 0x8000}, big)),
                   StorageHint::bf16);
    EXPECT_EQ(a.type, ElementType::bf16) << descr;
    expect_same(a.values, want);
  }
  // The hint only says how to read raw words; a real f4 stays f4.
  EXPECT_EQ(read(npy(dict("<f4", "()"), bytes_of<std::uint32_t, float>({1.0f})), StorageHint::bf16).type,
            ElementType::f32);
}

TEST(NpyRead, FortranOrderIsTransposedIntoCOrder) {
  Array a = read(npy(dict("<f8", "(2, 3)", true), bytes_of<std::uint64_t, double>({0, 10, 1, 11, 2, 12})));
  expect_same(a.values, {0, 1, 2, 10, 11, 12});
  // 3-d: element (i, j, k) holds 100i + 10j + k; Fortran order stores i fastest.
  std::string data;
  for (int k = 0; k < 4; ++k)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 2; ++i) data += bytes_of<std::uint32_t, std::int32_t>({100 * i + 10 * j + k});
  a = read(npy(dict("<i4", "(2, 3, 4)", true), data));
  ASSERT_EQ(a.ints.size(), 24u);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) EXPECT_EQ(a.ints[(i * 3 + j) * 4 + k], 100 * i + 10 * j + k);
  EXPECT_EQ(read(npy(dict("<f4", "(3, 0)", true), "")).size(), 0u);
}

TEST(NpyRead, HeaderVersionsAndDictSpellings) {
  const std::string data = bytes_of<std::uint32_t, float>({1, 2, 3, 4, 5, 6});
  for (int major : {1, 2, 3}) {
    Array a = read(npy(dict("<f4", "(2, 3)"), data, major));
    expect_same(a.values, {1, 2, 3, 4, 5, 6});
  }
  for (const char* d : {"{\"shape\": (2,3), \"descr\": \"<f4\", \"fortran_order\": False}",
                        "{ 'fortran_order' : False ,'shape':( 6 , ),'descr':'<f4',}",
                        "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }"})
    EXPECT_EQ(read(npy(d, data)).size(), 6u) << d;
  Array scalar = read(npy(dict("<i8", "()"), bytes_of<std::uint64_t, std::int64_t>({42})));
  EXPECT_TRUE(scalar.shape.empty());
  EXPECT_EQ(scalar.ints, (std::vector<std::int64_t>{42}));
  EXPECT_EQ(read(npy(dict("<f4", "(0,)"), "")).values.size(), 0u);
  // Python 2's long suffix only appears in version 1.0 files.
  expect_rejected(npy(dict("<f4", "(2L, 3L)"), data, 2), "malformed header dict");
}

TEST(NpyRead, RejectsMalformedFiles) {
  const std::string f4x2 = bytes_of<std::uint32_t, float>({1, 2});
  const std::string good = npy(dict("<f4", "(2,)"), f4x2);
  expect_rejected("", "not an NPY file");
  expect_rejected("\x93NUMPX" + good.substr(6), "not an NPY file");
  expect_rejected(good.substr(0, 7), "truncated");
  expect_rejected(good.substr(0, 6) + "\x04" + good.substr(7), "unsupported NPY format version 4.0");
  expect_rejected(good.substr(0, 7) + "\x01" + good.substr(8), "unsupported NPY format version 1.1");
  expect_rejected(good.substr(0, 40), "header length 118 runs past the end of the file (40 bytes)");
  expect_rejected(npy("{'descr': '<f4' 'fortran_order': False, 'shape': (2,)}", f4x2), "malformed header dict");
  expect_rejected(npy("{'descr': '<f4, 'fortran_order': False, 'shape': (2,)}", f4x2), "malformed header dict");
  expect_rejected(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", f4x2), "malformed header dict");
  expect_rejected(npy(dict("<f4", "(2,)") + "x", f4x2), "malformed header dict");
  expect_rejected(npy(dict("<f4", "(2,,)"), f4x2), "malformed header dict");
  expect_rejected(npy(dict("<f4", "[2]"), f4x2), "a tuple such as (2, 3)");
  expect_rejected(npy("{'descr': '<f4', 'shape': (2,)}", f4x2), "no 'fortran_order' key");
  expect_rejected(npy("{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}", f4x2), "True or False");
  expect_rejected(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", f4x2), "unexpected key 'x'");
  expect_rejected(npy("{'shape': (2,), 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", f4x2),
                  "duplicate key 'shape'");
  for (const char* descr : {"<c8", "O", "<U4", "<f16", "<i2", "<V4", ""})
    expect_rejected(npy(dict(descr, "(2,)"), f4x2), "unsupported descr");
  expect_rejected(npy(dict("|u2", "(4,)"), f4x2), "no byte order");
  expect_rejected(npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,)}", f4x2), "structured");
  expect_rejected(npy(dict("|V2", "(4,)"), f4x2), "the manifest must say bf16");
  expect_rejected(npy(dict("<f4", "(-2,)"), f4x2), "negative dimension '-2'");
  expect_rejected(npy(dict("<f4", "(2.0,)"), f4x2), "non-integer dimension");
  expect_rejected(npy(dict("<f4", "(2)"), f4x2), "shape (2) is an int, not a tuple");
  expect_rejected(npy(dict("<f4", "(99999999999999999999,)"), f4x2), "too large");
  expect_rejected(npy(dict("<f4", "(4294967296, 4294967296)"), f4x2), "overflows");
  expect_rejected(npy(dict("<f8", "(2305843009213693952, 2)"), f4x2), "overflows");
  std::string many = "(";
  for (int i = 0; i < 65; ++i) many += "1, ";
  expect_rejected(npy(dict("<f4", many + ")"), f4x2), "more than 64 dims");
  expect_rejected(npy(dict("<f4", "(3,)"), f4x2), "truncated: header says 12 bytes of data, file has 8");
  expect_rejected(npy(dict("<f4", "(1,)"), f4x2), "trailing bytes: header says 4 bytes of data, file has 8");
}

TEST(NpyWrite, RoundTripsEveryTypeWithDataAlignedTo64) {
  const std::vector<std::pair<ElementType, std::vector<double>>> floats = {
      {ElementType::f16, {1, -0x1p-24, 65504, -kInf}},
      {ElementType::bf16, {1, 0x1p-133, -3.140625, kInf}},
      {ElementType::f32, {0.1f, -0x1p-149, 3e38f, 0}},
      {ElementType::f64, {0.1, -0x1p-1074, 1e308, -0.0}}};
  for (const auto& [type, values] : floats) {
    const Array a{.name = "x", .type = type, .shape = {2, 2}, .values = values};
    const std::string bytes = npy_bytes(a);
    Array b = read(bytes, StorageHint::bf16);
    EXPECT_EQ(b.type, type);
    EXPECT_EQ(b.shape, a.shape);
    expect_same(b.values, values);
  }
  for (ElementType type : {ElementType::i32, ElementType::i64, ElementType::u16}) {
    const Array a{.name = "x", .type = type, .shape = {3}, .ints = {0, 65535, 7}};
    EXPECT_EQ(read(npy_bytes(a)).ints, a.ints);
  }
  // The data starts at a multiple of 64 whatever the shape, right after the header's '\n'.
  std::vector<std::int64_t> shape;
  for (int nd = 0; nd <= 12; ++nd, shape.push_back(1 + nd % 2)) {
    const Array a{.name = "x",
                  .type = ElementType::f32,
                  .shape = shape,
                  .values = std::vector<double>(Array{.shape = shape}.size())};
    const std::string bytes = npy_bytes(a);
    const std::size_t data_start =
        10 + static_cast<unsigned char>(bytes[8]) + 256 * static_cast<unsigned char>(bytes[9]);
    EXPECT_EQ(data_start % 64, 0u) << nd;
    EXPECT_EQ(bytes[data_start - 1], '\n');
    EXPECT_EQ(bytes.size(), data_start + 4 * a.size());
  }
}

TEST(NpyWrite, RoundsToNearestEven) {
  const Array a{.name = "x",
                .type = ElementType::f16,
                .shape = {7},
                .values = {1 + 0x1p-11, 1 + 3 * 0x1p-11, 0x1p-25, 3 * 0x1p-26, 65519.99, 65520, std::nan("")}};
  expect_same(read(npy_bytes(a)).values, {1, 1 + 0x1p-9, 0, 0x1p-24, 65504, kInf, std::nan("")});
  const Array b{.name = "x", .type = ElementType::bf16, .shape = {3}, .values = {1 + 0x1p-8, 1 + 3 * 0x1p-8, 0x1p128}};
  expect_same(read(npy_bytes(b), StorageHint::bf16).values, {1, 1 + 0x1p-6, kInf});
  const Array c{.name = "x",
                .type = ElementType::f32,
                .shape = {4},
                .values = {1 + 0x1p-24, 0x1.fffffefp127, 0x1.ffffffp127, -1e300}};
  expect_same(read(npy_bytes(c)).values, {1, 0x1.fffffep127, kInf, -kInf});
}

TEST(NpyWrite, RejectsInconsistentArraysAndWritesFiles) {
  EXPECT_THROW(npy_bytes(Array{.name = "x", .type = ElementType::f32, .shape = {3}, .values = {1, 2}}),
               std::invalid_argument);
  EXPECT_THROW(npy_bytes(Array{.name = "x", .type = ElementType::i32, .shape = {1}, .ints = {1LL << 40}}),
               std::invalid_argument);
  EXPECT_THROW(npy_bytes(Array{.name = "x", .type = ElementType::f32, .shape = {-1}}), std::invalid_argument);
  const std::string path = (std::filesystem::temp_directory_path() / ("npy_test_" + std::to_string(getpid()) + ".npy"));
  write_npy(path, Array{.name = "x", .type = ElementType::f64, .shape = {2}, .values = {1, 2}});
  Array b = read_npy_file(path);
  std::filesystem::remove(path);
  EXPECT_EQ(b.name, path);
  expect_same(b.values, {1, 2});
  EXPECT_THROW(read_npy_file(path), FormatError);
  EXPECT_THROW(read_npy_file("/"), FormatError);
}

/// Every half pattern decodes to a value that encodes back to it; between neighbours the midpoint
/// goes to the even one and anything nearer to one side goes there.
template <class Decode, class Encode>
void check_half_format(Decode decode, Encode encode, std::uint32_t inf_bits, double first_overflow) {
  for (std::uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    const double v = decode(static_cast<std::uint16_t>(bits));
    const bool nan = (bits & 0x7FFF) > inf_bits;
    ASSERT_EQ(std::isnan(v), nan) << bits;
    if (nan) continue;
    ASSERT_EQ(std::uint32_t{encode(v)}, bits) << bits;
    if ((bits & 0x7FFF) == inf_bits) continue;
    // The next value up in magnitude; past the largest finite one, where rounding starts to overflow.
    const double next = (bits & 0x7FFF) + 1 == inf_bits ? std::copysign(first_overflow, v)
                                                        : decode(static_cast<std::uint16_t>(bits + 1));
    ASSERT_LT(std::fabs(v), std::fabs(next)) << bits;
    const double mid = (v + next) / 2;
    ASSERT_EQ(std::uint32_t{encode(mid)}, bits % 2 == 0 ? bits : bits + 1) << bits;
    ASSERT_EQ(std::uint32_t{encode(std::nextafter(mid, v))}, bits) << bits;
    ASSERT_EQ(std::uint32_t{encode(std::nextafter(mid, next))}, bits + 1) << bits;
  }
}

TEST(Half, ExhaustiveDecodeEncode) {
  check_half_format(f16_to_double, double_to_f16, 0x7C00, 0x1p16);
  check_half_format(bf16_to_double, double_to_bf16, 0x7F80, 0x1p128);
}

}  // namespace
}  // namespace pecheck::tensorfiles
