// Theorem: every rotated pair of M-RoPE is within E = 2u |x_p| (normwise) of the exact rotation
// by its axis's position times base^(-2p/head_dim), for both assignments (Qwen2-VL sections,
// Qwen3-VL interleaved), both layouts and every position below 2^24.
// Doc: docs/properties/mrope.agrees_with_reference.md
#include "harness/runner.hpp"
#include "harness/tolerance.hpp"
#include "properties/catalogue.hpp"
#include "properties/mrope/mrope_cases.hpp"
#include "properties/rope/rope_cases.hpp"
#include "reference/mrope.hpp"

namespace pecheck::props {

namespace mrope_agrees_with_reference_detail {
namespace {

rc::Gen<MropeCase> cases(DType) { return mrope_case_gen(3); }

Outcome check(Encoder& enc, DType dt, const MropeCase& c, const RunParams& params) {
  Outcome o{.bound_u = tol::rope_pair(dt)};
  const auto x = gen::edge_values(c.data, 1, c.size(), dt, static_cast<std::size_t>(c.spec.head_dim));
  const auto y = encoder_mrope(enc, dt, c, x, c.axes, o.failure);
  if (!o.failure.empty()) return o;
  auto exact = to_real(x);
  ref::mrope_apply<Real>(c.spec, c.heads, c.axes[0], c.axes[1], c.axes[2], std::span<Real>(exact));
  const std::vector<double> exact_d = to_doubles(exact);
  if (params.contract != tol::Contract::exact)  // HF's Qwen-VL forms its angles in fp32
    return under_contract(
        params.contract, dt, c.spec.rope(), c.heads, x, y, exact_d, 1.0,
        [&](std::size_t token, int pair) { return c.axes[static_cast<std::size_t>(mrope_axis(c.spec, pair))][token]; });
  const WorstOf worst = worst_pair_error(c.spec.rope(), c.heads, dt, x, as_double(y), exact_d, 1.0, [&](std::size_t t) {
    return fmt::format("t={},h={},w={}", c.axes[0][t], c.axes[1][t], c.axes[2][t]);
  });
  return worst.store(o);
}

}  // namespace
}  // namespace mrope_agrees_with_reference_detail

Property mrope_agrees_with_reference() {
  using namespace mrope_agrees_with_reference_detail;
  return make_property<MropeCase>(
      {.id = "mrope.agrees_with_reference",
       .statement = "Every rotated pair is within 2u|x_p| of the exact rotation by its axis's position (temporal, "
                    "height or width), at every position below 2^24.",
       .family = Family::mrope,
       .op = Op::mrope_apply,
       .pinnable = true},
      cases, check);
}

}  // namespace pecheck::props
