// Theorem: every entry of the encoder's 2-D sinusoid is within E = 2u of the exact value: the row's
// 1-D sinusoid of width d/2 in the first half, the column's in the second, every coordinate < 2^24.
// Doc: docs/properties/sinusoidal2d.agrees_with_reference.md
#include "harness/runner.hpp"
#include "harness/tolerance.hpp"
#include "properties/catalogue.hpp"
#include "properties/two_dimensional/cases_2d.hpp"
#include "reference/encodings_2d.hpp"

namespace pecheck::props {

namespace sinusoidal2d_agrees_with_reference_detail {
namespace {

rc::Gen<Sinusoidal2dCase> cases(DType) { return grid_case_gen(sinusoidal2d_spec_gen(), 3); }

Outcome check(Encoder& enc, DType dt, const Sinusoidal2dCase& c) {
  Outcome o{.bound_u = tol::sinusoidal_entry(dt)};
  const std::size_t d = static_cast<std::size_t>(c.spec.d_model);
  std::vector<float> out = poisoned(c.n() * d);
  enc.run(Sinusoidal2dTable{c.spec, dt, c.rows, c.cols, out});
  o.failure = classify_outputs(dt, out, "pe");
  if (!o.failure.empty()) return o;
  const double u = unit_roundoff(dt);
  WorstOf worst;
  const std::vector<Real> freqs = ref::sinusoidal_frequencies<Real>(c.spec.axis());
  for (std::size_t t = 0; t < c.n(); ++t) {
    const auto exact = ref::sinusoidal2d_row<Real>(c.spec, c.rows[t], c.cols[t], freqs);
    for (std::size_t k = 0; k < d; ++k) {
      const double err = std::fabs(ref::to_double(Real(out[t * d + k]) - exact[k])) / u;
      worst.offer(err, [&] {
        return fmt::format("(row {}, col {}) dim {} ({} half): got {}, exact {:.9g}", c.rows[t], c.cols[t], k,
                           k < d / 2 ? "row" : "column", out[t * d + k], ref::to_double(exact[k]));
      });
    }
  }
  return worst.store(o);
}

}  // namespace
}  // namespace sinusoidal2d_agrees_with_reference_detail

Property sinusoidal2d_agrees_with_reference() {
  using namespace sinusoidal2d_agrees_with_reference_detail;
  return make_property<Sinusoidal2dCase>(
      {.id = "sinusoidal2d.agrees_with_reference",
       .statement =
           "Every 2-D sinusoid entry is within 2u of the row's sinusoid (first half) and the column's (second).",
       .family = Family::sinusoidal2d,
       .op = Op::sinusoidal2d_table},
      cases, check);
}

}  // namespace pecheck::props
