// Theorem: the concatenated and interleaved sinusoids differ by a fixed permutation: entry 2i of
// the interleaved row is entry i of the concatenated one, entry 2i+1 is entry d/2 + i.
// Doc: docs/properties/sinusoidal.layout_permutation.md
#include "harness/runner.hpp"
#include "harness/tolerance.hpp"
#include "properties/catalogue.hpp"
#include "properties/absolute/sinusoidal_cases.hpp"

namespace pecheck::props {

namespace sinusoidal_layout_permutation_detail {
namespace {

rc::Gen<SinusoidalCase> cases(DType) {
  return rc::gen::apply(
      [](SinusoidalSpec s, std::vector<std::int64_t> p) {
        s.layout = SinusoidalLayout::interleaved;
        return SinusoidalCase{s, p};
      },
      sinusoidal_spec_gen(), gen::positions(3));
}

Outcome check(Encoder& enc, DType dt, const SinusoidalCase& c) {
  Outcome o{.bound_u = tol::two_results(dt)};
  SinusoidalSpec concat = c.spec;
  concat.layout = SinusoidalLayout::concatenated;
  const auto inter = encoder_rows(enc, dt, c.spec, c.positions, o.failure);
  if (!o.failure.empty()) return o;
  const auto cat = encoder_rows(enc, dt, concat, c.positions, o.failure);
  if (!o.failure.empty()) return o;
  const std::size_t d = static_cast<std::size_t>(c.spec.d_model), half = d / 2;
  WorstOf worst;
  for (std::size_t r = 0; r < c.positions.size(); ++r)
    for (std::size_t i = 0; i < half; ++i)
      for (const auto& [a, b] : {std::pair{2 * i, i}, std::pair{2 * i + 1, half + i}}) {
        const double err = std::fabs(double{inter[r * d + a]} - cat[r * d + b]) / unit_roundoff(dt);
        worst.offer(err, [&, a = a, b = b] {
          return fmt::format("pos={}: interleaved[{}] = {}, concatenated[{}] = {}", c.positions[r], a, inter[r * d + a],
                             b, cat[r * d + b]);
        });
      }
  return worst.store(o);
}

}  // namespace
}  // namespace sinusoidal_layout_permutation_detail

Property sinusoidal_layout_permutation() {
  using namespace sinusoidal_layout_permutation_detail;
  return make_property<SinusoidalCase>(
      {.id = "sinusoidal.layout_permutation",
       .statement =
           "The concatenated sinusoid is the interleaved one with its entries permuted: 2i -> i, 2i+1 -> d/2+i.",
       .family = Family::sinusoidal,
       .op = Op::sinusoidal_table},
      cases, check);
}

}  // namespace pecheck::props
