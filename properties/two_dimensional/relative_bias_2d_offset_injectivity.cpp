// Theorem: with a table of distinct entries, two scores of one head read the same entry exactly
// when their patches have the same offset (or are the same class-token score): the table's rows
// and the offsets inside the window correspond one to one, whatever order the rows are kept in.
// Doc: docs/properties/relative_bias_2d.offset_injectivity.md
#include <map>
#include <tuple>

#include "harness/runner.hpp"
#include "properties/catalogue.hpp"
#include "properties/two_dimensional/relative_bias_2d_cases.hpp"
#include "spec/half_bits.hpp"

namespace pecheck::props {

namespace relative_bias_2d_offset_injectivity_detail {
namespace {

rc::Gen<RelativeBias2dCase> cases(DType) { return relative_bias_2d_case_gen(); }

/// A table whose entries within a head are distinct values of the dtype: row r reads the k-th
/// value of a run of consecutive normal ones (bf16 from 1.0 up, which f32 holds too; f16 from its
/// least normal up), k = (r p + data) mod M for an odd p and M a power of two at least the rows,
/// a bijection, so the rows' order varies with the case. Distinct only up to kDistinct rows (a
/// window of about 63 x 63); past that the values repeat and the case is trivial.
constexpr std::size_t kDistinct = 16384;
std::vector<float> distinct_table(const RelativeBias2dCase& c, DType dt) {
  const std::size_t R = static_cast<std::size_t>(c.spec.table_rows()), H = static_cast<std::size_t>(c.spec.heads);
  std::size_t M = 1;
  while (M < R) M *= 2;
  const std::size_t p = 2 * (c.data % 512) + 1;
  std::vector<float> t(R * H);
  for (std::size_t r = 0; r < R; ++r) {
    const auto k = static_cast<std::uint16_t>((r * p + c.data) % M % kDistinct);
    const float v = dt == DType::f16 ? static_cast<float>(f16_to_double(static_cast<std::uint16_t>(0x0400 + k)))
                                     : bf16_from_bits(static_cast<std::uint16_t>(0x3F80 + k));
    for (std::size_t h = 0; h < H; ++h) t[r * H + h] = h % 2 == 0 ? v : -v;
  }
  return t;
}

/// What a score reads: its offset, or which class-token score it is (kind 1 to 3).
using Key = std::tuple<int, std::int64_t, std::int64_t>;
Key key_of(const RelativeBias2dCase& c, const RelativeBias2dCase::Grid& g, std::size_t i, std::size_t j) {
  if (c.spec.class_token && (i == 0 || j == 0)) return {i == 0 && j == 0 ? 3 : i == 0 ? 1 : 2, 0, 0};
  return {0, g.rows[i] - g.rows[j], g.cols[i] - g.cols[j]};
}
std::string key_name(const Key& k) {
  const auto& [kind, dr, dc] = k;
  if (kind == 0) return fmt::format("offset ({}, {})", dr, dc);
  return kind == 1 ? "the class token's query" : kind == 2 ? "the class token as key" : "the class token's own score";
}

Outcome check(Encoder& enc, DType dt, const RelativeBias2dCase& c) {
  // A case with one distinct score cannot tell a row from another.
  const RelativeBias2dCase::Grid g = c.grid();
  const std::size_t n = g.rows.size();
  Outcome o{.trivial = n < 2 || static_cast<std::size_t>(c.spec.table_rows()) > kDistinct};
  const auto table = distinct_table(c, dt);
  const auto out = encoder_relative_bias_2d(enc, dt, c, table, g.rows, g.cols, o.failure);
  if (!o.failure.empty()) return o;
  for (std::size_t h = 0; h < static_cast<std::size_t>(c.spec.heads); ++h) {
    std::map<Key, std::pair<float, std::pair<std::size_t, std::size_t>>> by_key;
    std::map<float, std::pair<Key, std::pair<std::size_t, std::size_t>>> by_value;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        const float v = out[(h * n + i) * n + j];
        const Key k = key_of(c, g, i, j);
        const auto [kit, new_key] = by_key.try_emplace(k, v, std::pair{i, j});
        const auto [vit, new_value] = by_value.try_emplace(v, k, std::pair{i, j});
        if (!new_key && kit->second.first != v) {
          o.failure =
              fmt::format("head {}: query {} key {} and query {} key {} share {} and read {:.9g} and {:.9g}", h,
                          kit->second.second.first, kit->second.second.second, i, j, key_name(k), kit->second.first, v);
          return o;
        }
        if (!new_value && vit->second.first != k) {
          o.failure = fmt::format("head {}: query {} key {} ({}) and query {} key {} ({}) read the same entry {:.9g}",
                                  h, vit->second.second.first, vit->second.second.second, key_name(vit->second.first),
                                  i, j, key_name(k), v);
          return o;
        }
      }
  }
  return o;
}

}  // namespace
}  // namespace relative_bias_2d_offset_injectivity_detail

Property relative_bias_2d_offset_injectivity() {
  using namespace relative_bias_2d_offset_injectivity_detail;
  return make_property<RelativeBias2dCase>(
      {.id = "relative_bias_2d.offset_injectivity",
       .statement = "With a table of distinct entries, two scores of a head read the same entry exactly when their "
                    "patches have the same offset (or are the same class-token score).",
       .family = Family::relative_bias_2d,
       .op = Op::relative_bias_2d,
       .convention_free = true,
       .pinnable = true},
      cases, check);
}

}  // namespace pecheck::props
