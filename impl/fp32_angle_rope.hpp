// The fp32-angle baseline: RoPE as the PyTorch tutorials and HF's default path compute it,
// inv_freq and pos * inv_freq in fp32 (an angle error of about pos * 2^-24 rad), then each pair
// rotated in double by the cos and sin of that fp32 angle and rounded once. The one definition
// behind the catalogue's mutant (mutant-rope-fp32-angles), the AVX2 accuracy test's comparison
// and the HTML report's dashed curve.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>

#include "impl/rope_frequencies.hpp"
#include "interface/operations.hpp"
#include "spec/conventions.hpp"
#include "spec/dtype.hpp"

namespace pecheck::baseline {

/// x (positions, heads, head_dim) rotated in place with fp32 angles (scaled as the spec says;
/// YaRN's magnitude on cos and sin as in HF); pass-through dims untouched.
inline void fp32_angle_rope(const RopeSpec& s, DType dt, int heads, std::span<const std::int64_t> positions,
                            std::span<float> x) {
  RopeApply{s, dt, heads, positions, x}.check();
  const std::size_t hd = static_cast<std::size_t>(s.head_dim), pairs = static_cast<std::size_t>(s.rotary_dim / 2);
  const double m = s.magnitude();
  for (std::size_t t = 0; t < positions.size(); ++t)
    for (std::size_t p = 0; p < pairs; ++p) {
      const float inv = static_cast<float>(angles::scaled_inv_freq(s, static_cast<int>(p)));
      const double a = static_cast<double>(static_cast<float>(positions[t]) * inv);
      const double c = m * std::cos(a), sn = m * std::sin(a);
      const std::size_t i = s.layout == RopeLayout::interleaved ? 2 * p : p;
      const std::size_t j = s.layout == RopeLayout::interleaved ? 2 * p + 1 : p + pairs;
      for (std::size_t h = 0; h < static_cast<std::size_t>(heads); ++h) {
        float* head = x.data() + (t * static_cast<std::size_t>(heads) + h) * hd;
        const double x1 = head[i], x2 = head[j];
        head[i] = round_to(dt, x1 * c - x2 * sn);
        head[j] = round_to(dt, x2 * c + x1 * sn);
      }
    }
}

}  // namespace pecheck::baseline
