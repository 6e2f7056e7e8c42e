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

/// Short cases against the 50-digit reference, and one in four long (across key tiles) against
/// the double oracle (verify prints the share with n > 128); grouped-query in two short cases in
/// five (and MQA in long ones of two heads), sliding windows in four causal cases in seven, and
/// fewer queries than keys (a decode step or a chunk, the last tokens) in one case in four, and
/// in short RoPE cases RoPE's own spec (partial rotary, a scaling rule) in two in three; a stated
/// scale (muP's 1/d, 1/sqrt(d) halved or doubled) in one case in three.
rc::Gen<AttentionCase> cases(DType dt) {
  return with_scales(with_queries(with_windows(rc::gen::weightedOneOf<AttentionCase>(
      {{3, with_rope_rules(with_grouped_queries(attention_case_gen(dt, all_attention_pes(), true, 1)))},
       {1, attention_long_case_gen(dt)}}))));
}

/// The exact output less the encoder's, in double: from the 50-digit reference, or for a long
/// case from the double oracle (within b.oracle_u of the exact output, charged to the bound).
std::vector<double> errors(const AttentionCase& c, const AttentionData& x, const std::vector<float>& out,
                           std::vector<double>& expected) {
  std::vector<double> err(out.size());
  if (c.n() <= kOracleMinN) {
    const auto exact =
        ref::attention<Real>(c.spec, c.positions, {to_real(x.q), to_real(x.k), to_real(x.v)}, to_real(x.table));
    for (std::size_t i = 0; i < out.size(); ++i) {
      err[i] = ref::to_double(Real(out[i]) - exact[i]);
      expected.push_back(ref::to_double(exact[i]));
    }
    return err;
  }
  const auto widen = [](const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); };
  expected = ref::attention<double>(c.spec, c.positions, {widen(x.q), widen(x.k), widen(x.v)}, widen(x.table));
  for (std::size_t i = 0; i < out.size(); ++i) err[i] = double{out[i]} - expected[i];
  return err;
}

Outcome check(Encoder& enc, DType dt, const AttentionCase& c) {
  const AttentionData x = attention_data(c, dt);
  const AttentionBound b = attention_bound(c, dt, x);
  const bool oracle = c.n() > kOracleMinN;
  const double bound = b.bound_u + (oracle ? b.oracle_u : 0.0);
  Outcome o{.bound_u = bound, .trivial = admits_any_output(bound, dt)};
  const auto out = encoder_attention(enc, dt, c, x, c.positions, o.failure);
  if (!o.failure.empty()) return o;
  std::vector<double> expected;
  const std::vector<double> err = errors(c, x, out, expected);
  WorstOf worst;
  const std::size_t d = static_cast<std::size_t>(c.spec.head_dim), H = static_cast<std::size_t>(c.spec.heads),
                    off = c.spec.query_offset(c.n());
  for (std::size_t i = 0; i < out.size(); ++i) {
    worst.offer(std::fabs(err[i]) / (unit_roundoff(dt) * b.max_v), [&] {
      return fmt::format("token {} head {} dim {} (got {}, {} {:.9g}; max|V'| = {:.4g})", off + i / d / H, i / d % H,
                         i % d, out[i], oracle ? "double oracle" : "exact", expected[i], b.max_v);
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
           "Attention with each PE plugged in, causal or not, as many queries as keys or fewer (the last tokens), is "
           "within the derived bound of the exact output.",
       .family = Family::attention,
       .op = Op::attention,
       .pinnable = true},
      cases, check);
}

}  // namespace pecheck::props
