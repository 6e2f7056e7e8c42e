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
inline rc::Gen<MropeSpec> mrope_spec() {
  const MropeSpec qwen2{.head_dim = 128, .base = 1e6, .mrope_section = {16, 24, 24}};
  const MropeSpec qwen3{
      .head_dim = 128, .base = 5e6, .mrope_section = {24, 20, 20}, .assignment = MropeAssignment::interleaved};
  const auto any = rc::gen::mapcat(rc::gen::inRange(3, 129), [](int pairs) {
    return rc::gen::mapcat(rc::gen::inRange(1, pairs - 1), [pairs](int s0) {
      return rc::gen::apply(
          [pairs, s0](int s1, double base, MropeAssignment a, RopeLayout layout) {
            return MropeSpec{.head_dim = 2 * pairs,
                             .base = base,
                             .mrope_section = {s0, s1, pairs - s0 - s1},
                             .assignment = a,
                             .layout = layout};
          },
          rc::gen::inRange(1, pairs - s0), gen::base(),
          rc::gen::element(MropeAssignment::sectioned, MropeAssignment::interleaved), gen::rope_layout());
    });
  });
  return rc::gen::weightedOneOf<MropeSpec>({{1, rc::gen::element(qwen2, qwen3)}, {2, any}});
}

/// `n` tokens of M-RoPE positions, each axis from gen::position().
inline rc::Gen<MropeCase> mrope_case_gen(int n) {
  const auto axis = rc::gen::container<std::vector<std::int64_t>>(static_cast<std::size_t>(n), gen::position());
  return rc::gen::apply(
      [](MropeSpec s, int heads, std::vector<std::int64_t> t, std::vector<std::int64_t> h, std::vector<std::int64_t> w,
         std::uint32_t data) {
        return MropeCase{s, heads, {t, h, w}, data};
      },
      mrope_spec(), rc::gen::inRange(1, 4), axis, axis, axis, gen::data_seed());
}

/// x rotated by the encoder to the given positions (one per token and axis); failure set on
/// unclean outputs.
inline std::vector<float> encoder_mrope(Encoder& enc, DType dt, const MropeCase& c, std::vector<float> x,
                                        const std::array<std::vector<std::int64_t>, 3>& axes, std::string& failure) {
  enc.run(MropeApply{c.spec, dt, c.heads, axes[0], axes[1], axes[2], x});
  if (failure.empty()) failure = classify_outputs(dt, x, "y");
  return x;
}

}  // namespace pecheck::props
