// Theorem: R_m is orthogonal: |R_m x| = |x| pair by pair, R_0 = I exactly, and the dims past
// rotary_dim pass through bit-identical.
// Doc: docs/properties/rope.orthogonal.md
#include <bit>

#include "harness/flush_to_zero.hpp"
#include "harness/runner.hpp"
#include "harness/tolerance.hpp"
#include "properties/catalogue.hpp"
#include "properties/rope/rope_cases.hpp"

namespace pecheck::props {

namespace rope_orthogonal_detail {
namespace {

/// Token 0 at position 0 (R_0 = I); the other tokens anywhere.
rc::Gen<RopeCase> cases(DType) {
  return rc::gen::map(rope_case_gen(gen::positions(3)), [](RopeCase c) {
    c.positions[0] = 0;
    return c;
  });
}

Outcome check(Encoder& enc, DType dt, const RopeCase& c, const RunParams& params) {
  // | |y_p| - m |x_p| | <= |y_p - m R x_p|: the agreement bound bounds the norm too. A wrong angle
  // keeps the norm, so under a weaker contract the norm is held to dtype-trig's bound (as the dump
  // reader holds it).
  const bool exact = params.contract == tol::Contract::exact;
  Outcome o{.bound_u = exact ? tol::rope_pair(dt) : tol::rope_pair_dtype_trig(dt)};
  const auto x = gen::edge_values(c.data, 1, c.size(), dt, static_cast<std::size_t>(c.spec.head_dim));
  const auto y = encoder_rope(enc, dt, c, x, c.positions, o.failure);
  if (!o.failure.empty()) return o;
  const std::size_t hd = static_cast<std::size_t>(c.spec.head_dim);
  const std::size_t per_token = hd * static_cast<std::size_t>(c.heads);
  WorstOf worst;
  for (std::size_t base = 0; base < x.size(); base += hd) {
    const std::size_t token = base / per_token;
    for (std::size_t k = 0; k < hd; ++k) {
      const bool pass_through = k >= static_cast<std::size_t>(c.spec.rotary_dim);
      // (2) R_0 = I exactly (as values: x1 cos 0 - x2 sin 0 turns -0 into +0) and (3) pass-through
      // dims bit-identical: no rounding allowed in either.
      const bool same_bits = std::bit_cast<std::uint32_t>(y[base + k]) == std::bit_cast<std::uint32_t>(x[base + k]);
      const bool identity_at_0 = token == 0 && !pass_through && c.spec.magnitude() == 1.0;
      if ((pass_through && !same_bits) || (identity_at_0 && y[base + k] != x[base + k])) {
        o.failure = fmt::format("{} dim {} of token {} changed: {} -> {}",
                                token == 0 ? "(2) R_0 != I:" : "(3) pass-through", k, token, x[base + k], y[base + k]);
        return o;
      }
    }
    // (1) each pair keeps its norm.
    for (int p = 0; p < c.spec.rotary_dim / 2; ++p) {
      const auto [i, j] = ref::rope_pair(c.spec, p);
      const double nx = pair_norm(x[base + static_cast<std::size_t>(i)], x[base + static_cast<std::size_t>(j)]);
      const double ny = pair_norm(y[base + static_cast<std::size_t>(i)], y[base + static_cast<std::size_t>(j)]);
      const double m = c.spec.magnitude();  // |R_m x_p| = m |x_p| with YaRN's factor m, else 1
      const double err = std::max(std::fabs(ny - m * nx) - gen::flushed_pair_slack(), 0.0) /
                         (unit_roundoff(dt) * std::max(m * nx, min_normal(dt)));
      worst.offer(err, [&] {
        return fmt::format("(1) token {} pair {} pos={}: |x_p| = {:.9g}, |y_p| = {:.9g}", token, p, c.positions[token],
                           nx, ny);
      });
    }
  }
  return worst.store(o);
}

}  // namespace
}  // namespace rope_orthogonal_detail

Property rope_orthogonal() {
  using namespace rope_orthogonal_detail;
  return make_property<RopeCase>(
      {.id = "rope.orthogonal",
       .statement =
           "|R_m x| = |x| pair by pair, R_0 = I exactly, pass-through dims of partial rotary are bit-identical.",
       .family = Family::rope,
       .op = Op::rope_apply,
       .pinnable = true,
       .calls_at_case_positions = true},
      cases, check);
}

}  // namespace pecheck::props
