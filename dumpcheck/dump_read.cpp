#include "dumpcheck/dump_read.hpp"

#include <algorithm>
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

Rotation read_rotation(const Json& m, ArrayReader& r, DType dt, int pairs_of) {
  const std::string where = r.manifest();
  const Json arrays = field<Json>(m, "arrays", where);
  const std::string axes = m.value("axes", std::string("nhd"));
  check_axes(axes, where);
  const tensorfiles::Array xa = r.read("x", field<std::string>(arrays, "x", where));
  const tensorfiles::Array ya = r.read("y", field<std::string>(arrays, "y", where));
  if (xa.shape != ya.shape) throw FormatError(fmt::format("{}: x and y differ in shape", where));
  floats(xa, "x");
  floats(ya, "y");
  Rotation out{.x_name = xa.name};
  std::int64_t dims[4];
  out.x = to_bnhd(xa, axes, dims);
  out.y = to_bnhd(ya, axes, dims);
  out.batch = dims[0], out.tokens = dims[1], out.heads = dims[2], out.head_dim = dims[3];
  if (out.head_dim < pairs_of || out.head_dim % pairs_of != 0)
    throw FormatError(pairs_of == 2 ? fmt::format("{}: head_dim {} must be even and >= 2", xa.name, out.head_dim)
                                    : fmt::format("{}: head_dim {} must be a multiple of {} ({} axes of pairs)",
                                                  xa.name, out.head_dim, pairs_of, pairs_of / 2));
  if (out.tokens == 0 || out.heads == 0) throw FormatError(fmt::format("{}: no tokens", xa.name));
  require_finite(out.x, xa.name);
  require_representable(out.x, dt, xa.name);
  require_representable(out.y, dt, ya.name);
  return out;
}

std::vector<double> to_bnhd(const tensorfiles::Array& a, const std::string& axes, std::int64_t dims[4]) {
  if (a.shape.size() != axes.size())
    throw FormatError(fmt::format("{}: rank {} does not match axes \"{}\"", a.name, a.shape.size(), axes));
  const std::string order = "bnhd";
  std::int64_t extent[4] = {1, 1, 1, 1}, stride[4] = {0, 0, 0, 0};
  std::int64_t s = 1;
  for (int k = static_cast<int>(axes.size()) - 1; k >= 0; --k) {
    const auto at = order.find(axes[static_cast<std::size_t>(k)]);
    extent[at] = a.shape[static_cast<std::size_t>(k)];
    stride[at] = s;
    s *= a.shape[static_cast<std::size_t>(k)];
  }
  std::vector<double> out;
  out.reserve(a.values.size());
  for (std::int64_t b = 0; b < extent[0]; ++b)
    for (std::int64_t n = 0; n < extent[1]; ++n)
      for (std::int64_t h = 0; h < extent[2]; ++h)
        for (std::int64_t d = 0; d < extent[3]; ++d)
          out.push_back(
              a.values[static_cast<std::size_t>(b * stride[0] + n * stride[1] + h * stride[2] + d * stride[3])]);
  std::copy(extent, extent + 4, dims);
  return out;
}

void check_axes(const std::string& axes, const std::string& where) {
  std::string sorted = axes;
  std::sort(sorted.begin(), sorted.end());
  const bool letters =
      std::all_of(axes.begin(), axes.end(), [](char c) { return std::string("bnhd").find(c) != std::string::npos; });
  if (!letters || std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end() ||
      axes.find('n') == std::string::npos || axes.find('d') == std::string::npos)
    throw FormatError(
        fmt::format("{}: axes \"{}\" must use each of b, n, h, d at most once, n and d included", where, axes));
}

}  // namespace pecheck::dumpcheck::read
