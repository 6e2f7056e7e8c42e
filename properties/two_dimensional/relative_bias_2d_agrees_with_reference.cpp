// Theorem: every 2-D relative bias entry is exactly the table entry HF's relative_position_index
// names for its patches' offset (query minus key), or the class token's row.
// Doc: docs/properties/relative_bias_2d.agrees_with_reference.md
#include "harness/runner.hpp"
#include "properties/catalogue.hpp"
#include "properties/two_dimensional/relative_bias_2d_cases.hpp"
#include "reference/relative_bias_2d.hpp"

namespace pecheck::props {

namespace relative_bias_2d_agrees_with_reference_detail {
namespace {

rc::Gen<RelativeBias2dCase> cases(DType) { return relative_bias_2d_case_gen(); }

Outcome check(Encoder& enc, DType dt, const RelativeBias2dCase& c) {
  Outcome o;
  const auto [rows, cols] = c.grid();
  const std::size_t H = static_cast<std::size_t>(c.spec.heads), n = rows.size();
  const auto table = relative_bias_2d_table(c, dt);
  const auto out = encoder_relative_bias_2d(enc, dt, c, table, rows, cols, o.failure);
  if (!o.failure.empty()) return o;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const auto row = static_cast<std::size_t>(c.spec.table_row(rows, cols, i, j));
      for (std::size_t h = 0; h < H; ++h) {
        const float got = out[(h * n + i) * n + j], want = table[row * H + h];
        if (got == want) continue;
        const bool by_offset = !c.spec.class_token || (i > 0 && j > 0);
        o.failure = fmt::format("head {} query {} key {} ({}): bias {:.9g}, expected table[{}] = {:.9g}", h, i, j,
                                by_offset ? fmt::format("offset ({}, {})", rows[i] - rows[j], cols[i] - cols[j])
                                          : std::string("the class token"),
                                got, row, want);
        return o;
      }
    }
  return o;
}

}  // namespace
}  // namespace relative_bias_2d_agrees_with_reference_detail

Property relative_bias_2d_agrees_with_reference() {
  using namespace relative_bias_2d_agrees_with_reference_detail;
  return make_property<RelativeBias2dCase>(
      {.id = "relative_bias_2d.agrees_with_reference",
       .statement = "Each 2-D relative bias entry is the table entry of its patches' offset (HF's "
                    "relative_position_index), or of the class token's row.",
       .family = Family::relative_bias_2d,
       .op = Op::relative_bias_2d,
       .pinnable = true},
      cases, check);
}

}  // namespace pecheck::props
