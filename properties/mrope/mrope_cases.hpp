// Cases shared by the M-RoPE theorems: a spec (the real Qwen-VL ones often, any valid section
// otherwise), heads, and per-token temporal, height and width positions.
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "harness/generators.hpp"
#include "harness/measure.hpp"
#include "harness/runner.hpp"
#include "interface/encoder.hpp"
#include "spec/mrope.hpp"

namespace pecheck::props {

struct MropeCase {
  MropeSpec spec;
  int heads = 1;
  std::array<std::vector<std::int64_t>, 3> axes;  ///< temporal, height, width: one position a token each
  std::uint32_t data = 0;

  std::size_t tokens() const { return axes[0].size(); }
  std::size_t size() const {
    return tokens() * static_cast<std::size_t>(heads) * static_cast<std::size_t>(spec.head_dim);
  }
  std::string describe() const {
    return fmt::format("{} heads={} t=[{}] h=[{}] w=[{}] data={}", spec.describe(), heads, fmt::join(axes[0], ","),
                       fmt::join(axes[1], ","), fmt::join(axes[2], ","), data);
  }
  std::vector<std::string> tags() const {
    std::vector<std::string> t{gen::dim_class(spec.head_dim), std::string(assignment_name(spec.assignment)),
                               std::string(layout_name(spec.layout))};
    for (const auto& axis : axes)
      for (auto p : axis) t.push_back(gen::position_class(p));
    return t;
  }
};

/// Qwen2-VL / Qwen2.5-VL ([16, 24, 24], sectioned) and Qwen3-VL ([24, 20, 20], interleaved) at
/// head_dim 128 and rope_theta 1e6 (5e6 for Qwen3-VL) a third of the time; otherwise any head_dim
/// in [6, 256], any positive section summing to head_dim/2, either assignment, either layout.
rc::Gen<MropeSpec> mrope_spec();

/// `n` tokens of M-RoPE positions, each axis from gen::position().
rc::Gen<MropeCase> mrope_case_gen(int n);

/// x rotated by the encoder to the given positions (one per token and axis); failure set on
/// unclean outputs.
inline std::vector<float> encoder_mrope(Encoder& enc, DType dt, const MropeCase& c, std::vector<float> x,
                                        const std::array<std::vector<std::int64_t>, 3>& axes, std::string& failure) {
  enc.run(MropeApply{c.spec, dt, c.heads, axes[0], axes[1], axes[2], x});
  if (failure.empty()) failure = classify_outputs(dt, x, "y");
  return x;
}

}  // namespace pecheck::props

namespace pecheck {
// The case type erased once, in properties/mrope/mrope_cases.cpp (see erased() in harness/runner.hpp).
extern template rc::Gen<AnyCase> erased(rc::Gen<props::MropeCase>);
}  // namespace pecheck
