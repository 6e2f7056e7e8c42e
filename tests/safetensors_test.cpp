// safetensors reader: every supported dtype decodes exactly, tensors come back sorted by name,
// and every malformed header or buffer layout is rejected with one line that says what is wrong.
#include "tensorfiles/safetensors.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

namespace pecheck::tensorfiles {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// A safetensors file: the header's size as u64 little-endian, the header, then the data buffer.
std::string st(const std::string& header, const std::string& data = "") {
  std::string out;
  for (int i = 0; i < 8; ++i) out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

template <class U, class T>
std::string le(std::initializer_list<T> values) {
  std::string out;
  for (T v : values)
    for (std::size_t i = 0; i < sizeof(U); ++i) out += static_cast<char>((std::bit_cast<U>(v) >> (8 * i)) & 0xff);
  return out;
}

std::vector<Array> read(const std::string& file) {
  return read_safetensors({reinterpret_cast<const std::byte*>(file.data()), file.size()}, "m.safetensors");
}

void expect_rejected(const std::string& file, const std::string& problem) {
  try {
    read(file);
    ADD_FAILURE() << "accepted a file that should fail with: " << problem;
  } catch (const FormatError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    EXPECT_EQ(m.rfind("m.safetensors: ", 0), 0u) << m;
    EXPECT_NE(m.find(problem), std::string::npos) << m;
  }
}

/// One F32 tensor "t" of the given shape and offsets, for the header checks.
std::string one(const std::string& shape, const std::string& offsets, const std::string& dtype = "\"F32\"") {
  return "{\"t\": {\"dtype\": " + dtype + ", \"shape\": " + shape + ", \"data_offsets\": " + offsets + "}}";
}

TEST(SafetensorsRead, EveryDtypeDecodesExactly) {
  const std::string data = le<std::uint16_t, std::uint16_t>({0x3C00, 0x0001, 0xFC00}) +  // f16 [0, 6)
                           le<std::uint16_t, std::uint16_t>({0x3F80, 0x0001, 0x7FC0}) +  // bf16 [6, 12)
                           le<std::uint32_t, float>({0.1f, -0x1p-149f}) +                // f32 [12, 20)
                           le<std::uint64_t, double>({0.1}) +                            // f64 [20, 28)
                           le<std::uint32_t, std::int32_t>({-5, INT32_MAX}) +            // i32 [28, 36)
                           le<std::uint64_t, std::int64_t>({INT64_MIN});                 // i64 [36, 44)
  const std::string header = R"({"__metadata__": {"format": "pt"},
    "h": {"dtype": "F16", "shape": [3], "data_offsets": [0, 6]},
    "b": {"dtype": "BF16", "shape": [1, 3], "data_offsets": [6, 12]},
    "f": {"dtype": "F32", "shape": [2], "data_offsets": [12, 20]},
    "d": {"dtype": "F64", "shape": [], "data_offsets": [20, 28]},
    "i": {"dtype": "I32", "shape": [2, 1], "data_offsets": [28, 36]},
    "l": {"dtype": "I64", "shape": [1], "data_offsets": [36, 44]}}   )";
  const std::vector<Array> t = read(st(header, data));
  ASSERT_EQ(t.size(), 6u);
  EXPECT_EQ(t[0].name, "b");
  EXPECT_EQ(t[0].type, ElementType::bf16);
  EXPECT_EQ(t[0].shape, (std::vector<std::int64_t>{1, 3}));
  EXPECT_EQ(t[0].values[0], 1);
  EXPECT_EQ(t[0].values[1], 0x1p-133);
  EXPECT_TRUE(std::isnan(t[0].values[2]));
  EXPECT_EQ(t[1].name, "d");
  EXPECT_TRUE(t[1].shape.empty());
  EXPECT_EQ(t[1].values, (std::vector<double>{0.1}));
  EXPECT_EQ(t[2].name, "f");
  EXPECT_EQ(t[2].values, (std::vector<double>{0.1f, -0x1p-149}));
  EXPECT_EQ(t[3].name, "h");
  EXPECT_EQ(t[3].type, ElementType::f16);
  EXPECT_EQ(t[3].values, (std::vector<double>{1, 0x1p-24, -kInf}));
  EXPECT_EQ(t[4].name, "i");
  EXPECT_EQ(t[4].ints, (std::vector<std::int64_t>{-5, INT32_MAX}));
  EXPECT_EQ(t[5].name, "l");
  EXPECT_EQ(t[5].ints, (std::vector<std::int64_t>{INT64_MIN}));
}

TEST(SafetensorsRead, EmptyAndZeroSizeTensors) {
  EXPECT_TRUE(read(st("{}")).empty());
  EXPECT_TRUE(read(st(R"({"__metadata__": {}})")).empty());
  const std::vector<Array> t = read(st(R"({"z": {"dtype": "F32", "shape": [0, 5], "data_offsets": [4, 4]},
      "a": {"dtype": "I32", "shape": [1], "data_offsets": [0, 4]},
      "y": {"dtype": "F64", "shape": [0], "data_offsets": [4, 4]}})",
                                       le<std::uint32_t, std::int32_t>({9})));
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].ints, (std::vector<std::int64_t>{9}));
  EXPECT_EQ(t[2].shape, (std::vector<std::int64_t>{0, 5}));
  EXPECT_EQ(t[2].size(), 0u);
}

TEST(SafetensorsRead, RejectsBadFraming) {
  expect_rejected("", "too short");
  expect_rejected(std::string("\x10\0\0\0\0\0\0", 7), "too short");
  expect_rejected(st("{}").substr(0, 9), "header size 2 runs past the end of the file (9 bytes)");
  expect_rejected(std::string(8, '\xff'), "header size 18446744073709551615 runs past the end");
  expect_rejected(st("{\"a\": "), "not valid JSON");
  expect_rejected(st("{} x"), "not valid JSON");
  expect_rejected(st(std::string("{\"\xff\": 1}")), "not valid JSON");
  expect_rejected(st("[1, 2]"), "header is not a JSON object");
  expect_rejected(st(R"({"t": [[[1]]]})"), "nests deeper");
  expect_rejected(st(R"({"__metadata__": []})"), "__metadata__ is not a JSON object");
  expect_rejected(st(R"({"__metadata__": {"k": 1}})"), "__metadata__ value for 'k' is not a string");
}

TEST(SafetensorsRead, RejectsBadTensorEntries) {
  const std::string f4x2 = le<std::uint32_t, float>({1, 2});
  expect_rejected(st(R"({"t": 5})", f4x2), "tensor 't': entry is not a JSON object");
  expect_rejected(st(R"({"t": {"shape": [2], "data_offsets": [0, 8]}})", f4x2), "tensor 't': no 'dtype' field");
  expect_rejected(st(R"({"t": {"dtype": "F32", "data_offsets": [0, 8]}})", f4x2), "no 'shape' field");
  expect_rejected(st(R"({"t": {"dtype": "F32", "shape": [2]}})", f4x2), "no 'data_offsets' field");
  expect_rejected(st(one("[2]", "[0, 8]", "32"), f4x2), "dtype is not a string");
  for (const char* dtype : {"F8_E4M3", "BOOL", "U8", "f32", ""})
    expect_rejected(st(one("[2]", "[0, 8]", "\"" + std::string(dtype) + "\""), f4x2),
                    "unsupported dtype '" + std::string(dtype) + "'");
  expect_rejected(st(one("2", "[0, 8]"), f4x2), "shape is not an array");
  expect_rejected(st(one("[-2]", "[0, 8]"), f4x2), "dimension '-2' is negative");
  expect_rejected(st(one("[2.0]", "[0, 8]"), f4x2), "dimension '2.0' is not an integer");
  expect_rejected(st(one("[\"2\"]", "[0, 8]"), f4x2), "is not an integer");
  expect_rejected(st(one("[9223372036854775808]", "[0, 8]"), f4x2), "is too large");
  expect_rejected(st(one("[4294967296, 4294967296]", "[0, 8]"), f4x2), "overflows");
  std::string many = "[1";
  for (int i = 0; i < 64; ++i) many += ", 1";
  expect_rejected(st(one(many + "]", "[0, 4]"), f4x2), "more than 64 dims");
  expect_rejected(st(one("[2]", "[0, 8, 8]"), f4x2), "data_offsets is not [begin, end]");
  expect_rejected(st(one("[2]", "{}"), f4x2), "data_offsets is not [begin, end]");
  expect_rejected(st(one("[2]", "[-1, 8]"), f4x2), "offset '-1' is negative");
  expect_rejected(st(one("[0]", "[8, 0]"), f4x2), "data_offsets [8, 0] end before they begin");
  expect_rejected(st(one("[4]", "[0, 16]"), f4x2), "data_offsets [0, 16] run past the end of the 8-byte data buffer");
  expect_rejected(st(one("[3]", "[0, 8]"), f4x2), "data_offsets [0, 8] hold 8 bytes, but shape (3,) of f32 needs 12");
}

TEST(SafetensorsRead, RejectsBadLayouts) {
  const std::string f4x3 = le<std::uint32_t, float>({1, 2, 3});
  const auto two = [](const std::string& a, const std::string& b) {
    return R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": )" + a +
           R"(}, "b": {"dtype": "F32", "shape": [1], "data_offsets": )" + b + "}}";
  };
  expect_rejected(st(two("[0, 4]", "[0, 4]"), f4x3.substr(0, 4)), "tensors 'a' and 'b' overlap");
  expect_rejected(st(two("[0, 4]", "[8, 12]"), f4x3), "hole in the data buffer: bytes [4, 8)");
  expect_rejected(st(two("[4, 8]", "[8, 12]"), f4x3), "hole in the data buffer: bytes [0, 4)");
  expect_rejected(st(two("[0, 4]", "[4, 8]"), f4x3), "hole in the data buffer: bytes [8, 12)");
  expect_rejected(st(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                         "a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})",
                     f4x3.substr(0, 8)),
                  "duplicate key 'a'");
  expect_rejected(
      st(R"({"t": {"dtype": "F32", "dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})", f4x3.substr(0, 4)),
      "duplicate key 'dtype'");
}

TEST(SafetensorsRead, FileErrorsNameTheFile) {
  try {
    read_safetensors_file("/nonexistent/m.safetensors");
    ADD_FAILURE() << "read a file that does not exist";
  } catch (const FormatError& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/m.safetensors: cannot open: No such file or directory");
  }
  EXPECT_THROW(read_safetensors_file("/"), FormatError);
}

}  // namespace
}  // namespace pecheck::tensorfiles
