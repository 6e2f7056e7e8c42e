// Theorem: <R_m q, R_n k> depends only on m - n: shifting both positions by t leaves the score
// unchanged, for every layout, base and rotary_dim (under a weaker contract, within the sum of the
// four calls' contract bounds).
// Doc: docs/properties/rope.relative.md
#include "harness/runner.hpp"
#include "harness/tolerance.hpp"
#include "properties/catalogue.hpp"
#include "properties/rope/rope_cases.hpp"
#include "properties/rope/rope_contract_laws.hpp"

namespace pecheck::props {

namespace rope_relative_detail {
namespace {

/// positions = {m, n, t}, with m + t and n + t in [0, 2^24) and t != 0; one head.
rc::Gen<RopeCase> cases(DType) {
  return rc::gen::map(rope_case_gen(gen::positions(3)), [](RopeCase c) {
    c.heads = 1;
    c.positions[2] = gen::nonzero_shift({&c.positions[0], &c.positions[1]}, c.positions[2]);
    return c;
  });
}

double norm(const std::vector<float>& a) { return std::sqrt(dot(a, a)); }

Outcome check(Encoder& enc, DType dt, const RopeCase& c, const RunParams& params) {
  // A shift of 0 compares each call with itself: nothing could fail.
  Outcome o{.bound_u = tol::rope_relative(dt, c.spec.head_dim), .trivial = c.positions[2] == 0};
  const std::size_t d = static_cast<std::size_t>(c.spec.head_dim);
  const auto q = gen::values(c.data, 1, d, dt), k = gen::values(c.data, 2, d, dt);
  const std::int64_t m = c.positions[0], n = c.positions[1], t = c.positions[2];
  const auto qm = encoder_rope(enc, dt, c, q, {m}, o.failure), kn = encoder_rope(enc, dt, c, k, {n}, o.failure);
  const auto qmt = encoder_rope(enc, dt, c, q, {m + t}, o.failure),
             knt = encoder_rope(enc, dt, c, k, {n + t}, o.failure);
  if (!o.failure.empty()) return o;
  if (params.contract != tol::Contract::exact) {
    // Under a weaker contract each call is within its pairs' bounds at its own position.
    const measure::ContractBounds bounds(dt, c.spec);
    o.bound_u = two_scores_contract_bound(params.contract, dt, c.spec, bounds, q.data(), k.data(), m, n, m + t, n + t);
    o.trivial = o.trivial || o.bound_u >= 2 / unit_roundoff(dt);  // no pair of unit scores lies further apart
  }
  const double s1 = dot(qm, kn), s2 = dot(qmt, knt);
  const double g = c.spec.magnitude();  // YaRN scales each rotated vector by g
  o.error_u = std::fabs(s1 - s2) / (unit_roundoff(dt) * g * g * norm(q) * norm(k));
  o.where = fmt::format("<R_m q, R_n k> = {:.9g}, <R_m+t q, R_n+t k> = {:.9g}", s1, s2);
  return o;
}

}  // namespace
}  // namespace rope_relative_detail

Property rope_relative() {
  using namespace rope_relative_detail;
  return make_property<RopeCase>(
      {.id = "rope.relative",
       .statement = "<R_m q, R_n k> depends only on m - n: shifting both positions leaves the score unchanged.",
       .family = Family::rope,
       .op = Op::rope_apply,
       .convention_free = true,
       .pinnable = true},
      cases, check);
}

}  // namespace pecheck::props
