// The NPY header: a Python dict literal such as {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pecheck::tensorfiles::detail {

struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<std::int64_t> shape;
};

/// Parses the dict literal strictly: exactly the keys descr (a string), fortran_order (True or
/// False) and shape (a tuple of non-negative ints), in any order, with either quote style and
/// optional trailing commas, then only whitespace. python2_longs accepts the "5L" ints that
/// numpy wrote under Python 2 (format 1.0 only). Throws FormatError naming `name`.
NpyHeader parse_npy_header(std::string_view text, std::string_view name, bool python2_longs);

}  // namespace pecheck::tensorfiles::detail
