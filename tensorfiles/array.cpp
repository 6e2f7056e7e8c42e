#include "tensorfiles/array.hpp"

namespace pecheck::tensorfiles {

std::string_view element_type_name(ElementType t) {
  switch (t) {
    case ElementType::f16:
      return "f16";
    case ElementType::bf16:
      return "bf16";
    case ElementType::f32:
      return "f32";
    case ElementType::f64:
      return "f64";
    case ElementType::i32:
      return "i32";
    case ElementType::i64:
      return "i64";
    case ElementType::u16:
      return "u16";
  }
  return "?";
}

std::size_t element_size(ElementType t) {
  switch (t) {
    case ElementType::f16:
    case ElementType::bf16:
    case ElementType::u16:
      return 2;
    case ElementType::f32:
    case ElementType::i32:
      return 4;
    case ElementType::f64:
    case ElementType::i64:
      return 8;
  }
  return 0;
}

bool is_floating(ElementType t) {
  return t == ElementType::f16 || t == ElementType::bf16 || t == ElementType::f32 || t == ElementType::f64;
}

}  // namespace pecheck::tensorfiles
