// Cases and measurements shared by the RoPE theorems.
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
#include <string>
#include <vector>

#include "harness/generators.hpp"
#include "harness/measure.hpp"
#include "interface/encoder.hpp"
#include "reference/rope.hpp"

namespace pecheck::props {

/// A RoPE spec, a number of heads, per-token positions and the data seed of x.
struct RopeCase {
  RopeSpec spec;
  int heads = 1;
  std::vector<std::int64_t> positions;
  std::uint32_t data = 0;

  std::size_t size() const {
    return positions.size() * static_cast<std::size_t>(heads) * static_cast<std::size_t>(spec.head_dim);
  }
  std::string describe() const {
    return fmt::format("{} heads={} pos=[{}] data={}", spec.describe(), heads, fmt::join(positions, ","), data);
  }
  std::vector<std::string> tags() const {
    std::vector<std::string> t{gen::dim_class(spec.head_dim), spec.rotary_dim < spec.head_dim ? "partial" : "full",
                               std::string(layout_name(spec.layout))};
    for (auto p : positions) t.push_back(gen::position_class(p));
    return t;
  }
};

inline rc::Gen<RopeCase> rope_case_gen(rc::Gen<std::vector<std::int64_t>> positions,
                                       rc::Gen<RopeSpec> spec = gen::rope_spec(256)) {
  return rc::gen::apply(
      [](RopeSpec s, int heads, std::vector<std::int64_t> p, std::uint32_t data) {
        return RopeCase{s, heads, p, data};
      },
      spec, rc::gen::inRange(1, 4), positions, gen::data_seed());
}

/// A RoPE spec whose scaling is forced to one of `kinds`, its parameters drawn as always (NTK
/// kinds widen a rotary_dim of 2 to 4).
inline rc::Gen<RopeSpec> rope_spec_scaled_as(std::vector<RopeScalingKind> kinds) {
  return rc::gen::mapcat(gen::rope_spec(256), [kinds](RopeSpec s) {
    return rc::gen::map(rc::gen::elementOf(kinds), [s](RopeScalingKind k) {
      RopeSpec t = s;
      t.scaling.kind = k;
      if (s.rotary_dim < 4 && (k == RopeScalingKind::ntk || k == RopeScalingKind::dynamic_ntk)) {
        t.rotary_dim = 4;  // NTK's exponent d/(d-2) needs d > 2
        t.head_dim = std::max(t.head_dim, 4);
      }
      return t;
    });
  });
}

/// x rotated by the encoder to `positions` (one per token); failure set on unclean outputs.
inline std::vector<float> encoder_rope(Encoder& enc, DType dt, const RopeCase& c, std::vector<float> x,
                                       const std::vector<std::int64_t>& positions, std::string& failure) {
  enc.run(RopeApply{c.spec, dt, c.heads, positions, x});
  if (failure.empty()) failure = classify_outputs(dt, x, "y");
  return x;
}

/// The other dim of dim k's rotated pair, or k itself when k passes through.
inline std::size_t pair_partner(const RopeSpec& s, std::size_t k) {
  for (int p = 0; p < s.rotary_dim / 2; ++p) {
    const auto [a, b] = ref::rope_pair(s, p);
    if (static_cast<std::size_t>(a) == k) return static_cast<std::size_t>(b);
    if (static_cast<std::size_t>(b) == k) return static_cast<std::size_t>(a);
  }
  return k;
}

/// max over pairs (and pass-through dims) of |a_p - b_p| / (u max(gain |x_p|, min_normal)): gain is
/// the magnitude the rotated pairs carry (YaRN's attention factor per rotation, else 1).
inline WorstOf worst_pair_error(const RopeCase& c, DType dt, const std::vector<float>& x, const std::vector<double>& a,
                                const std::vector<double>& b, double gain) {
  const std::size_t hd = static_cast<std::size_t>(c.spec.head_dim);
  const std::size_t rot = static_cast<std::size_t>(c.spec.rotary_dim);
  const double u = unit_roundoff(dt);
  WorstOf worst;
  for (std::size_t base = 0; base < x.size(); base += hd) {
    const std::size_t token = base / hd / static_cast<std::size_t>(c.heads);
    const std::size_t head = base / hd % static_cast<std::size_t>(c.heads);
    for (int p = 0; p < c.spec.rotary_dim / 2; ++p) {
      const auto [i, j] = ref::rope_pair(c.spec, p);
      const std::size_t ia = base + static_cast<std::size_t>(i), ib = base + static_cast<std::size_t>(j);
      const double scale = std::max(gain * pair_norm(x[ia], x[ib]), min_normal(dt));
      const double err = pair_norm(a[ia] - b[ia], a[ib] - b[ib]) / (u * scale);
      worst.offer(err, [&] {
        return fmt::format("token {} head {} pair {} (dims {},{}) pos={}: ({:.9g}, {:.9g}) vs ({:.9g}, {:.9g})", token,
                           head, p, i, j, c.positions[token], a[ia], a[ib], b[ia], b[ib]);
      });
    }
    for (std::size_t k = rot; k < hd; ++k) {
      const double err =
          std::fabs(a[base + k] - b[base + k]) / (u * std::max(double{std::fabs(x[base + k])}, min_normal(dt)));
      worst.offer(err, [&] { return fmt::format("token {} head {} pass-through dim {}", token, head, k); });
    }
  }
  return worst;
}

inline std::vector<double> as_double(const std::vector<float>& x, double times = 1.0) {
  std::vector<double> y(x.begin(), x.end());
  if (times != 1.0)
    for (double& v : y) v *= times;
  return y;
}

/// x times g on the rotated dims only (the pass-through dims never carry YaRN's factor).
inline std::vector<double> rotated_times(const RopeCase& c, const std::vector<float>& x, double g) {
  std::vector<double> y(x.begin(), x.end());
  const std::size_t hd = static_cast<std::size_t>(c.spec.head_dim), rot = static_cast<std::size_t>(c.spec.rotary_dim);
  for (std::size_t i = 0; i < y.size(); ++i)
    if (i % hd < rot) y[i] *= g;
  return y;
}

}  // namespace pecheck::props
