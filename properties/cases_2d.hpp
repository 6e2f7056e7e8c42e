// Cases shared by the 2-D theorems: a spec, (row, col) per token, and a data seed.
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
#include <string>
#include <vector>

#include "harness/generators.hpp"
#include "harness/measure.hpp"
#include "interface/encoder.hpp"

namespace pecheck::props {

template <class Spec>
struct GridCase {
  Spec spec;
  int heads = 1;
  std::vector<std::int64_t> rows, cols;
  std::uint32_t data = 0;

  std::size_t n() const { return rows.size(); }
  std::string describe() const {
    return fmt::format("{} heads={} rows=[{}] cols=[{}] data={}", spec.describe(), heads, fmt::join(rows, ","),
                       fmt::join(cols, ","), data);
  }
  std::vector<std::string> tags() const {
    std::vector<std::string> t;
    for (std::size_t i = 0; i < rows.size(); ++i) t.push_back(gen::position_class(std::max(rows[i], cols[i])));
    return t;
  }
};

using Sinusoidal2dCase = GridCase<Sinusoidal2dSpec>;
using Rope2dCase = GridCase<Rope2dSpec>;

/// A grid coordinate: a ViT-sized one (below 64) half the time, else any position below 2^24.
inline rc::Gen<std::int64_t> grid_coordinate() {
  return rc::gen::oneOf(rc::gen::inRange<std::int64_t>(0, 64), gen::position());
}

/// A multiple of 4 in [4, max].
inline rc::Gen<int> width_by_4(int max) {
  return rc::gen::map(gen::even_dim(max), [](int d) { return std::max(4, d - d % 4); });
}

template <class Spec>
rc::Gen<GridCase<Spec>> grid_case_gen(rc::Gen<Spec> spec, int tokens) {
  const auto coords =
      rc::gen::container<std::vector<std::int64_t>>(static_cast<std::size_t>(tokens), grid_coordinate());
  return rc::gen::apply(
      [](Spec s, int heads, std::vector<std::int64_t> r, std::vector<std::int64_t> c, std::uint32_t data) {
        return GridCase<Spec>{s, heads, r, c, data};
      },
      spec, rc::gen::inRange(1, 3), coords, coords, gen::data_seed());
}

inline rc::Gen<Sinusoidal2dSpec> sinusoidal2d_spec_gen() {
  return rc::gen::apply(
      [](int d, double base, SinusoidalLayout l) {
        return Sinusoidal2dSpec{d, base, l};
      },
      width_by_4(256), gen::base(), gen::sinusoidal_layout());
}

/// Axial RoPE: RoPE-ViT's base 100 often, else the 1-D bases.
inline rc::Gen<Rope2dSpec> rope2d_spec_gen() {
  return rc::gen::apply(
      [](int d, double base, RopeLayout l) {
        return Rope2dSpec{d, base, l};
      },
      width_by_4(256), rc::gen::oneOf(rc::gen::just(100.0), gen::base()), gen::rope_layout());
}

/// x rotated by the encoder's 2-D RoPE to (rows, cols); failure set on unclean outputs.
inline std::vector<float> encoder_rope2d(Encoder& enc, DType dt, const Rope2dCase& c, std::vector<float> x,
                                         const std::vector<std::int64_t>& rows, const std::vector<std::int64_t>& cols,
                                         std::string& failure) {
  enc.run(Rope2dApply{c.spec, dt, c.heads, rows, cols, x});
  if (failure.empty()) failure = classify_outputs(dt, x, "y");
  return x;
}

}  // namespace pecheck::props
