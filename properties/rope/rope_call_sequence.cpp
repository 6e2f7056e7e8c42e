// Theorem: RoPE is a function of its inputs, call after call: over a run of thousands of calls
// with other inputs between them, the same input gives bitwise the same output every time.
// Doc: docs/properties/rope.call_sequence.md
#include "harness/runner.hpp"
#include "properties/call_sequence.hpp"
#include "properties/catalogue.hpp"
#include "properties/rope/rope_cases.hpp"

namespace pecheck::props {

namespace rope_call_sequence_detail {
namespace {

/// Any spec (a scaling rule in most), 1 to 3 tokens at positions of every class.
rc::Gen<RopeCase> cases(DType) { return rope_case_gen(gen::positions(3)); }

Outcome check(Encoder& enc, DType dt, const RopeCase& c, const RunParams& params) {
  return check_call_sequence<RopeCase>(
      c, params,
      {.output =
           [&](const RopeCase& x, std::string& failure) {
             return encoder_rope(enc, dt, x, gen::values(x.data, 1, x.size(), dt), x.positions, failure);
           },
       // Input 0: the case's data at its positions mirrored below the ceiling (large ones, where a
       // drift in the angles shows most); 1: the case as drawn; 2: other data at its positions.
       .input =
           [](const RopeCase& x, int k) {
             RopeCase y = x;
             if (k == 0)
               for (auto& p : y.positions) p = gen::position_ceiling() - p;
             if (k == 2) y.data = x.data ^ 0x9e3779b9u;
             return y;
           },
       .describe = [](const RopeCase& x) { return x.describe(); }});
}

}  // namespace
}  // namespace rope_call_sequence_detail

Property rope_call_sequence() {
  using namespace rope_call_sequence_detail;
  return make_property<RopeCase>(
      {.id = "rope.call_sequence",
       .statement =
           "Over thousands of calls with other inputs between them, the same RoPE input gives bitwise the same "
           "output every time.",
       .family = Family::rope,
       .op = Op::rope_apply,
       .convention_free = true,
       .pinnable = true},
      cases, check);
}

}  // namespace pecheck::props
