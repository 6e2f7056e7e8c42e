// T5's bias inside attention at a bucket edge (props::accept_t5_edges): HF's 32 buckets and 128
// put distances 16, 32 and 64 on edges, where a bucketing that takes its log in fp32 may land in
// the neighbouring bucket. An output that took the other bucket there is judged as the correct one
// it is; one that took a wrong bucket anywhere else, or the relative position reversed, still fails.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "harness/tolerance.hpp"
#include "properties/attention/attention_cases.hpp"
#include "reference/t5.hpp"

namespace pecheck {
namespace {

/// 40 tokens at positions 0..39, two heads, head_dim 16, HF's bidirectional 32 buckets and 128.
props::AttentionCase hf_case() {
  props::AttentionCase c;
  c.spec.heads = 2;
  c.spec.head_dim = 16;
  c.spec.pe = AttentionPE::t5;
  c.spec.t5_buckets = 32;
  c.spec.t5_max_distance = 128;
  c.spec.t5_bidirectional = true;
  for (std::int64_t p = 0; p < 40; ++p) c.positions.push_back(p);
  c.data = 7;
  return c;
}

/// Attention in double over a bucket rule of the test's choosing, rounded once to f32.
std::vector<float> with_buckets(const props::AttentionCase& c, const props::AttentionData& x,
                                const std::function<int(std::int64_t)>& bucket_of) {
  const std::size_t n = c.n(), H = 2, d = 16;
  std::vector<float> out(n * H * d);
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t i = 0; i < n; ++i) {
      std::vector<double> w(n);
      double top = -INFINITY, sum = 0;
      for (std::size_t j = 0; j < n; ++j) {
        double dot = 0;
        for (std::size_t e = 0; e < d; ++e) dot += double{x.q[(i * H + h) * d + e]} * x.k[(j * H + h) * d + e];
        const auto b = static_cast<std::size_t>(bucket_of(c.positions[j] - c.positions[i]));
        w[j] = dot / std::sqrt(16.0) + x.table[b * H + h];
        top = std::max(top, w[j]);
      }
      for (double& l : w) sum += (l = std::exp(l - top));
      for (std::size_t e = 0; e < d; ++e) {
        double o = 0;
        for (std::size_t j = 0; j < n; ++j) o += w[j] * x.v[(j * H + h) * d + e];
        out[(i * H + h) * d + e] = static_cast<float>(o / sum);
      }
    }
  return out;
}

double worst_u(const props::AttentionCase& c, const props::AttentionData& x, const std::vector<float>& out) {
  std::vector<double> expected;
  const std::vector<double> err = props::errors_from_exact(c, x, out, expected);
  double worst = 0;
  for (double e : err) worst = std::max(worst, std::fabs(e));
  return worst / unit_roundoff(DType::f32);
}

TEST(T5Edges, TheOtherBucketAtAnEdgeIsJudgedCorrect) {
  const props::AttentionCase c = hf_case();
  const props::AttentionData x = props::attention_data(c, DType::f32);
  const T5Spec s = c.spec.t5();
  const auto exact = [&](std::int64_t rel) { return ref::t5_bucket<double>(s, rel, 0.0).bucket; };
  const auto other = [&](std::int64_t rel) {
    return ref::t5_bucket<double>(s, rel, tol::kT5TieWindow).alternative.value_or(exact(rel));
  };
  // The edges are where HF's configuration puts them, and the other bucket's bias differs there.
  int edges = 0;
  for (std::int64_t rel = -39; rel <= 39; ++rel) edges += other(rel) != exact(rel);
  ASSERT_EQ(edges, 4) << "distances +-16 and +-32 below 40";
  const double bound = 2;  // a double computation rounded once: within 1 u, here with room
  EXPECT_LT(worst_u(c, x, with_buckets(c, x, exact)), bound);
  EXPECT_LT(worst_u(c, x, with_buckets(c, x, other)), bound) << "the other bucket at every edge";
  // Only at +16: a choice per distance, not one for the whole row.
  EXPECT_LT(worst_u(c, x, with_buckets(c, x, [&](std::int64_t rel) { return rel == 16 ? other(rel) : exact(rel); })),
            bound);
}

TEST(T5Edges, AWrongBucketOffTheEdgesStillFails) {
  const props::AttentionCase c = hf_case();
  const props::AttentionData x = props::attention_data(c, DType::f32);
  const T5Spec s = c.spec.t5();
  const auto exact = [&](std::int64_t rel) { return ref::t5_bucket<double>(s, rel, 0.0).bucket; };
  // Distance 20 in the bucket of 24 (one bucket up, off any edge), and the position reversed.
  EXPECT_GT(worst_u(c, x, with_buckets(c, x, [&](std::int64_t rel) { return exact(rel == 20 ? 24 : rel); })), 1e3);
  EXPECT_GT(worst_u(c, x, with_buckets(c, x, [&](std::int64_t rel) { return exact(-rel); })), 1e3);
}

}  // namespace
}  // namespace pecheck
