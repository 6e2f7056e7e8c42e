// Theorem: the learned encoder returns x + E[pos], rounded once, for every position inside the
// table, and refuses (std::out_of_range) a position outside it instead of wrapping.
// Doc: docs/properties/learned.agrees_with_reference.md
#include <fmt/ranges.h>

#include "harness/flush_to_zero.hpp"
#include "harness/generators.hpp"
#include "harness/measure.hpp"
#include "harness/runner.hpp"
#include "harness/tolerance.hpp"
#include "properties/catalogue.hpp"
#include "reference/learned.hpp"

namespace pecheck::props {

/// In pecheck::props, not the anonymous namespace, so that showValue finds it by ADL.
struct LearnedCase {
  LearnedSpec spec;
  std::vector<std::int64_t> positions;
  std::int64_t outside = 0;  ///< a position just outside the table, which must be refused
  std::uint32_t data = 0;

  std::string describe() const {
    return fmt::format("{} pos=[{}] outside={} data={}", spec.describe(), fmt::join(positions, ","), outside, data);
  }
  std::vector<std::string> tags() const { return {gen::dim_class(spec.d_model)}; }
};

namespace learned_agrees_with_reference_detail {
namespace {

rc::Gen<LearnedCase> cases(DType) {
  return rc::gen::mapcat(rc::gen::pair(rc::gen::inRange(1, 2049), rc::gen::inRange(1, 97)), [](auto dims) {
    const auto [max_len, d] = dims;
    return rc::gen::apply(
        [max_len = max_len, d = d](std::vector<std::int64_t> p, bool above, std::int64_t far, std::uint32_t data) {
          const std::int64_t outside = above ? max_len + far % 3 : -1 - far % 3;
          return LearnedCase{{max_len, d}, p, outside, data};
        },
        rc::gen::container<std::vector<std::int64_t>>(
            4, rc::gen::weightedOneOf<std::int64_t>({{1, rc::gen::just<std::int64_t>(0)},
                                                     {1, rc::gen::just<std::int64_t>(max_len - 1)},
                                                     {3, rc::gen::inRange<std::int64_t>(0, max_len)}})),
        rc::gen::arbitrary<bool>(), rc::gen::inRange<std::int64_t>(0, 1000), gen::data_seed());
  });
}

Outcome check(Encoder& enc, DType dt, const LearnedCase& c) {
  Outcome o{.bound_u = tol::learned_add(dt)};
  const std::size_t d = static_cast<std::size_t>(c.spec.d_model);
  const auto table = gen::values(c.data, 1, static_cast<std::size_t>(c.spec.max_len) * d, dt);
  const auto x0 = gen::values(c.data, 2, c.positions.size() * d, dt);
  auto x = x0;
  enc.run(LearnedAdd{c.spec, dt, table, c.positions, x});
  if (o.failure = classify_outputs(dt, x, "y"); !o.failure.empty()) return o;
  // The reference on the rows this case reads, gathered (row t = E[pos_t]): the same sums without
  // converting the whole table (up to 2048 x 96 entries) to the reference's Real.
  std::vector<float> rows(c.positions.size() * d);
  std::vector<std::int64_t> gathered(c.positions.size());
  for (std::size_t t = 0; t < c.positions.size(); ++t) {
    ref::check_learned_position(c.spec, c.positions[t]);
    std::copy_n(table.begin() + static_cast<std::ptrdiff_t>(c.positions[t]) * static_cast<std::ptrdiff_t>(d), d,
                rows.begin() + static_cast<std::ptrdiff_t>(t * d));
    gathered[t] = static_cast<std::int64_t>(t);
  }
  const LearnedSpec row_spec{static_cast<int>(c.positions.size()), c.spec.d_model};
  const auto exact = ref::learned_add<Real>(row_spec, to_real(rows), gathered, to_real(x0));
  WorstOf worst;
  const double flushed = gen::flushed_value_slack();  // a sum below FLT_MIN a stated FTZ platform flushes
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double e = ref::to_double(exact[i]);
    const double err = std::max(std::fabs(ref::to_double(Real(x[i]) - exact[i])) - flushed, 0.0) /
                       (unit_roundoff(dt) * std::max(std::fabs(e), min_normal(dt)));
    worst.offer(err, [&] { return fmt::format("token {} dim {} (got {}, exact {:.9g})", i / d, i % d, x[i], e); });
  }
  // A position outside the table is an error, never a wrap to pos mod max_len.
  std::vector<float> y = x0;
  y.resize(d);
  try {
    const std::int64_t bad[] = {c.outside};
    enc.run(LearnedAdd{c.spec, dt, table, bad, y});
    o.failure = fmt::format("position {} outside [0, {}) was accepted", c.outside, c.spec.max_len);
  } catch (const std::out_of_range&) {
  }
  return worst.store(o);
}

}  // namespace
}  // namespace learned_agrees_with_reference_detail

Property learned_agrees_with_reference() {
  using namespace learned_agrees_with_reference_detail;
  return make_property<LearnedCase>(
      {.id = "learned.agrees_with_reference",
       .statement = "y = x + E[pos] rounded once for positions in the table; a position outside it is refused.",
       .family = Family::learned,
       .op = Op::learned_add},
      cases, check);
}

}  // namespace pecheck::props
