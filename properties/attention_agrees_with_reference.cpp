// Theorem: multi-head attention with each position encoding plugged in (none, sinusoidal input,
// RoPE, ALiBi, Shaw; causal or full) is within the derived bound of the exact output.
// Doc: docs/properties/attention.agrees_with_reference.md
#include "harness/runner.hpp"
#include "properties/attention_cases.hpp"
#include "properties/catalogue.hpp"
#include "reference/attention.hpp"

namespace pecheck::props {

namespace attention_agrees_with_reference_detail {
namespace {

rc::Gen<AttentionCase> cases(DType dt) { return attention_case_gen(dt, all_attention_pes(), true, 1); }

Outcome check(Encoder& enc, DType dt, const AttentionCase& c) {
  const AttentionData x = attention_data(c, dt);
  const AttentionBound b = attention_bound(c, dt, x);
  Outcome o{.bound_u = b.bound_u, .trivial = admits_any_output(b.bound_u, dt)};
  const auto out = encoder_attention(enc, dt, c, x, c.positions, o.failure);
  if (!o.failure.empty()) return o;
  const auto exact =
      ref::attention<Real>(c.spec, c.positions, {to_real(x.q), to_real(x.k), to_real(x.v)}, to_real(x.table));
  WorstOf worst;
  const std::size_t d = static_cast<std::size_t>(c.spec.head_dim), H = static_cast<std::size_t>(c.spec.heads);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const double err = std::fabs(ref::to_double(Real(out[i]) - exact[i])) / (unit_roundoff(dt) * b.max_v);
    worst.offer(err, [&] {
      return fmt::format("token {} head {} dim {} (got {}, exact {:.9g}; max|V'| = {:.4g})", i / d / H, i / d % H,
                         i % d, out[i], ref::to_double(exact[i]), b.max_v);
    });
  }
  return worst.store(o);
}

}  // namespace
}  // namespace attention_agrees_with_reference_detail

Property attention_agrees_with_reference() {
  using namespace attention_agrees_with_reference_detail;
  return make_property<AttentionCase>(
      {.id = "attention.agrees_with_reference",
       .statement =
           "Attention with each PE plugged in, causal or not, is within the derived bound of the exact output.",
       .family = Family::attention,
       .op = Op::attention},
      cases, check);
}

}  // namespace pecheck::props
