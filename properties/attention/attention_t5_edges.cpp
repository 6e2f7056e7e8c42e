// T5's bias inside attention at a bucket edge: where a key's distance p_j - p_i has its log
// coordinate within tol::kT5TieWindow of an integer, a bucketing that takes the log in fp32 (HF's)
// may land in the neighbouring bucket, and either bucket's output is a correct one. The judge takes,
// for each query row, the choice of bucket at its edge distances whose output is nearest the
// encoder's (t5.bucket_laws accepts both sides on the bias alone the same way).
#include <algorithm>
#include <cmath>
#include <limits>

#include "harness/tolerance.hpp"
#include "properties/attention/attention_cases.hpp"

namespace pecheck::props {

namespace {
/// At most this many edge distances in one query row are weighed (2^8 choices); a row with more
/// keeps the exact buckets. HF's 32 buckets and 128 have six (+-16, +-32, +-64).
constexpr std::size_t kMaxEdgeDistances = 8;
}  // namespace

void accept_t5_edges(const AttentionCase& c, const AttentionData& x, const std::vector<float>& out,
                     std::vector<double>& expected, std::vector<double>& err) {
  const AttentionSpec& s = c.spec;
  if (s.pe != AttentionPE::t5) return;
  const std::size_t n = c.n(), H = static_cast<std::size_t>(s.heads), d = static_cast<std::size_t>(s.head_dim),
                    KV = static_cast<std::size_t>(s.kv_count()), off = s.query_offset(n), nq = s.query_count(n);
  T5BucketsByDistance bucket(s.t5());
  const double scale = s.effective_scale();
  for (std::size_t r = 0; r < nq; ++r) {
    const std::size_t i = off + r, first = s.first_key(i), end = s.causal ? i + 1 : n;
    std::vector<std::int64_t> edges;  // this row's distinct edge distances: one choice each
    std::vector<int> edge_of(end - first, -1);
    for (std::size_t j = first; j < end; ++j) {
      const std::int64_t rel = c.positions[j] - c.positions[i];
      if (!bucket(rel).alternative) continue;
      auto at = std::find(edges.begin(), edges.end(), rel);
      if (at == edges.end()) at = edges.insert(edges.end(), rel);
      edge_of[j - first] = static_cast<int>(at - edges.begin());
    }
    if (edges.empty() || edges.size() > kMaxEdgeDistances) continue;
    for (std::size_t h = 0; h < H; ++h) {
      const std::size_t g = static_cast<std::size_t>(s.kv_head_of(static_cast<int>(h)));
      const std::size_t row = (r * H + h) * d;
      // Logits in double: the exact bucket's, and the other one's at an edge distance.
      std::vector<double> exact(end - first), other(end - first);
      for (std::size_t j = first; j < end; ++j) {
        double dot = 0;
        for (std::size_t e = 0; e < d; ++e) dot += double{x.q[row + e]} * x.k[(j * KV + g) * d + e];
        const ref::T5Bucket& b = bucket(c.positions[j] - c.positions[i]);
        exact[j - first] = scale * dot + x.table[static_cast<std::size_t>(b.bucket) * H + h];
        other[j - first] =
            b.alternative ? scale * dot + x.table[static_cast<std::size_t>(*b.alternative) * H + h] : exact[j - first];
      }
      const double top =
          std::max(*std::max_element(exact.begin(), exact.end()), *std::max_element(other.begin(), other.end()));
      // The keys off the edges once; each choice adds its edge keys' weights.
      double base_sum = 0;
      std::vector<double> base(d, 0.0);
      for (std::size_t j = first; j < end; ++j) {
        if (edge_of[j - first] >= 0) continue;
        const double w = std::exp(exact[j - first] - top);
        base_sum += w;
        for (std::size_t e = 0; e < d; ++e) base[e] += w * x.v[(j * KV + g) * d + e];
      }
      double best_gap = std::numeric_limits<double>::infinity(), best_sum = 1;
      unsigned best = 0;
      std::vector<double> o(d), best_o(d);
      for (unsigned choice = 0; choice < (1u << edges.size()); ++choice) {
        double sum = base_sum;
        o = base;
        for (std::size_t j = first; j < end; ++j) {
          const int at = edge_of[j - first];
          if (at < 0) continue;
          const double w = std::exp(((choice >> at) & 1u ? other : exact)[j - first] - top);
          sum += w;
          for (std::size_t e = 0; e < d; ++e) o[e] += w * x.v[(j * KV + g) * d + e];
        }
        double gap = 0;
        for (std::size_t e = 0; e < d; ++e) gap = std::max(gap, std::fabs(double{out[row + e]} - o[e] / sum));
        if (gap < best_gap) best_gap = gap, best = choice, best_o = o, best_sum = sum;
      }
      if (best == 0) continue;  // the exact buckets fit best: the reference's own output stays
      for (std::size_t e = 0; e < d; ++e) {
        expected[row + e] = best_o[e] / best_sum;
        err[row + e] = double{out[row + e]} - expected[row + e];
      }
    }
  }
}

}  // namespace pecheck::props
