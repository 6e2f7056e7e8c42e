// Theorem: a causal query's output does not depend on what else shares the call: row i of a call
// over n tokens equals, value for value, the same query alone over keys 0..i and row i of a call
// over tokens 0..i (opt-in: reproducibility, not correctness).
// Doc: docs/properties/attention.batch_invariance.md
#include <algorithm>

#include "harness/runner.hpp"
#include "properties/attention/attention_cases.hpp"
#include "properties/catalogue.hpp"

namespace pecheck::props {

namespace attention_batch_invariance_detail {
namespace {

rc::Gen<AttentionCase> cases(DType dt) { return causal_case_gen(dt); }

/// The rows checked: every row of a short case; of a long one its last 8 and one drawn from the
/// data seed (each alone costs a call over its prefix).
std::vector<std::size_t> rows_checked(const AttentionCase& c) {
  const std::size_t n = c.n();
  std::vector<std::size_t> rows;
  for (std::size_t i = n > 16 ? n - 8 : 0; i < n; ++i) rows.push_back(i);
  if (n > 16) rows.push_back(c.data % (n - 8));
  return rows;
}

Outcome check(Encoder& enc, DType dt, const AttentionCase& c) {
  const AttentionData x = attention_data(c, dt);
  const double max_v =
      attention_bound(c, dt, x, tol::Contract::exact).max_v;  // the metric's scale only: the bound is 0
  Outcome o{.bound_u = 0};
  const auto full = encoder_attention(enc, dt, c, x, c.positions, o.failure);
  if (!o.failure.empty()) return o;
  const std::size_t w = static_cast<std::size_t>(c.spec.width());
  WorstOf worst;
  // Row i of `other` (a call named `how`) against row i of the full call, value for value.
  const auto compare = [&](const std::vector<float>& other, std::size_t from, std::size_t i, const std::string& how) {
    for (std::size_t e = 0; e < w; ++e) {
      const float a = full[i * w + e], b = other[from + e];
      worst.offer(a == b ? 0.0 : std::fabs(double{a} - b) / (unit_roundoff(dt) * max_v), [&] {
        return fmt::format("token {} entry {}: {} in the call of all {} tokens, {} {}", i, e, a, c.n(), b, how);
      });
    }
  };
  const auto call = [&](std::size_t tokens, int queries) {
    return encoder_attention_prefix(enc, dt, c, x, tokens, queries, o.failure);
  };
  const std::vector<std::size_t> rows = rows_checked(c);
  for (std::size_t i : rows) {
    compare(call(i + 1, 1), 0, i, "alone over keys 0.." + std::to_string(i));
    if (!o.failure.empty()) return o;
  }
  // One row as the last of a shorter call (other lengths, other queries beside it).
  const std::size_t r = rows.back();
  compare(call(r + 1, 0), r * w, r, fmt::format("as the last row of a call of {} tokens", r + 1));
  if (!o.failure.empty()) return o;
  return worst.store(o);
}

}  // namespace
}  // namespace attention_batch_invariance_detail

Property attention_batch_invariance() {
  using namespace attention_batch_invariance_detail;
  return make_property<AttentionCase>(
      {.id = "attention.batch_invariance",
       .statement = "A causal query's output does not depend on what else shares the call: alone over its keys, or "
                    "as the last row of a shorter call, it is the value the whole call gives (opt-in: "
                    "reproducibility, not correctness).",
       .family = Family::attention,
       .op = Op::attention,
       .pinnable = true},
      cases, check);
}

}  // namespace pecheck::props
