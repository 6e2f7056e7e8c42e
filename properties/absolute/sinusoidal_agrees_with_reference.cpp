// Theorem: every entry of the encoder's sinusoidal table is within E = 2u of the exact
// sin/cos(pos * frequency_i) placed by its layout (Vaswani's or fairseq's frequencies, fairseq's
// padding row exactly zero), for every position below 2^24.
// Doc: docs/properties/sinusoidal.agrees_with_reference.md
#include "harness/runner.hpp"
#include "harness/tolerance.hpp"
#include "properties/catalogue.hpp"
#include "properties/absolute/sinusoidal_cases.hpp"
#include "reference/sinusoidal.hpp"

namespace pecheck::props {

namespace sinusoidal_agrees_with_reference_detail {
namespace {

/// fairseq specs get its padding row (padding_idx 1, or another small index) half the time, and
/// then the padding position is among the rows asked for.
rc::Gen<SinusoidalCase> cases(DType) {
  return rc::gen::apply(
      [](SinusoidalSpec s, std::vector<std::int64_t> p, int padding) {
        if (s.frequencies == SinusoidalFrequencies::fairseq && padding >= 0) {
          s.padding_idx = padding;
          p.back() = padding;
        }
        return SinusoidalCase{s, p};
      },
      sinusoidal_spec_gen(), gen::positions(3),
      rc::gen::weightedOneOf<int>({{2, rc::gen::just(-1)}, {1, rc::gen::just(1)}, {1, rc::gen::element(0, 2, 3)}}));
}

/// Under a weaker contract (RunParams::contract, as RoPE's: a table of fp32 sin/cos, or of
/// fp32 angles) each entry has its own bound, growing with its angle: the case reports the entry
/// that comes closest to its bound.
Outcome under_contract(tol::Contract contract, DType dt, const SinusoidalCase& c, const std::vector<float>& rows) {
  Outcome o;
  const double u = unit_roundoff(dt);
  const std::size_t d = static_cast<std::size_t>(c.spec.d_model);
  const std::vector<Real> freqs = ref::sinusoidal_frequencies<Real>(c.spec);
  WorstOf worst;  // of error / bound
  double error = 0, bound = tol::sinusoidal_entry_contract(contract, dt, 0, 0);
  for (std::size_t r = 0; r < c.positions.size(); ++r) {
    const auto exact = ref::sinusoidal_row<Real>(c.spec, c.positions[r], freqs);
    for (int i = 0; i < c.spec.d_model / 2; ++i) {
      const double angle =
          std::fabs(static_cast<double>(c.positions[r]) * ref::to_double(freqs[static_cast<std::size_t>(i)]));
      const double exponent = std::fabs(2.0 * i / c.spec.frequency_width() * std::log(c.spec.base));
      // The padding row is zeros in every contract: nothing is computed there to round.
      const double b = c.spec.is_padding(c.positions[r])
                           ? tol::sinusoidal_entry(dt)
                           : tol::sinusoidal_entry_contract(contract, dt, angle, exponent);
      const auto [si, ci] = ref::sinusoidal_slots(c.spec, i);
      for (const int k : {si, ci}) {
        const std::size_t at = r * d + static_cast<std::size_t>(k);
        const double err = std::fabs(ref::to_double(Real(rows[at]) - exact[static_cast<std::size_t>(k)])) / u;
        worst.offer(err / b, [&] {
          error = err, bound = b;
          return fmt::format("pos={} dim={} (got {}, exact {:.9g}), the {} contract's bound there {:.4g} u",
                             c.positions[r], k, rows[at], ref::to_double(exact[static_cast<std::size_t>(k)]),
                             tol::contract_name(contract), b);
        });
      }
    }
  }
  o.error_u = error, o.bound_u = bound, o.where = worst.where;
  return o;
}

Outcome check(Encoder& enc, DType dt, const SinusoidalCase& c, const RunParams& params) {
  Outcome o{.bound_u = tol::sinusoidal_entry(dt)};
  const auto rows = encoder_rows(enc, dt, c.spec, c.positions, o.failure);
  if (!o.failure.empty()) return o;
  if (params.contract != tol::Contract::exact) return under_contract(params.contract, dt, c, rows);
  const double u = unit_roundoff(dt);
  const std::size_t d = static_cast<std::size_t>(c.spec.d_model);
  WorstOf worst;
  const std::vector<Real> freqs = ref::sinusoidal_frequencies<Real>(c.spec);
  for (std::size_t r = 0; r < c.positions.size(); ++r) {
    const auto exact = ref::sinusoidal_row<Real>(c.spec, c.positions[r], freqs);
    for (std::size_t k = 0; k < d; ++k) {
      const double err = std::fabs(ref::to_double(Real(rows[r * d + k]) - exact[k])) / u;
      worst.offer(err, [&] {
        return fmt::format("pos={} dim={} (got {}, exact {:.9g})", c.positions[r], k, rows[r * d + k],
                           ref::to_double(exact[k]));
      });
    }
  }
  return worst.store(o);
}

}  // namespace
}  // namespace sinusoidal_agrees_with_reference_detail

Property sinusoidal_agrees_with_reference() {
  using namespace sinusoidal_agrees_with_reference_detail;
  return make_property<SinusoidalCase>(
      {.id = "sinusoidal.agrees_with_reference",
       .statement = "Every table entry is within 2u of the exact sinusoid, at every position below 2^24.",
       .family = Family::sinusoidal,
       .op = Op::sinusoidal_table,
       .pinnable = true},
      cases, check);
}

}  // namespace pecheck::props
