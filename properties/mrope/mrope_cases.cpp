// The M-RoPE case generators, compiled once (see properties/rope/rope_cases.cpp for why).
#include "properties/mrope/mrope_cases.hpp"

namespace pecheck::props {

rc::Gen<MropeSpec> mrope_spec() {
  const MropeSpec qwen2{.head_dim = 128, .base = 1e6, .mrope_section = {16, 24, 24}};
  const MropeSpec qwen3{
      .head_dim = 128, .base = 5e6, .mrope_section = {24, 20, 20}, .assignment = MropeAssignment::interleaved};
  const auto any = rc::gen::mapcat(rc::gen::inRange(3, 129), [](int pairs) {
    return rc::gen::mapcat(rc::gen::inRange(1, pairs - 1), [pairs](int s0) {
      return rc::gen::apply(
          [pairs, s0](int s1, double base, MropeAssignment a, RopeLayout layout) {
            return MropeSpec{.head_dim = 2 * pairs,
                             .base = base,
                             .mrope_section = {s0, s1, pairs - s0 - s1},
                             .assignment = a,
                             .layout = layout};
          },
          rc::gen::inRange(1, pairs - s0), gen::base(),
          rc::gen::element(MropeAssignment::sectioned, MropeAssignment::interleaved), gen::rope_layout());
    });
  });
  return rc::gen::weightedOneOf<MropeSpec>({{1, rc::gen::element(qwen2, qwen3)}, {2, any}});
}

rc::Gen<MropeCase> mrope_case_gen(int n) {
  const auto axis = gen::positions(static_cast<std::size_t>(n));
  return rc::gen::apply(
      [](MropeSpec s, int heads, std::vector<std::int64_t> t, std::vector<std::int64_t> h, std::vector<std::int64_t> w,
         std::uint32_t data) {
        return MropeCase{s, heads, {t, h, w}, data};
      },
      mrope_spec(), rc::gen::inRange(1, 4), axis, axis, axis, gen::data_seed());
}

}  // namespace pecheck::props

namespace pecheck {
// The case type erased once for every theorem file (see erased() in harness/runner.hpp).
template rc::Gen<AnyCase> erased(rc::Gen<props::MropeCase>);
}  // namespace pecheck
