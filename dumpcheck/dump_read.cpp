#include "dumpcheck/dump_read.hpp"

#include <cmath>

namespace pecheck::dumpcheck::read {

std::vector<double> floats(const tensorfiles::Array& a, const std::string& role) {
  if (!tensorfiles::is_floating(a.type))
    throw FormatError(fmt::format("{}: {} must be a floating-point array, got {}", a.name, role,
                                  tensorfiles::element_type_name(a.type)));
  return a.values;
}

void require_representable(const std::vector<double>& v, DType dt, const std::string& name) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (std::isfinite(v[i]) && static_cast<double>(round_to(dt, v[i])) != v[i])
      throw FormatError(fmt::format("{}: element {} ({:.9g}) is not a {} value, but the manifest declares dtype {}",
                                    name, i, v[i], dtype_name(dt), dtype_name(dt)));
}

std::vector<std::int64_t> positions_of(const tensorfiles::Array& a, std::size_t expected) {
  std::vector<std::int64_t> p;
  if (!a.ints.empty() || a.size() == 0) {
    p = a.ints;
  } else {  // float positions are accepted when they are integers (torch.arange in a float dtype)
    for (double v : a.values) {
      if (v != std::floor(v)) throw FormatError(fmt::format("{}: position {} is not an integer", a.name, v));
      p.push_back(static_cast<std::int64_t>(v));
    }
  }
  if (p.size() != expected)
    throw FormatError(fmt::format("{}: {} positions for {} tokens", a.name, p.size(), expected));
  for (auto v : p)
    if (v < 0 || v >= kMaxPosition) throw FormatError(fmt::format("{}: position {} outside [0, 2^24)", a.name, v));
  return p;
}

void require_finite(const std::vector<double>& v, const std::string& what) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!std::isfinite(v[i]))
      throw FormatError(fmt::format("{}: element {} is {}: dumps must be made from finite inputs", what, i, v[i]));
}

std::vector<double> clean_floats(const tensorfiles::Array& a, const std::string& role, DType dt) {
  std::vector<double> v = floats(a, role);
  require_finite(v, a.name);
  require_representable(v, dt, a.name);
  return v;
}

}  // namespace pecheck::dumpcheck::read
