// The RoPE case generators, compiled once: composed RapidCheck generators instantiate its
// shrinking machinery, which cost each theorem file including them about 3.5 s at -O2 (8.1 s ->
// 4.6 s for rope_agrees_with_reference.cpp, measured on an AMD EPYC, CPU family 25).
#include "properties/rope/rope_cases.hpp"

namespace pecheck::props {

rc::Gen<RopeCase> rope_case_gen(rc::Gen<std::vector<std::int64_t>> positions, rc::Gen<RopeSpec> spec) {
  return rc::gen::apply(
      [](RopeSpec s, int heads, std::vector<std::int64_t> p, std::uint32_t data) {
        return RopeCase{s, heads, p, data};
      },
      spec, rc::gen::inRange(1, 4), positions, gen::data_seed());
}

rc::Gen<RopeSpec> rope_spec_scaled_as(std::vector<RopeScalingKind> kinds) {
  return rc::gen::mapcat(gen::rope_spec(256), [kinds](RopeSpec s) {
    return rc::gen::apply(
        [s](RopeScalingKind k, std::uint32_t lists_seed) {
          RopeSpec t = s;
          t.scaling.kind = k;
          if (s.rotary_dim < 4 && (k == RopeScalingKind::ntk || k == RopeScalingKind::dynamic_ntk)) {
            t.rotary_dim = 4;  // NTK's exponent d/(d-2) needs d > 2
            t.head_dim = std::max(t.head_dim, 4);
          }
          if (k == RopeScalingKind::longrope && t.scaling.short_factor.empty())
            gen::longrope_lists(t.scaling, t.rotary_dim, lists_seed);
          return t;
        },
        rc::gen::elementOf(kinds), rc::gen::arbitrary<std::uint32_t>());
  });
}

}  // namespace pecheck::props

namespace pecheck {
// The case type erased once for every theorem file (see erased() in harness/runner.hpp).
template rc::Gen<AnyCase> erased(rc::Gen<props::RopeCase>);
}  // namespace pecheck
