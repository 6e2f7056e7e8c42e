// Theorem: attention is a function of its inputs, call after call: over a run of thousands of
// calls with other inputs between them, the same input gives bitwise the same output every time.
// Doc: docs/properties/attention.call_sequence.md
#include "harness/runner.hpp"
#include "properties/attention/attention_cases.hpp"
#include "properties/call_sequence.hpp"
#include "properties/catalogue.hpp"

namespace pecheck::props {

namespace attention_call_sequence_detail {
namespace {

/// Every PE, causal or full, n in [2, 10] (one token's output is its value whatever a kernel
/// does to the scores: no drift of theirs could show), grouped queries drawn in.
rc::Gen<AttentionCase> cases(DType dt) {
  return with_grouped_queries(attention_case_gen(dt, all_attention_pes(), true, 2));
}

Outcome check(Encoder& enc, DType dt, const AttentionCase& c, const RunParams& params) {
  return check_call_sequence<AttentionCase>(
      c, params,
      {.output =
           [&](const AttentionCase& x, std::string& failure) {
             return encoder_attention(enc, dt, x, attention_data(x, dt), x.positions, failure);
           },
       // Input 0: the case as drawn; 1: other data at its positions; 2: its data with every
       // position moved halfway to the ceiling (consecutive still).
       .input =
           [](const AttentionCase& x, int k) {
             AttentionCase y = x;
             if (k == 1) y.data = x.data ^ 0x9e3779b9u;
             if (k == 2) {
               const std::int64_t room = gen::position_ceiling() - x.positions.back();
               for (auto& p : y.positions) p += room / 2;
             }
             return y;
           },
       .describe = [](const AttentionCase& x) { return x.describe(); }});
}

}  // namespace
}  // namespace attention_call_sequence_detail

Property attention_call_sequence() {
  using namespace attention_call_sequence_detail;
  return make_property<AttentionCase>(
      {.id = "attention.call_sequence",
       .statement = "Over thousands of calls with other inputs between them, the same attention input gives bitwise "
                    "the same output every time.",
       .family = Family::attention,
       .op = Op::attention,
       .pinnable = true},
      cases, check);
}

}  // namespace pecheck::props
