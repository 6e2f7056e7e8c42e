// Theorem: the Shaw relative scores equal q_i.k_j + q_i.r[clamp(p_j - p_i, -K, K) + K] to within
// one fp32 dot product of length 2d and one rounding to storage.
// Doc: docs/properties/shaw.agrees_with_reference.md
#include <fmt/ranges.h>

#include "harness/generators.hpp"
#include "harness/measure.hpp"
#include "harness/runner.hpp"
#include "harness/tolerance.hpp"
#include "properties/catalogue.hpp"
#include "reference/shaw.hpp"

namespace pecheck::props {

/// In pecheck::props, not the anonymous namespace, so that showValue finds it by ADL.
struct ShawCase {
  ShawSpec spec;
  std::vector<std::int64_t> positions;
  std::uint32_t data = 0;

  std::string describe() const {
    return fmt::format("{} pos=[{}] data={}", spec.describe(), fmt::join(positions, ","), data);
  }
  std::vector<std::string> tags() const {
    const bool clipped = !positions.empty() && positions.back() - positions.front() > spec.max_distance;
    return {clipped ? "clipped" : "unclipped", spec.max_distance == 0 ? "K=0" : "K>0"};
  }
};

namespace shaw_agrees_with_reference_detail {
namespace {

rc::Gen<ShawCase> cases(DType) {
  return rc::gen::apply(
      [](int K, int d, int n, std::int64_t start, int stride, std::uint32_t data) {
        std::vector<std::int64_t> pos(static_cast<std::size_t>(n));
        for (int i = 0; i < n; ++i) pos[static_cast<std::size_t>(i)] = start + i * stride;
        return ShawCase{{K, d}, pos, data};
      },
      rc::gen::inRange(0, 9), rc::gen::inRange(1, 97), rc::gen::inRange(1, 13),
      gen::position_below(tol::kMaxPosition - 12 * 3), rc::gen::inRange(1, 4), gen::data_seed());
}

Outcome check(Encoder& enc, DType dt, const ShawCase& c) {
  const std::size_t n = c.positions.size(), d = static_cast<std::size_t>(c.spec.head_dim);
  Outcome o{.bound_u = tol::shaw_score(dt, c.spec.head_dim)};
  const auto q = gen::values(c.data, 1, n * d, dt), k = gen::values(c.data, 2, n * d, dt);
  const auto table = gen::values(c.data, 3, static_cast<std::size_t>(c.spec.table_rows()) * d, dt);
  auto out = poisoned(n * n);
  enc.run(ShawScores{c.spec, dt, q, k, table, c.positions, out});
  if (o.failure = classify_outputs(dt, out, "score"); !o.failure.empty()) return o;
  const auto exact = ref::shaw_scores<Real>(c.spec, to_real(q), to_real(k), to_real(table), c.positions);
  WorstOf worst;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t r = ref::shaw_row(c.spec, c.positions[i], c.positions[j]) * d;
      double scale = 0;  // sum_c |q_c| (|k_c| + |r_c|): the natural size of a dot-product error
      for (std::size_t t = 0; t < d; ++t)
        scale += std::fabs(q[i * d + t]) * (std::fabs(k[j * d + t]) + std::fabs(table[r + t]));
      const double err = std::fabs(ref::to_double(Real(out[i * n + j]) - exact[i * n + j])) /
                         (unit_roundoff(dt) * std::max(scale, min_normal(dt)));
      worst.offer(err, [&] {
        return fmt::format("score({}, {}) (got {}, exact {:.9g})", i, j, out[i * n + j],
                           ref::to_double(exact[i * n + j]));
      });
    }
  return worst.store(o);
}

}  // namespace
}  // namespace shaw_agrees_with_reference_detail

Property shaw_agrees_with_reference() {
  using namespace shaw_agrees_with_reference_detail;
  return make_property<ShawCase>(
      {.id = "shaw.agrees_with_reference",
       .statement = "Shaw scores equal q_i.k_j + q_i.r[clamp(p_j - p_i, -K, K)] within one fp32 dot product.",
       .family = Family::shaw,
       .op = Op::shaw_scores,
       .pinnable = true,
       .aliases = {"relative.agrees_with_reference"}},
      cases, check);
}

}  // namespace pecheck::props
