// Theorem: for every head count H in 1..64 the encoder's ALiBi slopes are the paper's: 2^(-8k/P)
// for the first P = 2^floor(log2 H) heads, then the odd powers 2^(-4k/P); all in (0, 1), and
// strictly decreasing within the first P heads.
// Doc: docs/properties/alibi.slopes.md
#include "harness/generators.hpp"
#include "harness/measure.hpp"
#include "harness/runner.hpp"
#include "harness/tolerance.hpp"
#include "properties/catalogue.hpp"
#include "reference/alibi.hpp"

namespace pecheck::props {

/// A head count and the distance at which the slopes are read off the bias.
struct SlopesCase {
  int heads = 1;
  std::int64_t distance = 1;

  std::string describe() const { return fmt::format("alibi(heads={}) distance={}", heads, distance); }
  std::vector<std::string> tags() const {
    return {(heads & (heads - 1)) == 0 ? "heads=2^k" : "heads!=2^k", gen::position_class(distance)};
  }
};

namespace alibi_slopes_detail {
namespace {

rc::Gen<SlopesCase> cases(DType) {
  return rc::gen::apply(
      [](int heads, std::int64_t d) {
        return SlopesCase{heads, std::max<std::int64_t>(d, 1)};
      },
      rc::gen::inRange(1, 65), gen::position_below(4096));
}

Outcome check(Encoder& enc, DType dt, const SlopesCase& c) {
  Outcome o{.bound_u = tol::alibi_bias(dt)};
  const std::int64_t pos[] = {0, c.distance};
  const AlibiSpec spec{c.heads, /*causal=*/false};
  auto out = poisoned(static_cast<std::size_t>(c.heads) * 4);
  enc.run(AlibiBias{spec, dt, pos, out});
  if (o.failure = classify_outputs(dt, out, "bias"); !o.failure.empty()) return o;
  const auto exact = ref::alibi_slopes<Real>(c.heads);
  int p = 1;
  while (2 * p <= c.heads) p *= 2;
  WorstOf worst;
  double previous = 1;
  for (std::size_t h = 0; h < exact.size(); ++h) {
    // b[h, 0, 1] = -m_h * distance: the slope, read where the bias is largest.
    const double slope = -double{out[h * 4 + 1]} / static_cast<double>(c.distance);
    if (!(slope > 0 && slope < 1)) {
      o.failure = fmt::format("(2) head {} of {}: slope {} is not in (0, 1)", h, c.heads, slope);
      return o;
    }
    if (h < static_cast<std::size_t>(p) && h > 0 && !(slope < previous)) {
      o.failure = fmt::format("(3) head {} of {}: slope {} does not decrease from {}", h, c.heads, slope, previous);
      return o;
    }
    previous = slope;
    const Real want = exact[h] * Real(c.distance);
    const double err =
        std::fabs(ref::to_double(Real(-double{out[h * 4 + 1]}) - want)) / (unit_roundoff(dt) * ref::to_double(want));
    worst.offer(err, [&] {
      return fmt::format("(1) head {} of {}: slope {:.9g}, the paper's {:.9g}", h, c.heads, slope,
                         ref::to_double(exact[h]));
    });
  }
  return worst.store(o);
}

}  // namespace
}  // namespace alibi_slopes_detail

Property alibi_slopes() {
  using namespace alibi_slopes_detail;
  return make_property<SlopesCase>(
      {.id = "alibi.slopes",
       .statement =
           "For every head count 1..64 the slopes are the paper's, in (0, 1), decreasing over the first 2^k heads.",
       .family = Family::alibi,
       .op = Op::alibi_bias},
      cases, check);
}

}  // namespace pecheck::props
