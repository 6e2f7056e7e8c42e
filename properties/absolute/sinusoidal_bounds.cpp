// Theorem: every entry satisfies |PE| <= 1 exactly, and every row has |PE(p)|^2 = d/2 (fairseq's
// padding row, all zeros, has 0).
// Doc: docs/properties/sinusoidal.bounds.md
#include "harness/runner.hpp"
#include "harness/tolerance.hpp"
#include "properties/catalogue.hpp"
#include "properties/absolute/sinusoidal_cases.hpp"

namespace pecheck::props {

namespace sinusoidal_bounds_detail {
namespace {

rc::Gen<SinusoidalCase> cases(DType) {
  return rc::gen::apply(
      [](SinusoidalSpec s, std::vector<std::int64_t> p) {
        return SinusoidalCase{s, p};
      },
      sinusoidal_spec_gen(), gen::positions(4));
}

Outcome check(Encoder& enc, DType dt, const SinusoidalCase& c) {
  Outcome o{.bound_u = tol::sinusoidal_norm(dt, c.spec.d_model)};
  const auto rows = encoder_rows(enc, dt, c.spec, c.positions, o.failure);
  if (!o.failure.empty()) return o;
  const std::size_t d = static_cast<std::size_t>(c.spec.d_model);
  WorstOf worst;
  for (std::size_t r = 0; r < c.positions.size(); ++r) {
    double norm2 = 0;
    for (std::size_t k = 0; k < d; ++k) {
      const float v = rows[r * d + k];
      // (1) |PE| <= 1 holds exactly: +-1 are values of every dtype, so rounding cannot exceed it.
      if (std::fabs(v) > 1.0f) {
        o.failure = fmt::format("(1) |PE| = {} > 1 at pos={} dim={}", v, c.positions[r], k);
        return o;
      }
      norm2 += double{v} * v;
    }
    // (2) |PE(p)|^2 = d/2: each (sin, cos) pair has unit norm; the padding row is zeros (a pinned
    // fairseq convention puts it among the rows asked for).
    const double want = c.spec.is_padding(c.positions[r]) ? 0.0 : static_cast<double>(d) / 2;
    const double err = std::fabs(norm2 - want) / unit_roundoff(dt);
    worst.offer(err,
                [&] { return fmt::format("(2) pos={}: |PE|^2 = {:.9g}, expected {}", c.positions[r], norm2, want); });
  }
  return worst.store(o);
}

}  // namespace
}  // namespace sinusoidal_bounds_detail

Property sinusoidal_bounds() {
  using namespace sinusoidal_bounds_detail;
  return make_property<SinusoidalCase>(
      {.id = "sinusoidal.bounds",
       .statement = "Every entry has |PE| <= 1 exactly and every row has |PE(p)|^2 = d/2 (the padding row: 0).",
       .family = Family::sinusoidal,
       .op = Op::sinusoidal_table,
       .convention_free = true,
       .pinnable = true},
      cases, check);
}

}  // namespace pecheck::props
