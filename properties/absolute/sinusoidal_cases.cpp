// The sinusoidal spec generator, compiled once (see properties/rope/rope_cases.cpp for why).
#include "properties/absolute/sinusoidal_cases.hpp"

namespace pecheck::props {

rc::Gen<SinusoidalSpec> sinusoidal_spec_gen() {
  return rc::gen::apply(
      [](int d, double base, SinusoidalLayout l, bool fairseq) {
        const auto f = fairseq && d >= 4 ? SinusoidalFrequencies::fairseq : SinusoidalFrequencies::vaswani;
        return SinusoidalSpec{d, base, l, f};
      },
      gen::even_dim(256), gen::base(), gen::sinusoidal_layout(),
      rc::gen::weightedOneOf<bool>({{2, rc::gen::just(false)}, {1, rc::gen::just(true)}}));
}

}  // namespace pecheck::props

namespace pecheck {
// The case type erased once for every theorem file (see erased() in harness/runner.hpp).
template rc::Gen<AnyCase> erased(rc::Gen<props::SinusoidalCase>);
}  // namespace pecheck
