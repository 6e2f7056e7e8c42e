// A decoded tensor from a dump file, and the one exception every dump reader throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace pecheck::tensorfiles {

/// Rejection of a malformed or unsupported dump file. what() is one line that names the file (and
/// the tensor, when there is one) and what is wrong with it.
struct FormatError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Element type as stored in the file. Floating types decode into Array::values, integer types
/// into Array::ints. u16 is a 2-byte unsigned integer that carries no bf16 hint (see StorageHint).
enum class ElementType { f16, bf16, f32, f64, i32, i64, u16 };

/// Short name: "f16", "bf16", "f32", "f64", "i32", "i64", "u16".
std::string_view element_type_name(ElementType t);

/// Bytes per element in the file.
std::size_t element_size(ElementType t);

/// True for f16, bf16, f32 and f64.
bool is_floating(ElementType t);

/// One tensor, always in C (row-major) order whatever the file's order.
struct Array {
  std::string name;
  ElementType type = ElementType::f32;
  std::vector<std::int64_t> shape;  ///< Empty for a 0-d array (one element).
  std::vector<double> values;       ///< Floating types: exact, every f16/bf16/f32 value is a double.
  std::vector<std::int64_t> ints;   ///< Integer types.

  /// Number of elements: the product of shape, 1 for a 0-d array. Readers guarantee it does not
  /// overflow; for a hand-built Array the caller does.
  std::size_t size() const {
    std::size_t n = 1;
    for (std::int64_t d : shape) n *= static_cast<std::size_t>(d);
    return n;
  }
};

}  // namespace pecheck::tensorfiles
