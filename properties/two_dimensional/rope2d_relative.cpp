// Theorem: 2-D RoPE scores depend only on the 2-D offset: <R_(r1,c1) q, R_(r2,c2) k> is unchanged
// when both tokens move by (t, s), for every base and layout (under a weaker contract, within the
// four calls' contract bounds, each axis a 1-D RoPE at its own coordinate).
// Doc: docs/properties/rope2d.relative.md
#include "harness/runner.hpp"
#include "harness/tolerance.hpp"
#include "properties/catalogue.hpp"
#include "properties/rope/rope_contract_laws.hpp"
#include "properties/two_dimensional/cases_2d.hpp"

namespace pecheck::props {

namespace rope2d_relative_detail {
namespace {

/// rows = {r1, r2, t}, cols = {c1, c2, s}, shifts clipped so every coordinate stays below 2^24; t
/// is never 0 (s may be: a shift along the rows alone is a case of its own).
rc::Gen<Rope2dCase> cases(DType) {
  return rc::gen::map(grid_case_gen(rope2d_spec_gen(), 3), [](Rope2dCase c) {
    c.heads = 1;
    c.rows[2] = gen::nonzero_shift({&c.rows[0], &c.rows[1]}, c.rows[2]);
    c.cols[2] = std::min(c.cols[2], tol::kMaxPosition - std::max(c.cols[0], c.cols[1]));
    return c;
  });
}

/// One score's contract bound, in u |q| |k|: each axis's half-heads are a 1-D RoPE of width d/2 at
/// that axis's coordinates (rope2d.agrees_with_reference judges them so), and the score is the sum
/// of the two axes' scores, so their bounds add, each in its own half-norms.
double score_bound(tol::Contract contract, DType dt, const Rope2dSpec& s, std::int64_t rq, std::int64_t cq,
                   std::int64_t rk, std::int64_t ck, const std::vector<float>& q, const std::vector<float>& k) {
  double sum = 0;
  for (const bool by_column : {false, true}) {
    const auto qa = axis_halves(s, q, by_column), ka = axis_halves(s, k, by_column);
    const measure::ContractBounds bounds(dt, s.axis(by_column));  // Pixtral's column has its own frequencies
    sum += score_contract_bound(contract, dt, s.axis(by_column), bounds, qa.data(), ka.data(), by_column ? cq : rq,
                                by_column ? ck : rk) *
           std::sqrt(dot(qa, qa) * dot(ka, ka));
  }
  const double norms = std::sqrt(dot(q, q) * dot(k, k));
  return norms > 0 ? sum / norms : 0;
}

Outcome check(Encoder& enc, DType dt, const Rope2dCase& c, const RunParams& params) {
  // No shift at all compares each call with itself.
  Outcome o{.bound_u = tol::rope_relative(dt, c.spec.head_dim), .trivial = c.rows[2] == 0 && c.cols[2] == 0};
  const std::size_t d = static_cast<std::size_t>(c.spec.head_dim);
  const auto q = gen::values(c.data, 1, d, dt), k = gen::values(c.data, 2, d, dt);
  const std::int64_t t = c.rows[2], s = c.cols[2];
  Rope2dCase one = c;
  one.rows.resize(1);
  one.cols.resize(1);
  const auto rot = [&](const std::vector<float>& x, std::int64_t r, std::int64_t col) {
    return encoder_rope2d(enc, dt, one, x, {r}, {col}, o.failure);
  };
  const double s0 = dot(rot(q, c.rows[0], c.cols[0]), rot(k, c.rows[1], c.cols[1]));
  const double s1 = dot(rot(q, c.rows[0] + t, c.cols[0] + s), rot(k, c.rows[1] + t, c.cols[1] + s));
  if (!o.failure.empty()) return o;
  o.error_u = std::fabs(s0 - s1) / (unit_roundoff(dt) * std::sqrt(dot(q, q) * dot(k, k)));
  if (params.contract != tol::Contract::exact) {
    // Two scores whose exact values are equal: their bounds added, and the dot products in double.
    const auto& r = c.rows;
    const auto& col = c.cols;
    o.bound_u = score_bound(params.contract, dt, c.spec, r[0], col[0], r[1], col[1], q, k) +
                score_bound(params.contract, dt, c.spec, r[0] + t, col[0] + s, r[1] + t, col[1] + s, q, k) +
                2 * c.spec.head_dim * tol::kU64 / unit_roundoff(dt);
    // A bound past any two unit scores' distance: nothing could have failed.
    o.trivial = o.trivial || o.bound_u >= 2 / unit_roundoff(dt);
  }
  o.where = fmt::format("score {:.9g} at the original positions, {:.9g} after moving both by ({}, {})", s0, s1, t, s);
  return o;
}

}  // namespace
}  // namespace rope2d_relative_detail

Property rope2d_relative() {
  using namespace rope2d_relative_detail;
  return make_property<Rope2dCase>(
      {.id = "rope2d.relative",
       .statement =
           "Axial RoPE scores depend only on (r1 - r2, c1 - c2): moving both tokens by (t, s) changes nothing.",
       .family = Family::rope2d,
       .op = Op::rope2d_apply,
       .pinnable = true},
      cases, check);
}

}  // namespace pecheck::props
