// Cases and measurements shared by the RoPE theorems.
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "harness/generators.hpp"
#include "harness/measure.hpp"
#include "harness/rope_measure.hpp"
#include "harness/runner.hpp"
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
                               std::string(layout_name(spec.layout)),
                               "scaling:" + std::string(scaling_name(spec.scaling.kind))};
    for (auto p : positions) t.push_back(gen::position_class(p));
    return t;
  }
};

/// A spec (any scaling unless `spec` says otherwise), 1 to 3 heads, the positions and a data seed.
rc::Gen<RopeCase> rope_case_gen(rc::Gen<std::vector<std::int64_t>> positions,
                                rc::Gen<RopeSpec> spec = gen::rope_spec(256));

/// A RoPE spec whose scaling is forced to one of `kinds`, its parameters drawn as always (NTK
/// kinds widen a rotary_dim of 2 to 4).
rc::Gen<RopeSpec> rope_spec_scaled_as(std::vector<RopeScalingKind> kinds);

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

/// Pair e's two values in a and in b, "(a_i, a_j) vs (b_i, b_j)": every failure line shows them.
inline std::string pair_values(const RopeSpec& s, int heads, const measure::PairError& e, const std::vector<double>& a,
                               const std::vector<double>& b) {
  const std::size_t head = (e.token * static_cast<std::size_t>(heads) + e.head) * static_cast<std::size_t>(s.head_dim);
  const std::size_t ia = head + static_cast<std::size_t>(e.i), ib = head + static_cast<std::size_t>(e.j);
  return fmt::format("({:.9g}, {:.9g}) vs ({:.9g}, {:.9g})", a[ia], a[ib], b[ia], b[ib]);
}

/// max over pairs of |a_p - b_p| / (u max(gain |x_p|, min_normal)) (harness/rope_measure.hpp):
/// gain is the magnitude the rotated pairs carry (YaRN's attention factor per rotation, else 1). A
/// pass-through dim where a differs from b at all is the worst (+inf). x, a and b are (tokens,
/// heads, head_dim); `at(token)` renders the token's position(s) for the report.
template <class At>
WorstOf worst_pair_error(const RopeSpec& s, int heads, DType dt, const std::vector<float>& x,
                         const std::vector<double>& a, const std::vector<double>& b, double gain, At at) {
  WorstOf worst;
  measure::rope_errors(
      s, heads, dt, x, a, b, gain,
      [&](const measure::PairError& e) {
        worst.offer(e.error_u, [&] {
          return fmt::format("token {} head {} pair {} (dims {},{}) {}: {}", e.token, e.head, e.pair, e.i, e.j,
                             at(e.token), pair_values(s, heads, e, a, b));
        });
      },
      [&](const measure::ChangedPassThrough& c) {
        worst.offer(std::numeric_limits<double>::infinity(), [&] {
          return fmt::format("token {} head {} pass-through dim {} changed: {:.9g} -> {:.9g}", c.token, c.head, c.dim,
                             c.expected, c.got);
        });
      });
  return worst;
}

inline WorstOf worst_pair_error(const RopeCase& c, DType dt, const std::vector<float>& x, const std::vector<double>& a,
                                const std::vector<double>& b, double gain) {
  return worst_pair_error(c.spec, c.heads, dt, x, a, b, gain,
                          [&](std::size_t token) { return fmt::format("pos={}", c.positions[token]); });
}

/// The pair of a vs b (tokens, heads, head_dim; doubles) that comes closest to its own bound:
/// `bound_of(token, pair)` in u, `label(token, pair, bound)` renders where it sits. The case reports
/// that pair's error and bound; a changed pass-through dim is the worst (+inf).
template <class BoundOf, class Label>
Outcome against_pair_bounds(const RopeSpec& s, int heads, DType dt, const std::vector<float>& x,
                            const std::vector<double>& a, const std::vector<double>& b, double gain, BoundOf bound_of,
                            Label label) {
  Outcome o;
  WorstOf worst;  // of error / bound
  double error = 0, bound = bound_of(std::size_t{0}, 0);
  measure::rope_errors(
      s, heads, dt, x, a, b, gain,
      [&](const measure::PairError& e) {
        const double pb = bound_of(e.token, e.pair);
        worst.offer(e.error_u / pb, [&] {
          error = e.error_u, bound = pb;
          return fmt::format("token {} head {} pair {} (dims {},{}) {}: {}", e.token, e.head, e.pair, e.i, e.j,
                             label(e.token, e.pair, pb), pair_values(s, heads, e, a, b));
        });
      },
      [&](const measure::ChangedPassThrough& p) {
        worst.offer(std::numeric_limits<double>::infinity(), [&] {
          error = std::numeric_limits<double>::infinity();
          return fmt::format("token {} head {} pass-through dim {} changed: {:.9g} -> {:.9g}", p.token, p.head, p.dim,
                             p.expected, p.got);
        });
      });
  o.error_u = error, o.bound_u = bound, o.where = worst.where;
  return o;
}

/// Under a weaker accuracy contract (RunParams::contract: dtype-trig, fp32-angles) each pair
/// has its own bound, growing with the angle it turns (harness/tolerance.hpp): the case reports the
/// pair that comes closest to its bound, its error and that bound. `position(token, pair)` is the
/// position the pair turns by (one per token for RoPE; the pair's axis's for M-RoPE).
template <class Position>
Outcome under_contract(tol::Contract contract, DType dt, const RopeSpec& s, int heads, const std::vector<float>& x,
                       const std::vector<float>& y, const std::vector<double>& exact, double gain, Position position) {
  const measure::ContractBounds bounds(dt, s);
  return against_pair_bounds(
      s, heads, dt, x, std::vector<double>(y.begin(), y.end()), exact, gain,
      [&](std::size_t token, int pair) { return bounds.at(contract, pair, position(token, pair)); },
      [&](std::size_t token, int pair, double b) {
        return fmt::format("pos={}, the {} contract's bound there {:.4g} u", position(token, pair),
                           tol::contract_name(contract), b);
      });
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

namespace pecheck {
// The case type erased once, in properties/rope/rope_cases.cpp (see erased() in harness/runner.hpp).
extern template rc::Gen<AnyCase> erased(rc::Gen<props::RopeCase>);
}  // namespace pecheck
