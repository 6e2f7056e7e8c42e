// Theorem: causal sliding-window attention (query i sees keys i - W < j <= i) is plain causal
// attention once the window spans the sequence (W >= n), and is the token's own value at W = 1.
// Doc: docs/properties/attention.window_limits.md
#include "harness/runner.hpp"
#include "properties/attention/attention_cases.hpp"
#include "properties/catalogue.hpp"

namespace pecheck::props {

namespace attention_window_limits_detail {
namespace {

/// Causal cases (every PE; grouped-query drawn in too) with W = n + 0..3 (law 1) or W = 1 (law 2,
/// not with the sinusoid, which moves V itself).
rc::Gen<AttentionCase> cases(DType dt) {
  return rc::gen::mapcat(
      with_grouped_queries(attention_case_gen(dt, all_attention_pes(), false, 1)), [](AttentionCase c) {
        c.spec.causal = true;
        const bool own = c.spec.pe != AttentionPE::sinusoidal;
        const int n = static_cast<int>(c.n());
        return rc::gen::map(own ? rc::gen::weightedOneOf<int>({{1, rc::gen::just(1)}, {1, rc::gen::inRange(n, n + 4)}})
                                : rc::gen::inRange(n, n + 4),
                            [c](int window) {
                              AttentionCase w = c;
                              w.spec.window = window;
                              return w;
                            });
      });
}

Outcome check(Encoder& enc, DType dt, const AttentionCase& c, const RunParams& params) {
  const AttentionData x = attention_data(c, dt);
  const AttentionBound b = attention_bound(c, dt, x, params.contract);
  if (c.spec.window == 1 && c.n() > 1) {
    // (2) One key, weight exactly 1: o_(i,h) = v_(i, kv head of h), within b of that exact value.
    Outcome o{.bound_u = b.bound_u, .trivial = admits_any_output(b.bound_u, dt)};
    const auto out = encoder_attention(enc, dt, c, x, c.positions, o.failure);
    if (!o.failure.empty()) return o;
    const std::size_t H = static_cast<std::size_t>(c.spec.heads), KV = static_cast<std::size_t>(c.spec.kv_count()),
                      d = static_cast<std::size_t>(c.spec.head_dim);
    std::vector<float> own(out.size());
    for (std::size_t t = 0; t < c.n(); ++t)
      for (std::size_t h = 0; h < H; ++h)
        for (std::size_t e = 0; e < d; ++e)
          own[(t * H + h) * d + e] =
              x.v[(t * KV + static_cast<std::size_t>(c.spec.kv_head_of(static_cast<int>(h)))) * d + e];
    o.error_u = max_abs_diff_u(out, own, dt, b.max_v, &o.where);
    o.where = "(2) W = 1: " + o.where;
    return o;
  }
  // (1) W >= n: the window masks nothing the causal mask does not; one exact output, 2b.
  AttentionCase plain = c;
  plain.spec.window = 0;
  Outcome o{.bound_u = 2 * b.bound_u, .trivial = admits_any_output(2 * b.bound_u, dt)};
  const auto windowed = encoder_attention(enc, dt, c, x, c.positions, o.failure);
  const auto causal = encoder_attention(enc, dt, plain, x, c.positions, o.failure);
  if (!o.failure.empty()) return o;
  o.error_u = max_abs_diff_u(windowed, causal, dt, b.max_v, &o.where);
  o.where = "(1) W >= n: " + o.where;
  return o;
}

}  // namespace
}  // namespace attention_window_limits_detail

Property attention_window_limits() {
  using namespace attention_window_limits_detail;
  return make_property<AttentionCase>(
      {.id = "attention.window_limits",
       .statement = "Causal sliding-window attention (query i sees keys i - W < j <= i) equals plain causal "
                    "attention when W >= n, and returns each token's own value when W = 1.",
       .family = Family::attention,
       .op = Op::attention,
       .pinnable = true},
      cases, check);
}

}  // namespace pecheck::props
