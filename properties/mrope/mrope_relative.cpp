// Theorem: <R_a q, R_b k> for M-RoPE depends only on the 3-D offset a - b: shifting the temporal,
// height and width positions of both tokens by any (dt, dh, dw) leaves the score unchanged, for
// every section, assignment, layout and base (under a weaker contract, within the four calls'
// contract bounds, each pair at its own axis's positions).
// Doc: docs/properties/mrope.relative.md
#include "harness/runner.hpp"
#include "harness/tolerance.hpp"
#include "properties/catalogue.hpp"
#include "properties/mrope/mrope_cases.hpp"
#include "properties/rope/rope_contract_laws.hpp"

namespace pecheck::props {

namespace mrope_relative_detail {
namespace {

/// Per axis: positions {a, b, shift}, with a + shift and b + shift below 2^24; one head. The
/// temporal shift is never 0 (the others may be: a shift along some axes only is a case of its own).
rc::Gen<MropeCase> cases(DType) {
  return rc::gen::map(mrope_case_gen(3), [](MropeCase c) {
    c.heads = 1;
    for (auto& p : c.axes) p[2] = std::min(p[2], tol::kMaxPosition - std::max(p[0], p[1]));
    c.axes[0][2] = gen::nonzero_shift({&c.axes[0][0], &c.axes[0][1]}, c.axes[0][2]);
    return c;
  });
}

/// Token `which` (0 or 1) of every axis, shifted by each axis's shift when `shifted`.
std::array<std::vector<std::int64_t>, 3> at(const MropeCase& c, std::size_t which, bool shifted) {
  std::array<std::vector<std::int64_t>, 3> p;
  for (std::size_t a = 0; a < 3; ++a) p[a] = {c.axes[a][which] + (shifted ? c.axes[a][2] : 0)};
  return p;
}

Outcome check(Encoder& enc, DType dt, const MropeCase& c, const RunParams& params) {
  // No shift on any axis compares each call with itself.
  Outcome o{.bound_u = tol::rope_relative(dt, c.spec.head_dim),
            .trivial = c.axes[0][2] == 0 && c.axes[1][2] == 0 && c.axes[2][2] == 0};
  const std::size_t d = static_cast<std::size_t>(c.spec.head_dim);
  const auto q = gen::values(c.data, 1, d, dt), k = gen::values(c.data, 2, d, dt);
  const auto qa = encoder_mrope(enc, dt, c, q, at(c, 0, false), o.failure);
  const auto kb = encoder_mrope(enc, dt, c, k, at(c, 1, false), o.failure);
  const auto qas = encoder_mrope(enc, dt, c, q, at(c, 0, true), o.failure);
  const auto kbs = encoder_mrope(enc, dt, c, k, at(c, 1, true), o.failure);
  if (!o.failure.empty()) return o;
  const double s1 = dot(qa, kb), s2 = dot(qas, kbs);
  o.error_u = std::fabs(s1 - s2) / (unit_roundoff(dt) * std::sqrt(dot(q, q) * dot(k, k)));
  o.where = fmt::format("<R_a q, R_b k> = {:.9g}, <R_a+s q, R_b+s k> = {:.9g}", s1, s2);
  if (params.contract != tol::Contract::exact) {
    // rope.relative's contract bound, each pair at the positions of its section's axis; two scores
    // with equal exact values: their bounds added, and the dot products in double.
    const RopeSpec one_d = c.spec.rope();
    const measure::ContractBounds bounds(dt, one_d);
    const auto score = [&](std::size_t which, bool shifted) {
      return
          [&c, pos = at(c, which, shifted)](int p) { return pos[static_cast<std::size_t>(mrope_axis(c.spec, p))][0]; };
    };
    o.bound_u =
        score_contract_bound(params.contract, dt, one_d, bounds, q.data(), k.data(), score(0, false), score(1, false)) +
        score_contract_bound(params.contract, dt, one_d, bounds, q.data(), k.data(), score(0, true), score(1, true)) +
        2 * c.spec.head_dim * tol::kU64 / unit_roundoff(dt);
    o.trivial = o.trivial || o.bound_u >= 2 / unit_roundoff(dt);  // past any two unit scores' distance
  }
  return o;
}

}  // namespace
}  // namespace mrope_relative_detail

Property mrope_relative() {
  using namespace mrope_relative_detail;
  return make_property<MropeCase>(
      {.id = "mrope.relative",
       .statement = "<R_a q, R_b k> depends only on the 3-D offset a - b: shifting every axis of both tokens leaves "
                    "the score unchanged.",
       .family = Family::mrope,
       .op = Op::mrope_apply,
       .convention_free = true,
       .pinnable = true},
      cases, check);
}

}  // namespace pecheck::props
