// Theorem: moving every patch by the same (a, b) leaves the 2-D relative bias unchanged, bit for
// bit: each entry reads the table at an offset, and a common move changes no offset.
// Doc: docs/properties/relative_bias_2d.translation_invariance.md
#include "harness/runner.hpp"
#include "properties/catalogue.hpp"
#include "properties/two_dimensional/relative_bias_2d_cases.hpp"

namespace pecheck::props {

namespace relative_bias_2d_translation_invariance_detail {
namespace {

rc::Gen<RelativeBias2dCase> cases(DType) { return relative_bias_2d_case_gen(); }

/// The case's positions moved by a non-zero shift on each axis, drawn from its data seed (the class
/// token's too: it is not read, and an encoder that reads it is wrong either way).
RelativeBias2dCase::Grid moved(const RelativeBias2dCase& c) {
  auto [rows, cols] = c.grid();
  const auto shift = [](std::vector<std::int64_t>& p, std::int64_t t) {
    std::vector<std::int64_t*> ptrs;
    for (auto& v : p) ptrs.push_back(&v);
    const std::int64_t by = gen::nonzero_shift(ptrs, t);
    for (auto& v : p) v += by;
  };
  // A move by a multiple of the window would hide a kernel that reduces coordinates modulo the
  // window (mutant-relative-bias-2d-modulo-window): the drawn amount is stepped off one, though
  // nonzero_shift's clamp near 2^24 may still land on one.
  const auto amount = [](std::uint32_t draw, int window) {
    const std::int64_t t = static_cast<std::int64_t>(draw % 4096) + 1;
    return t % window == 0 ? t + 1 : t;
  };
  shift(rows, amount(c.data, c.spec.window_rows));
  shift(cols, amount(c.data / 4096, c.spec.window_cols));
  return {rows, cols};
}

Outcome check(Encoder& enc, DType dt, const RelativeBias2dCase& c) {
  Outcome o;
  const auto table = relative_bias_2d_table(c, dt);
  const auto [rows0, cols0] = c.grid();
  const auto at = encoder_relative_bias_2d(enc, dt, c, table, rows0, cols0, o.failure);
  const auto [rows, cols] = moved(c);
  const auto there = encoder_relative_bias_2d(enc, dt, c, table, rows, cols, o.failure);
  if (!o.failure.empty()) return o;
  const std::size_t n = rows0.size();
  for (std::size_t e = 0; e < at.size(); ++e) {
    if (at[e] == there[e]) continue;
    const std::size_t h = e / (n * n), i = e / n % n, j = e % n;
    o.failure = fmt::format(
        "head {} query {} key {}: bias {:.9g} at ({}, {}) against ({}, {}), {:.9g} with every "
        "patch moved by ({}, {})",
        h, i, j, at[e], rows0[i], cols0[i], rows0[j], cols0[j], there[e], rows.back() - rows0.back(),
        cols.back() - cols0.back());
    return o;
  }
  return o;
}

}  // namespace
}  // namespace relative_bias_2d_translation_invariance_detail

Property relative_bias_2d_translation_invariance() {
  using namespace relative_bias_2d_translation_invariance_detail;
  return make_property<RelativeBias2dCase>(
      {.id = "relative_bias_2d.translation_invariance",
       .statement = "Moving every patch by the same (a, b) leaves the 2-D relative bias unchanged, bit for bit.",
       .family = Family::relative_bias_2d,
       .op = Op::relative_bias_2d,
       .convention_free = true,
       .pinnable = true},
      cases, check);
}

}  // namespace pecheck::props
