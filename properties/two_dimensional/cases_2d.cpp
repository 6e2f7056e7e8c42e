// The 2-D case generators, compiled once (see properties/rope/rope_cases.cpp for why).
#include "properties/two_dimensional/cases_2d.hpp"

namespace pecheck::props {

namespace {

/// A grid coordinate: a ViT-sized one (below 64) half the time, else any position below 2^24.
rc::Gen<std::int64_t> grid_coordinate() {
  return rc::gen::oneOf(rc::gen::inRange<std::int64_t>(0, 64), gen::position());
}

/// A multiple of 4 in [4, max].
rc::Gen<int> width_by_4(int max) {
  return rc::gen::map(gen::even_dim(max), [](int d) { return std::max(4, d - d % 4); });
}

}  // namespace

template <class Spec>
rc::Gen<GridCase<Spec>> grid_case_gen(rc::Gen<Spec> spec, int tokens) {
  const auto coords =
      rc::gen::container<std::vector<std::int64_t>>(static_cast<std::size_t>(tokens), grid_coordinate());
  return rc::gen::apply(
      [](Spec s, int heads, std::vector<std::int64_t> r, std::vector<std::int64_t> c, std::uint32_t data) {
        return GridCase<Spec>{s, heads, r, c, data};
      },
      spec, rc::gen::inRange(1, 3), coords, coords, gen::data_seed());
}

rc::Gen<Sinusoidal2dSpec> sinusoidal2d_spec_gen() {
  return rc::gen::apply(
      [](int d, double base, SinusoidalLayout l) {
        return Sinusoidal2dSpec{d, base, l};
      },
      width_by_4(256), gen::base(), gen::sinusoidal_layout());
}

rc::Gen<Rope2dSpec> rope2d_spec_gen() {
  return rc::gen::apply(
      [](int d, double base, RopeLayout l, Rope2dPairing pairing, Rope2dFrequencies f) {
        return Rope2dSpec{d, base, l, pairing, f};
      },
      width_by_4(256), rc::gen::oneOf(rc::gen::just(100.0), gen::base()), gen::rope_layout(),
      rc::gen::element(Rope2dPairing::per_half, Rope2dPairing::whole_head),
      // Pixtral's split frequencies in one case in three.
      rc::gen::weightedOneOf<Rope2dFrequencies>(
          {{2, rc::gen::just(Rope2dFrequencies::shared)}, {1, rc::gen::just(Rope2dFrequencies::split)}}));
}

template rc::Gen<Sinusoidal2dCase> grid_case_gen(rc::Gen<Sinusoidal2dSpec>, int);
template rc::Gen<Rope2dCase> grid_case_gen(rc::Gen<Rope2dSpec>, int);

}  // namespace pecheck::props

namespace pecheck {
// The case type erased once for every theorem file (see erased() in harness/runner.hpp).
template rc::Gen<AnyCase> erased(rc::Gen<props::Sinusoidal2dCase>);
template rc::Gen<AnyCase> erased(rc::Gen<props::Rope2dCase>);
}  // namespace pecheck
