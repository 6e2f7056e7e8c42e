// Theorem: without a causal mask, permuting the tokens (each carrying its position) permutes the
// outputs: Attn(PX) = P Attn(X) for every permutation P; without PE this is the seeds' "attention
// is position-blind".
// Doc: docs/properties/attention.permutation_equivariance.md
#include <algorithm>

#include "harness/runner.hpp"
#include "properties/attention/attention_cases.hpp"
#include "properties/catalogue.hpp"

namespace pecheck::props {

namespace attention_permutation_equivariance_detail {
namespace {

rc::Gen<AttentionCase> cases(DType dt) {
  return attention_case_gen(dt,
                            {AttentionPE::none, AttentionPE::none, AttentionPE::sinusoidal, AttentionPE::rope,
                             AttentionPE::alibi, AttentionPE::shaw, AttentionPE::t5},
                            false, 2);
}

Outcome check(Encoder& enc, DType dt, const AttentionCase& c, const RunParams& params) {
  const AttentionData x = attention_data(c, dt);
  const AttentionBound b = attention_bound(c, dt, x, params.contract);
  // Each of the two outputs within the bound of its exact value.
  Outcome o{.bound_u = 2 * b.bound_u, .trivial = admits_any_output(2 * b.bound_u, dt)};
  auto perm = permutation(c.n(), c.perm);
  if (std::is_sorted(perm.begin(), perm.end())) std::reverse(perm.begin(), perm.end());  // never the identity
  const std::size_t w = static_cast<std::size_t>(c.spec.width());
  std::vector<std::int64_t> ppos(c.n());
  for (std::size_t i = 0; i < c.n(); ++i) ppos[i] = c.positions[perm[i]];
  const AttentionData px{permute_rows(x.q, perm, w), permute_rows(x.k, perm, w), permute_rows(x.v, perm, w), x.table};
  const auto out = encoder_attention(enc, dt, c, x, c.positions, o.failure);
  const auto pout = encoder_attention(enc, dt, c, px, ppos, o.failure);
  if (!o.failure.empty()) return o;
  o.error_u = max_abs_diff_u(pout, permute_rows(out, perm, w), dt, b.max_v, &o.where);
  return o;
}

}  // namespace
}  // namespace attention_permutation_equivariance_detail

Property attention_permutation_equivariance() {
  using namespace attention_permutation_equivariance_detail;
  return make_property<AttentionCase>(
      {.id = "attention.permutation_equivariance",
       .statement =
           "Without a mask, permuting tokens (with their positions) permutes the outputs: Attn(PX) = P Attn(X).",
       .family = Family::attention,
       .op = Op::attention,
       .pinnable = true},
      cases, check);
}

}  // namespace pecheck::props
