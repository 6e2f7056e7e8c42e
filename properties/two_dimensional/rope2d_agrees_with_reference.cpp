// Theorem: every pair rotated by the encoder's 2-D RoPE is within E = 2u |x_p| (normwise) of the
// exact rotation: the row's pairs by its row, the column's by its column (per_half: the first and
// second half-heads; whole_head: pairs p and d/4 + p of one RoPE over the head).
// Doc: docs/properties/rope2d.agrees_with_reference.md
#include "harness/runner.hpp"
#include "harness/tolerance.hpp"
#include "properties/catalogue.hpp"
#include "properties/rope/rope_cases.hpp"
#include "properties/two_dimensional/cases_2d.hpp"
#include "reference/encodings_2d.hpp"

namespace pecheck::props {

namespace rope2d_agrees_with_reference_detail {
namespace {

rc::Gen<Rope2dCase> cases(DType) { return grid_case_gen(rope2d_spec_gen(), 3); }

/// Under a weaker contract (HF's vision towers form their angles in fp32): each axis judged as 1-D
/// RoPE is (rope_cases.hpp under_contract), pair by pair at its own bound; the case reports the
/// axis whose worst pair comes closest to its bound.
Outcome under(tol::Contract contract, DType dt, const Rope2dCase& c, const std::vector<float>& x,
              const std::vector<float>& y, const std::vector<double>& exact) {
  Outcome worst;
  double worst_ratio = -1;
  for (const bool by_column : {false, true}) {
    const std::vector<std::int64_t>& at = by_column ? c.cols : c.rows;
    Outcome o = under_contract(contract, dt, c.spec.axis(by_column), c.heads, axis_halves(c.spec, x, by_column),
                               axis_halves(c.spec, y, by_column), axis_halves(c.spec, exact, by_column), 1.0,
                               [&](std::size_t token, int) { return at[token]; });
    const double ratio = o.error_u / o.bound_u;
    if (ratio > worst_ratio || std::isnan(ratio)) {
      worst_ratio = ratio;
      o.where =
          fmt::format("the {} axis (its half-head in the per_half frame): {}", by_column ? "column" : "row", o.where);
      worst = std::move(o);
    }
  }
  return worst;
}

Outcome check(Encoder& enc, DType dt, const Rope2dCase& c, const RunParams& params) {
  Outcome o{.bound_u = tol::rope_pair(dt)};
  const std::size_t hd = static_cast<std::size_t>(c.spec.head_dim), H = static_cast<std::size_t>(c.heads);
  const auto x = gen::edge_values(c.data, 1, c.n() * H * hd, dt, hd);
  const auto y = encoder_rope2d(enc, dt, c, x, c.rows, c.cols, o.failure);
  if (!o.failure.empty()) return o;
  auto exact = to_real(x);
  ref::rope2d_apply<Real>(c.spec, c.heads, c.rows, c.cols, std::span<Real>(exact));
  if (params.contract != tol::Contract::exact) return under(params.contract, dt, c, x, y, to_doubles(exact));
  const double u = unit_roundoff(dt);
  WorstOf worst;
  for (std::size_t base = 0; base < x.size(); base += hd)
    for (const bool by_column : {false, true})
      for (int p = 0; p < c.spec.head_dim / 4; ++p) {
        const auto [i, j] = ref::rope2d_pair(c.spec, by_column, p);
        const std::size_t a = base + static_cast<std::size_t>(i), b = base + static_cast<std::size_t>(j);
        const double scale = std::max(pair_norm(x[a], x[b]), min_normal(dt));
        const double err = pair_norm(y[a] - ref::to_double(exact[a]), y[b] - ref::to_double(exact[b])) / (u * scale);
        worst.offer(err, [&, i = i, j = j] {
          const std::size_t t = base / hd / H;
          return fmt::format(
              "token {} (row {}, col {}) {} pair {} (dims {}, {}): ({:.9g}, {:.9g}) vs exact ({:.9g}, {:.9g})", t,
              c.rows[t], c.cols[t], by_column ? "column" : "row", p, i, j, y[a], y[b], ref::to_double(exact[a]),
              ref::to_double(exact[b]));
        });
      }
  return worst.store(o);
}

}  // namespace
}  // namespace rope2d_agrees_with_reference_detail

Property rope2d_agrees_with_reference() {
  using namespace rope2d_agrees_with_reference_detail;
  return make_property<Rope2dCase>(
      {.id = "rope2d.agrees_with_reference",
       .statement = "Axial RoPE rotates the row's pairs by its row and the column's by its column, within 2u.",
       .family = Family::rope2d,
       .op = Op::rope2d_apply,
       .pinnable = true},
      cases, check);
}

}  // namespace pecheck::props
