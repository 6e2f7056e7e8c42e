// Theorem: without a mask or a position encoding, attention is a function of the set of (key,
// value) pairs: permuting the keys and values together leaves every output unchanged.
// Doc: docs/properties/attention.kv_permutation_invariance.md
#include <algorithm>

#include "harness/runner.hpp"
#include "properties/attention/attention_cases.hpp"
#include "properties/catalogue.hpp"

namespace pecheck::props {

namespace attention_kv_permutation_invariance_detail {
namespace {

rc::Gen<AttentionCase> cases(DType dt) { return attention_case_gen(dt, {AttentionPE::none}, false, 2); }

Outcome check(Encoder& enc, DType dt, const AttentionCase& c, const RunParams& params) {
  const AttentionData x = attention_data(c, dt);
  auto perm = permutation(c.n(), c.perm);
  if (std::is_sorted(perm.begin(), perm.end())) std::reverse(perm.begin(), perm.end());  // never the identity
  const std::size_t w = static_cast<std::size_t>(c.spec.width());
  const AttentionData px{x.q, permute_rows(x.k, perm, w), permute_rows(x.v, perm, w), x.table};
  const AttentionBound b = attention_bound(c, dt, x, params.contract);
  // The same exact output, the same magnitudes.
  Outcome o{.bound_u = 2 * b.bound_u, .trivial = admits_any_output(2 * b.bound_u, dt)};
  const auto out = encoder_attention(enc, dt, c, x, c.positions, o.failure);
  const auto pout = encoder_attention(enc, dt, c, px, c.positions, o.failure);
  if (!o.failure.empty()) return o;
  o.error_u = max_abs_diff_u(pout, out, dt, b.max_v, &o.where);
  return o;
}

}  // namespace
}  // namespace attention_kv_permutation_invariance_detail

Property attention_kv_permutation_invariance() {
  using namespace attention_kv_permutation_invariance_detail;
  return make_property<AttentionCase>(
      {.id = "attention.kv_permutation_invariance",
       .statement = "Without mask or PE, permuting keys and values together leaves every output unchanged.",
       .family = Family::attention,
       .op = Op::attention,
       .pinnable = true},
      cases, check);
}

}  // namespace pecheck::props
