// Theorem: the sinusoidal table is a function of its inputs, call after call: over a run of
// thousands of calls with other positions between them, the same rows come back bitwise the same.
// Doc: docs/properties/sinusoidal.call_sequence.md
#include <algorithm>

#include "harness/runner.hpp"
#include "properties/call_sequence.hpp"
#include "properties/catalogue.hpp"
#include "properties/absolute/sinusoidal_cases.hpp"

namespace pecheck::props {

namespace sinusoidal_call_sequence_detail {
namespace {

/// Any spec, 1 to 4 positions of every class.
rc::Gen<SinusoidalCase> cases(DType) {
  return rc::gen::apply(
      [](SinusoidalSpec s, std::vector<std::int64_t> p) {
        return SinusoidalCase{s, p};
      },
      sinusoidal_spec_gen(), gen::positions(4));
}

Outcome check(Encoder& enc, DType dt, const SinusoidalCase& c, const RunParams& params) {
  return check_call_sequence<SinusoidalCase>(
      c, params,
      {.output = [&](const SinusoidalCase& x,
                     std::string& failure) { return encoder_rows(enc, dt, x.spec, x.positions, failure); },
       // Input 0: the positions mirrored below the ceiling (large ones, where a table that is
       // regrown or recomputed in another precision differs most); 1: the case as drawn; 2: its
       // positions in reverse order (the same rows, asked for in another order).
       .input =
           [](const SinusoidalCase& x, int k) {
             SinusoidalCase y = x;
             if (k == 0)
               for (auto& p : y.positions) p = gen::position_ceiling() - p;
             if (k == 2) std::reverse(y.positions.begin(), y.positions.end());
             return y;
           },
       .describe = [](const SinusoidalCase& x) { return x.describe(); }});
}

}  // namespace
}  // namespace sinusoidal_call_sequence_detail

Property sinusoidal_call_sequence() {
  using namespace sinusoidal_call_sequence_detail;
  return make_property<SinusoidalCase>(
      {.id = "sinusoidal.call_sequence",
       .statement = "Over thousands of calls with other positions between them, the same table call gives bitwise the "
                    "same rows every time.",
       .family = Family::sinusoidal,
       .op = Op::sinusoidal_table,
       .convention_free = true,
       .pinnable = true},
      cases, check);
}

}  // namespace pecheck::props
