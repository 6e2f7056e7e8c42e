// Theorem: a KV-cache decode (P tokens prefilled, then calls of one or a few queries over every
// key so far, the causal mask aligned bottom-right) equals full causal attention row for row.
// Doc: docs/properties/attention.decode_equivalence.md
#include <algorithm>

#include "harness/runner.hpp"
#include "properties/attention/attention_cases.hpp"
#include "properties/catalogue.hpp"

namespace pecheck::props {

namespace attention_decode_equivalence_detail {
namespace {

/// causal_case_gen's cases with P prefilled tokens in [max(1, n - 8), n - 1], so that a long
/// case's decode steps cross its tile edge, and steps of 1 query (weight 3), 2 or 3.
rc::Gen<AttentionCase> cases(DType dt) {
  const auto base = causal_case_gen(dt);
  return rc::gen::mapcat(base, [](AttentionCase c) {
    const int n = static_cast<int>(c.n());
    return rc::gen::map(
        rc::gen::tuple(rc::gen::inRange(std::max(1, n - 8), n),
                       rc::gen::weightedOneOf<int>({{3, rc::gen::just(1)}, {1, rc::gen::element(2, 3)}})),
        [c](std::tuple<int, int> ps) {
          AttentionCase d = c;
          std::tie(d.prefill, d.step) = ps;
          return d;
        });
  });
}

Outcome check(Encoder& enc, DType dt, const AttentionCase& c, const RunParams& params) {
  const AttentionData x = attention_data(c, dt);
  // Each decoded row and the full call's row have one exact value (row t of causal attention reads
  // keys 0..t only); each call is within the bound of its own case, at most the full case's.
  const AttentionBound b = attention_bound(c, dt, x, params.contract);
  Outcome o{.bound_u = 2 * b.bound_u, .trivial = admits_any_output(2 * b.bound_u, dt)};
  const auto full = encoder_attention(enc, dt, c, x, c.positions, o.failure);
  if (!o.failure.empty()) return o;
  const std::size_t n = c.n(), w = static_cast<std::size_t>(c.spec.width()), P = static_cast<std::size_t>(c.prefill),
                    step = static_cast<std::size_t>(c.step);
  std::vector<float> decoded;
  for (std::size_t t = P; t < n; t += step) {
    // The call of a decode step: queries t .. t + m - 1 over the cache of keys 0 .. t + m - 1.
    const std::size_t m = std::min(step, n - t);
    const auto out = encoder_attention_prefix(enc, dt, c, x, t + m, static_cast<int>(m), o.failure);
    if (!o.failure.empty()) {
      o.where = fmt::format("the decode call of queries {}..{}", t, t + m - 1);
      return o;
    }
    decoded.insert(decoded.end(), out.begin(), out.end());
  }
  WorstOf worst;
  const std::size_t d = static_cast<std::size_t>(c.spec.head_dim);
  for (std::size_t e = 0; e < decoded.size(); ++e) {
    const std::size_t at = P * w + e;
    const double diff = std::fabs(double{decoded[e]} - full[at]);
    worst.offer(diff / (unit_roundoff(dt) * b.max_v), [&] {
      return fmt::format("token {} head {} dim {}: decoded {} vs full {} (max|V'| = {:.4g})", at / w, at % w / d,
                         at % d, decoded[e], full[at], b.max_v);
    });
  }
  return worst.store(o);
}

}  // namespace
}  // namespace attention_decode_equivalence_detail

Property attention_decode_equivalence() {
  using namespace attention_decode_equivalence_detail;
  return make_property<AttentionCase>(
      {.id = "attention.decode_equivalence",
       .statement = "A KV-cache decode (P tokens prefilled, then calls of one or a few queries over every key so far, "
                    "the causal mask aligned bottom-right) equals full causal attention row for row.",
       .family = Family::attention,
       .op = Op::attention,
       .pinnable = true},
      cases, check);
}

}  // namespace pecheck::props
