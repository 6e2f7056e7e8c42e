// Theorem: causal ALiBi attention equals attention with BLOOM's per-row-shifted bias m_h p_j: on
// the unmasked keys -m_h (p_i - p_j) = m_h p_j - m_h p_i, and softmax ignores the row constant.
// Doc: docs/properties/alibi.causal_shift_equivalence.md
#include "harness/runner.hpp"
#include "properties/attention/attention_cases.hpp"
#include "properties/catalogue.hpp"
#include "reference/alibi.hpp"
#include "reference/attention.hpp"

namespace pecheck::props {

namespace alibi_causal_shift_equivalence_detail {
namespace {

/// Causal ALiBi attention, at least two tokens.
rc::Gen<AttentionCase> cases(DType dt) {
  return rc::gen::map(attention_case_gen(dt, {AttentionPE::alibi}, true, 2), [](AttentionCase c) {
    c.spec.causal = true;
    return c;
  });
}

/// Exact attention with the shifted bias m_h p_j (BLOOM's build_alibi_tensor), built from the
/// reference's plain causal logits.
std::vector<Real> shifted_form(const AttentionCase& c, const AttentionData& x) {
  AttentionSpec plain = c.spec;
  plain.pe = AttentionPE::none;
  const ref::AttentionInputs<Real> in{to_real(x.q), to_real(x.k), to_real(x.v)};
  const auto slopes = ref::alibi_slopes<Real>(c.spec.heads);
  const std::size_t n = c.n(), H = static_cast<std::size_t>(c.spec.heads),
                    d = static_cast<std::size_t>(c.spec.head_dim);
  std::vector<Real> out(n * H * d, Real(0));
  for (int h = 0; h < c.spec.heads; ++h) {
    ref::Matrix<Real> logits = ref::attention_logits<Real>(plain, c.positions, in, {}, h);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j <= i; ++j)
        logits(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) +=
            slopes[static_cast<std::size_t>(h)] * Real(c.positions[j]);
    const ref::Matrix<Real> p = ref::softmax_rows(logits);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j <= i; ++j)
        for (std::size_t k = 0; k < d; ++k)
          out[(i * H + static_cast<std::size_t>(h)) * d + k] +=
              p(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) *
              in.v[(j * H + static_cast<std::size_t>(h)) * d + k];
  }
  return out;
}

Outcome check(Encoder& enc, DType dt, const AttentionCase& c, const RunParams& params) {
  const AttentionData x = attention_data(c, dt);
  const AttentionBound b = attention_bound(c, dt, x, params.contract);
  Outcome o{.bound_u = b.bound_u, .trivial = admits_any_output(b.bound_u, dt)};
  const auto out = encoder_attention(enc, dt, c, x, c.positions, o.failure);
  if (!o.failure.empty()) return o;
  const auto exact = shifted_form(c, x);
  WorstOf worst;
  const std::size_t d = static_cast<std::size_t>(c.spec.head_dim), H = static_cast<std::size_t>(c.spec.heads);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const double err = std::fabs(ref::to_double(Real(out[i]) - exact[i])) / (unit_roundoff(dt) * b.max_v);
    worst.offer(err, [&] {
      return fmt::format("token {} head {} dim {}: got {}, shifted form {:.9g}", i / d / H, i / d % H, i % d, out[i],
                         ref::to_double(exact[i]));
    });
  }
  return worst.store(o);
}

}  // namespace
}  // namespace alibi_causal_shift_equivalence_detail

Property alibi_causal_shift_equivalence() {
  using namespace alibi_causal_shift_equivalence_detail;
  return make_property<AttentionCase>(
      {.id = "alibi.causal_shift_equivalence",
       .statement = "Causal ALiBi attention equals attention with the per-row-shifted bias m_h p_j (BLOOM's form).",
       .family = Family::alibi,
       .op = Op::attention,
       .pinnable = true},
      cases, check);
}

}  // namespace pecheck::props
