// Theorem: each attention output is a convex combination of the value rows it attends to: every
// output coordinate lies between the smallest and largest of those values, and when all those
// rows are equal the output is that row (the softmax weights sum to 1).
// Doc: docs/properties/attention.convex_combination.md
#include "harness/runner.hpp"
#include "properties/attention/attention_cases.hpp"
#include "properties/catalogue.hpp"
#include "reference/attention.hpp"

namespace pecheck::props {

namespace attention_convex_combination_detail {
namespace {

rc::Gen<AttentionCase> cases(DType dt) { return attention_case_gen(dt, all_attention_pes(), true, 1); }

/// Largest distance, in units u max|V'|, of an output coordinate outside [min_j v'_j, max_j v'_j]
/// over the keys j its query attends to.
double hull_violation(const AttentionCase& c, DType dt, const AttentionData& x, const std::vector<float>& out,
                      double max_v, std::string& where) {
  const std::size_t n = c.n(), H = static_cast<std::size_t>(c.spec.heads),
                    d = static_cast<std::size_t>(c.spec.head_dim);
  ref::AttentionInputs<double> in{{x.q.begin(), x.q.end()}, {x.k.begin(), x.k.end()}, {x.v.begin(), x.v.end()}};
  const auto v = ref::attention_transform_inputs<double>(c.spec, c.positions, in).v;
  double worst = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t k = 0; k < d; ++k) {
        double lo = INFINITY, hi = -INFINITY;
        for (std::size_t j = 0; j < (c.spec.causal ? i + 1 : n); ++j) {
          lo = std::min(lo, v[(j * H + h) * d + k]);
          hi = std::max(hi, v[(j * H + h) * d + k]);
        }
        const double o = out[(i * H + h) * d + k];
        const double outside = std::max({lo - o, o - hi, 0.0}) / (unit_roundoff(dt) * max_v);
        if (outside > worst)
          worst = outside,
          where = fmt::format("token {} head {} dim {}: {} outside [{:.9g}, {:.9g}]", i, h, k, o, lo, hi);
      }
  return worst;
}

Outcome check(Encoder& enc, DType dt, const AttentionCase& c, const RunParams& params) {
  const AttentionData x = attention_data(c, dt);
  const AttentionBound b = attention_bound(c, dt, x, params.contract);
  Outcome o{.bound_u = b.bound_u, .trivial = admits_any_output(b.bound_u, dt)};
  const auto out = encoder_attention(enc, dt, c, x, c.positions, o.failure);
  if (!o.failure.empty()) return o;
  // (1) inside the hull of the attended value rows.
  o.error_u = hull_violation(c, dt, x, out, b.max_v, o.where);
  // (2) equal value rows give that row back: the weights sum to 1. Not with the sinusoid, which
  // adds a different PE(pos) to each value row.
  if (c.spec.pe == AttentionPE::sinusoidal) return o;
  AttentionData same = x;
  const std::size_t w = static_cast<std::size_t>(c.spec.width());
  for (std::size_t i = w; i < same.v.size(); ++i) same.v[i] = x.v[i % w];
  const AttentionBound bs = attention_bound(c, dt, same, params.contract);
  o.trivial = o.trivial && admits_any_output(bs.bound_u, dt);  // trivial only if neither half can fail
  const auto flat = encoder_attention(enc, dt, c, same, c.positions, o.failure);
  if (!o.failure.empty()) return o;
  std::string where;
  const double err =
      max_abs_diff_u(flat, permute_rows(same.v, std::vector<std::size_t>(c.n(), 0), w), dt, bs.max_v, &where);
  if (err / bs.bound_u > o.error_u / o.bound_u)
    o.error_u = err, o.bound_u = bs.bound_u, o.where = "equal value rows: " + where;
  return o;
}

}  // namespace
}  // namespace attention_convex_combination_detail

Property attention_convex_combination() {
  using namespace attention_convex_combination_detail;
  return make_property<AttentionCase>(
      {.id = "attention.convex_combination",
       .statement =
           "Each output lies in the convex hull of the value rows it attends to; equal rows come back unchanged.",
       .family = Family::attention,
       .op = Op::attention,
       .pinnable = true},
      cases, check);
}

}  // namespace pecheck::props
