#include "cos_sin.hpp"

#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <tuple>

#include "pins.hpp"
#include "reference/rope.hpp"

namespace pecheck::python {

namespace {

using Array = nb::ndarray<nb::numpy, double, nb::ndim<2>>;

Array owned(std::vector<double> v, std::size_t rows, std::size_t cols) {
  auto* data = new std::vector<double>(std::move(v));
  nb::capsule owner(data, [](void* p) noexcept { delete static_cast<std::vector<double>*>(p); });
  const std::size_t shape[2] = {rows, cols};
  return Array(data->data(), 2, shape, owner);
}

/// The convention's m cos and m sin (YaRN's attention factor m, else 1) of each rotated pair at
/// each position, (n, rotary_dim / 2): the reference's rotation in double. An angle pos * f is
/// within about 2^-52 pos f of the exact one, under 2^-28 at the largest position pecheck draws
/// (2^24, f <= 1): a hundredth of the f32 u these tables are rounded to.
std::tuple<Array, Array> rope_cos_sin(const std::string& convention, int head_dim,
                                      nb::ndarray<const std::int64_t, nb::ndim<1>, nb::c_contig> positions) {
  if (head_dim <= 0 || head_dim % 2) throw std::invalid_argument("head_dim: must be even and > 0");
  nlohmann::json c;
  try {
    c = nlohmann::json::parse(convention);
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("convention: not JSON: ") + e.what());
  }
  const auto pins = pins_from_convention(Op::rope_apply, c);
  const std::span<const std::int64_t> pos(positions.data(), positions.shape(0));
  RopeSpec spec{.head_dim = head_dim, .rotary_dim = head_dim, .layout = RopeLayout::half_split};
  pins->apply(spec, pos);
  spec.validate();
  const ref::RopeRotation<double> rotation(spec);
  const std::size_t pairs = static_cast<std::size_t>(spec.rotary_dim / 2);
  std::vector<double> cos(pos.size() * pairs), sin(pos.size() * pairs);
  for (std::size_t t = 0; t < pos.size(); ++t)
    for (std::size_t p = 0; p < pairs; ++p)
      std::tie(cos[t * pairs + p], sin[t * pairs + p]) = rotation.cos_sin(pos[t], static_cast<int>(p));
  return {owned(std::move(cos), pos.size(), pairs), owned(std::move(sin), pos.size(), pairs)};
}

}  // namespace

void bind_cos_sin(nb::module_& m) {
  m.def("rope_cos_sin", &rope_cos_sin, nb::arg("convention"), nb::arg("head_dim"), nb::arg("positions"),
        nb::sig("def rope_cos_sin(convention: str, head_dim: int, positions: numpy.typing.NDArray[numpy.int64]) -> "
                "tuple[numpy.typing.NDArray[numpy.float64], numpy.typing.NDArray[numpy.float64]]"));
}

}  // namespace pecheck::python
