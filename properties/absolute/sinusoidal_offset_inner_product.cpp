// Theorem: PE(p) . PE(q) depends only on p - q (the Gram matrix of the table is Toeplitz):
// PE(p) . PE(q) = PE(p + t) . PE(q + t) (under a weaker contract, within the four rows' contract
// bounds).
// Doc: docs/properties/sinusoidal.offset_inner_product.md
#include "harness/runner.hpp"
#include "harness/tolerance.hpp"
#include "properties/catalogue.hpp"
#include "properties/absolute/sinusoid_contract_laws.hpp"
#include "properties/absolute/sinusoidal_cases.hpp"

namespace pecheck::props {

namespace sinusoidal_offset_inner_product_detail {
namespace {

/// positions = {p, q, p + t, q + t}, all in [0, 2^24), t != 0.
rc::Gen<SinusoidalCase> cases(DType) {
  return rc::gen::apply(
      [](SinusoidalSpec s, std::int64_t p, std::int64_t q, std::int64_t t) {
        t = gen::nonzero_shift({&p, &q}, t);
        return SinusoidalCase{s, {p, q, p + t, q + t}};
      },
      sinusoidal_spec_gen(), gen::position(), gen::position(), gen::position());
}

double dot(const std::vector<float>& rows, std::size_t d, std::size_t a, std::size_t b) {
  double acc = 0;
  for (std::size_t k = 0; k < d; ++k) acc += double{rows[a * d + k]} * rows[b * d + k];
  return acc;
}

Outcome check(Encoder& enc, DType dt, const SinusoidalCase& c, const RunParams& params) {
  // t = 0 compares each dot product with itself: nothing could fail.
  Outcome o{.bound_u = tol::sinusoidal_gram(dt, c.spec.d_model), .trivial = c.positions[2] == c.positions[0]};
  const auto rows = encoder_rows(enc, dt, c.spec, c.positions, o.failure);
  if (!o.failure.empty()) return o;
  const std::size_t d = static_cast<std::size_t>(c.spec.d_model);
  const double g1 = dot(rows, d, 0, 1), g2 = dot(rows, d, 2, 3);
  o.error_u = std::fabs(g1 - g2) / unit_roundoff(dt);
  o.where = fmt::format("PE(p).PE(q) = {:.9g}, PE(p+t).PE(q+t) = {:.9g}", g1, g2);
  if (params.contract != tol::Contract::exact) {
    // Each row within its entries' contract bounds at its position (docs/error-model.md).
    o.bound_u =
        gram_contract_bound(params.contract, dt, SinusoidContractBounds(dt, c.spec), c.spec.d_model, c.positions);
    // Two Gram entries lie within d of each other (|PE|^2 = d/2): a bound past that could not fail.
    o.trivial = o.trivial || o.bound_u >= c.spec.d_model / unit_roundoff(dt);
  }
  return o;
}

}  // namespace
}  // namespace sinusoidal_offset_inner_product_detail

Property sinusoidal_offset_inner_product() {
  using namespace sinusoidal_offset_inner_product_detail;
  return make_property<SinusoidalCase>(
      {.id = "sinusoidal.offset_inner_product",
       .statement = "PE(p).PE(q) depends only on p - q: the Gram matrix of the table is Toeplitz.",
       .family = Family::sinusoidal,
       .op = Op::sinusoidal_table,
       .convention_free = true,
       .pinnable = true},
      cases, check);
}

}  // namespace pecheck::props
