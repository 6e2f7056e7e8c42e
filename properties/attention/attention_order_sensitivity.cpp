// Theorem: with sinusoidal PE added or RoPE applied (and no mask, which would see order by
// itself), attention sees word order: moving tokens to
// other positions (a swap, a reversal or a rotation of the sequence) changes the output by more
// than twice the error bound. The seeds' test_position_invariance compares the wrong tensors;
// this is the check it meant to make.
// Doc: docs/properties/attention.order_sensitivity.md
#include <algorithm>

#include "harness/runner.hpp"
#include "properties/attention/attention_cases.hpp"
#include "properties/catalogue.hpp"

namespace pecheck::props {

namespace attention_order_sensitivity_detail {
namespace {

rc::Gen<AttentionCase> cases(DType dt) {
  return rc::gen::map(
      attention_case_gen(dt, {AttentionPE::sinusoidal, AttentionPE::rope}, false, 4), [](AttentionCase c) {
        c.spec.head_dim = std::max(c.spec.head_dim, 8);  // enough dims that the content is informative
        c.qk_scale = 1;  // one-hot softmaxes of huge logits can hide order: a separation is not a theorem there
        return c;
      });
}

/// The permutations tried: every adjacent swap, the reversal, the rotation by one, and the drawn one.
std::vector<std::vector<std::size_t>> candidates(const AttentionCase& c) {
  const std::size_t n = c.n();
  std::vector<std::size_t> id(n);
  for (std::size_t i = 0; i < n; ++i) id[i] = i;
  std::vector<std::vector<std::size_t>> all;
  for (std::size_t i = 0; i + 1 < n; ++i) {
    auto p = id;
    std::swap(p[i], p[i + 1]);
    all.push_back(p);
  }
  auto rev = id;
  std::reverse(rev.begin(), rev.end());
  all.push_back(rev);
  auto rot = id;
  std::rotate(rot.begin(), rot.begin() + 1, rot.end());
  all.push_back(rot);
  if (auto p = permutation(n, c.perm); p != id) all.push_back(p);
  return all;
}

Outcome check(Encoder& enc, DType dt, const AttentionCase& c, const RunParams& params) {
  const AttentionData x = attention_data(c, dt);
  const AttentionBound b = attention_bound(c, dt, x, params.contract);
  Outcome o{.bound_u = 2 * b.bound_u};
  const std::size_t w = static_cast<std::size_t>(c.spec.width());
  const auto out = encoder_attention(enc, dt, c, x, c.positions, o.failure);
  double best = 0;
  for (const auto& perm : candidates(c)) {
    // Tokens move, positions stay: what a position-blind layer could not tell apart.
    const AttentionData px{permute_rows(x.q, perm, w), permute_rows(x.k, perm, w), permute_rows(x.v, perm, w), x.table};
    const auto pout = encoder_attention(enc, dt, c, px, c.positions, o.failure);
    if (!o.failure.empty()) return o;
    std::string where;
    const double sep = max_abs_diff_u(pout, permute_rows(out, perm, w), dt, b.max_v, &where);
    if (sep > best) best = sep, o.where = fmt::format("permutation [{}]: {}", fmt::join(perm, ","), where);
  }
  o.error_u = best;
  return o;
}

}  // namespace
}  // namespace attention_order_sensitivity_detail

Property attention_order_sensitivity() {
  using namespace attention_order_sensitivity_detail;
  return make_property<AttentionCase>(
      {.id = "attention.order_sensitivity",
       .statement =
           "With sinusoidal PE or RoPE, some reordering of the tokens changes the output beyond twice the bound.",
       .family = Family::attention,
       .op = Op::attention,
       // f32 only: in bf16/f16 the worst-case bound (PE entries rounded to storage, errors aligned
       // across head_dim) is a sizeable fraction of max|V'|, so a separation beyond it is not a
       // theorem there.
       .dtypes = {DType::f32},
       .direction = Direction::at_least,
       .pinnable = true},
      cases, check);
}

}  // namespace pecheck::props
