// Cases shared by the 2-D theorems: a spec, (row, col) per token, and a data seed.
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "harness/generators.hpp"
#include "harness/measure.hpp"
#include "harness/runner.hpp"
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

/// `tokens` grid coordinates per case, each a ViT-sized one (below 64) half the time, else any
/// position below 2^24; instantiated for Sinusoidal2dSpec and Rope2dSpec.
template <class Spec>
rc::Gen<GridCase<Spec>> grid_case_gen(rc::Gen<Spec> spec, int tokens);

/// A width divisible by 4 up to 256, any base, either layout.
rc::Gen<Sinusoidal2dSpec> sinusoidal2d_spec_gen();

/// Axial RoPE: RoPE-ViT's base 100 often, else the 1-D bases; either layout, either pairing.
rc::Gen<Rope2dSpec> rope2d_spec_gen();

/// One axis's half-heads (tokens x heads, d/2 each) in the per_half frame (whole_head's middle
/// quarters exchanged): each a 1-D RoPE of the axis spec at that axis's position.
template <class T>
std::vector<T> axis_halves(const Rope2dSpec& s, std::vector<T> v, bool by_column) {
  if (s.pairs_whole_head()) exchange_middle_quarters(std::span<T>(v), s.head_dim);
  const std::size_t hd = static_cast<std::size_t>(s.head_dim), half = hd / 2;
  std::vector<T> out;
  for (std::size_t head = 0; head < v.size(); head += hd) {
    const auto from = v.begin() + static_cast<std::ptrdiff_t>(head + (by_column ? half : 0));
    out.insert(out.end(), from, from + static_cast<std::ptrdiff_t>(half));
  }
  return out;
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

namespace pecheck {
// The case type erased once, in properties/two_dimensional/cases_2d.cpp (see erased() in harness/runner.hpp).
extern template rc::Gen<AnyCase> erased(rc::Gen<props::Sinusoidal2dCase>);
extern template rc::Gen<AnyCase> erased(rc::Gen<props::Rope2dCase>);
}  // namespace pecheck
