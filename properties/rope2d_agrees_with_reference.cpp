// Theorem: every pair rotated by the encoder's 2-D RoPE is within E = 2u |x_p| (normwise) of the
// exact rotation: the first half of each head by its row, the second half by its column.
// Doc: docs/properties/rope2d.agrees_with_reference.md
#include "harness/runner.hpp"
#include "harness/tolerance.hpp"
#include "properties/cases_2d.hpp"
#include "properties/catalogue.hpp"
#include "reference/encodings_2d.hpp"

namespace pecheck::props {

namespace rope2d_agrees_with_reference_detail {
namespace {

rc::Gen<Rope2dCase> cases(DType) { return grid_case_gen(rope2d_spec_gen(), 3); }

Outcome check(Encoder& enc, DType dt, const Rope2dCase& c) {
  Outcome o{.bound_u = tol::rope_pair(dt)};
  const std::size_t hd = static_cast<std::size_t>(c.spec.head_dim), H = static_cast<std::size_t>(c.heads);
  const auto x = gen::edge_values(c.data, 1, c.n() * H * hd, dt, hd);
  const auto y = encoder_rope2d(enc, dt, c, x, c.rows, c.cols, o.failure);
  if (!o.failure.empty()) return o;
  auto exact = to_real(x);
  ref::rope2d_apply<Real>(c.spec, c.heads, c.rows, c.cols, std::span<Real>(exact));
  const double u = unit_roundoff(dt);
  const RopeSpec axis = c.spec.axis();
  WorstOf worst;
  for (std::size_t base = 0; base < x.size(); base += hd)
    for (std::size_t half : {std::size_t{0}, hd / 2})
      for (int p = 0; p < axis.rotary_dim / 2; ++p) {
        const auto [i, j] = ref::rope_pair(axis, p);
        const std::size_t a = base + half + static_cast<std::size_t>(i), b = base + half + static_cast<std::size_t>(j);
        const double scale = std::max(pair_norm(x[a], x[b]), min_normal(dt));
        const double err = pair_norm(y[a] - ref::to_double(exact[a]), y[b] - ref::to_double(exact[b])) / (u * scale);
        worst.offer(err, [&] {
          const std::size_t t = base / hd / H;
          return fmt::format("token {} (row {}, col {}) {} half, pair {}: ({:.9g}, {:.9g}) vs exact ({:.9g}, {:.9g})",
                             t, c.rows[t], c.cols[t], half == 0 ? "row" : "column", p, y[a], y[b],
                             ref::to_double(exact[a]), ref::to_double(exact[b]));
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
       .statement = "Axial RoPE rotates each head's first half by its row and second half by its column, within 2u.",
       .family = Family::rope2d,
       .op = Op::rope2d_apply},
      cases, check);
}

}  // namespace pecheck::props
