// Theorem: the ALiBi bias equals -m_h |p_i - p_j| (symmetric) or -m_h (p_i - p_j) with j > i
// masked to -inf (causal), with the paper's slopes m_h for every head count.
// Doc: docs/properties/alibi.agrees_with_reference.md
#include <fmt/ranges.h>

#include "harness/generators.hpp"
#include "harness/measure.hpp"
#include "harness/runner.hpp"
#include "harness/tolerance.hpp"
#include "properties/catalogue.hpp"
#include "reference/alibi.hpp"

namespace pecheck::props {

/// In pecheck::props, not the anonymous namespace, so that showValue finds it by ADL.
struct AlibiCase {
  AlibiSpec spec;
  std::vector<std::int64_t> positions;

  std::string describe() const { return fmt::format("{} pos=[{}]", spec.describe(), fmt::join(positions, ",")); }
  std::vector<std::string> tags() const {
    const bool pow2 = (spec.heads & (spec.heads - 1)) == 0;
    return {pow2 ? "heads=2^k" : "heads!=2^k", spec.causal ? "causal" : "symmetric"};
  }
};

namespace alibi_agrees_with_reference_detail {
namespace {

rc::Gen<AlibiCase> cases(DType) {
  return rc::gen::apply(
      [](int heads, bool causal, int n, std::int64_t start, int stride) {
        std::vector<std::int64_t> pos(static_cast<std::size_t>(n));
        for (int i = 0; i < n; ++i) pos[static_cast<std::size_t>(i)] = start + std::int64_t{i} * stride;
        return AlibiCase{{heads, causal}, pos};
      },
      rc::gen::weightedOneOf<int>({{1, rc::gen::element(1, 2, 4, 8, 16, 32, 64)}, {2, rc::gen::inRange(1, 65)}}),
      rc::gen::arbitrary<bool>(), rc::gen::inRange(1, 10), gen::position_below(tol::kMaxPosition - 9 * 1000),
      rc::gen::element(1, 7, 1000));
}

Outcome check(Encoder& enc, DType dt, const AlibiCase& c) {
  const std::size_t n = c.positions.size(), H = static_cast<std::size_t>(c.spec.heads);
  Outcome o{.bound_u = tol::alibi_bias(dt)};
  auto out = poisoned(H * n * n);
  enc.run(AlibiBias{c.spec, dt, c.positions, out});
  const auto slopes = ref::alibi_slopes<Real>(c.spec.heads);
  WorstOf worst;
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        const float b = out[(h * n + i) * n + j];
        const auto exact = ref::alibi_bias<Real>(c.spec, slopes[h], i, j, c.positions[i], c.positions[j]);
        // Special values first: masked entries are exactly -inf, the others finite dtype values.
        if (!exact) {
          if (!(std::isinf(b) && b < 0)) {
            o.failure = fmt::format("head {} ({}, {}) is causally masked but holds {}", h, i, j, b);
            return o;
          }
          continue;
        }
        if (!std::isfinite(b) || !representable(dt, b)) {
          o.failure = fmt::format("head {} ({}, {}) = {} is not a finite {} value", h, i, j, b, dtype_name(dt));
          return o;
        }
        const double e = ref::to_double(*exact);
        const double err =
            std::fabs(ref::to_double(Real(b) - *exact)) / (unit_roundoff(dt) * std::max(std::fabs(e), min_normal(dt)));
        worst.offer(err, [&] {
          return fmt::format("head {} ({}, {}) (got {}, exact {:.9g}, slope {:.9g})", h, i, j, b, e,
                             ref::to_double(slopes[h]));
        });
      }
  return worst.store(o);
}

}  // namespace
}  // namespace alibi_agrees_with_reference_detail

Property alibi_agrees_with_reference() {
  using namespace alibi_agrees_with_reference_detail;
  return make_property<AlibiCase>(
      {.id = "alibi.agrees_with_reference",
       .statement =
           "The ALiBi bias is -m_h |p_i - p_j| (or causal, future masked) with the paper's slopes for any head count.",
       .family = Family::alibi,
       .op = Op::alibi_bias,
       .pinnable = true},
      cases, check);
}

}  // namespace pecheck::props
