// Theorem: multi-head attention with each position encoding plugged in (none, sinusoidal input,
// RoPE, ALiBi, Shaw; causal or full) is within the derived bound of the exact output.
// Doc: docs/properties/attention.agrees_with_reference.md
#include "harness/runner.hpp"
#include "properties/attention/attention_cases.hpp"
#include "properties/catalogue.hpp"

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
      cases, agreement_with_exact);
}

}  // namespace pecheck::props
