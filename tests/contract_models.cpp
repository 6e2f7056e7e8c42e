#include "tests/contract_models.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "harness/contract_ladder.hpp"
#include "properties/registry.hpp"
#include "reference/attention.hpp"
#include "reference/rope.hpp"

namespace pecheck::sharpness {

void AlignedRopeInsideAttention::run(const Attention& c) {
  if (c.spec.pe != AttentionPE::rope) return scalar_->run(c);
  const AttentionSpec& s = c.spec;
  const RopeSpec r = s.rope();
  const measure::ContractBounds bounds(c.dtype, r);
  const std::size_t n = c.positions.size(), nq = s.query_count(n), off = s.query_offset(n),
                    d = static_cast<std::size_t>(s.head_dim), H = static_cast<std::size_t>(s.heads),
                    KV = static_cast<std::size_t>(s.kv_count());
  const ref::AttentionInputs<double> in{{c.q.begin(), c.q.end()}, {c.k.begin(), c.k.end()}, {c.v.begin(), c.v.end()}};
  const ref::AttentionInputs<double> t = ref::attention_transform_inputs<double>(s, c.positions, in);
  AttentionSpec plain = s;
  plain.pe = AttentionPE::none;
  const double u = unit_roundoff(c.dtype), scale_sign = plain.effective_scale() < 0 ? -1.0 : 1.0;
  // The way the output is pushed: toward v_jd above o_d where the first position is even, away where
  // it is odd, so that two calls an odd shift apart err opposite ways (translation invariance).
  const double push = k_ * (c.positions.empty() || c.positions[0] % 2 == 0 ? 1.0 : -1.0);
  ref::AttentionInputs<double> moved = t;
  // Pair p of row `row` of x (a (tokens, heads, head_dim) tensor): its two dims' offsets.
  const auto dims = [&](std::size_t row, int p) {
    const auto [a, b] = ref::rope_pair(r, p);
    return std::pair{row * d + static_cast<std::size_t>(a), row * d + static_cast<std::size_t>(b)};
  };
  for (std::size_t g = 0; g < KV; ++g) {
    const int h = static_cast<int>(g * (H / KV));
    const ref::Matrix<double> p = ref::softmax_rows(ref::attention_logits<double>(plain, c.positions, t, {}, h));
    const ref::Matrix<double> v = ref::head_matrix(t.v, n, s.kv_count(), s.head_dim, static_cast<int>(g));
    // The target: the (query row, dim) whose output a logit move shifts most.
    double best = -1, target_o = 0;
    std::size_t row = 0, dim = 0;
    for (std::size_t i = 0; i < nq; ++i)
      for (std::size_t e = 0; e < d; ++e) {
        double o = 0, spread = 0;
        for (std::size_t j = 0; j < n; ++j)
          o += p(Eigen::Index(i), Eigen::Index(j)) * v(Eigen::Index(j), Eigen::Index(e));
        for (std::size_t j = 0; j < n; ++j)
          spread += p(Eigen::Index(i), Eigen::Index(j)) * std::fabs(v(Eigen::Index(j), Eigen::Index(e)) - o);
        if (spread > best) best = spread, target_o = o, row = i, dim = e;
      }
    const std::size_t token = off + row, q_row = row * H + static_cast<std::size_t>(h);
    std::vector<double> toward(d, 0.0);  // sum_j p_j |v_jd - o_d| s_j k'_j: where the query is pushed
    for (std::size_t j = s.first_key(token); j < (s.causal ? token + 1 : n); ++j) {
      const double gap = v(Eigen::Index(j), Eigen::Index(dim)) - target_o, sj = gap < 0 ? -scale_sign : scale_sign;
      const std::size_t k_row = j * KV + g;
      for (int pair = 0; pair < r.rotary_dim / 2; ++pair) {
        const auto [a, b] = dims(k_row, pair);
        const auto [qa, qb] = dims(q_row, pair);
        toward[qa - q_row * d] += p(Eigen::Index(row), Eigen::Index(j)) * gap * t.k[a] * scale_sign;
        toward[qb - q_row * d] += p(Eigen::Index(row), Eigen::Index(j)) * gap * t.k[b] * scale_sign;
        const double qn = std::hypot(t.q[qa], t.q[qb]);
        if (qn == 0) continue;
        const double reach = std::max(std::hypot(t.k[a], t.k[b]), std::hypot(in.k[a], in.k[b]));
        const double step = push * sj * bounds.at(contract_, pair, c.positions[j]) * u * reach / qn;
        moved.k[a] += step * t.q[qa], moved.k[b] += step * t.q[qb];
      }
    }
    for (int pair = 0; pair < r.rotary_dim / 2; ++pair) {
      const auto [a, b] = dims(q_row, pair);
      const double along = std::hypot(toward[a - q_row * d], toward[b - q_row * d]);
      if (along == 0) continue;
      const double reach = std::max(std::hypot(t.q[a], t.q[b]), std::hypot(in.q[a], in.q[b]));
      const double step = push * bounds.at(contract_, pair, c.positions[token]) * u * reach / along;
      moved.q[a] += step * toward[a - q_row * d], moved.q[b] += step * toward[b - q_row * d];
    }
  }
  const std::vector<double> out = ref::attention_core<double>(plain, c.positions, moved, {});
  for (std::size_t i = 0; i < out.size(); ++i) c.out[i] = round_to(c.dtype, out[i]);
}

PropertyResult judge(const Row& row, double k) {
  const std::string law = row.law;
  // The ceilings the ladder draws below: RoPE's relational laws' (2^19), attention's RoPE's (2048).
  RunParams params{.seed = 5, .cases = 100};
  params.contract = row.contract;
  params.max_position = tol::rope_law_ceiling(row.contract, row.dt);
  if (law.starts_with("attention."))
    params = under_contract(Op::attention, row.contract, RunParams{.seed = 5, .cases = 100});
  const bool scaled_only = law == "rope.linear_scaling" || law == "rope.ntk_base";
  std::unique_ptr<Encoder> enc;
  if (row.aligned)
    enc = std::make_unique<AlignedRopeInsideAttention>(row.contract, k);
  else if (law.starts_with("attention.") && row.contract == Contract::rounded_p)
    enc = std::make_unique<AmplifiedP>(k);
  else if (law.starts_with("attention."))
    enc = std::make_unique<AmplifiedRopeInsideAttention>(row.contract, k);
  else if (law.starts_with("sinusoidal."))
    enc = std::make_unique<AmplifiedSinusoid>(row.contract, k);
  else
    enc = std::make_unique<AmplifiedRope>(row.contract, k, scaled_only);
  return registered_property(law).run(*enc, row.dt, params);
}

namespace {
std::string label(const Row& row) {
  return std::string(row.law) + " " + std::string(tol::contract_name(row.contract)) + " " +
         std::string(dtype_name(row.dt)) + (row.aligned ? " aligned" : "");
}
}  // namespace

void expect_the_model_holds(std::span<const Row> rows) {
  for (const Row& row : rows) {
    const PropertyResult r = judge(row, 1);
    EXPECT_EQ(verdict_name(r.verdict), "pass") << label(row) << ": " << r.message;
    EXPECT_GE(r.nontrivial_cases, 90) << label(row);
  }
}

void expect_each_fails_just_past(std::span<const Row> rows) {
  // K fails and K/2 passes: a bound loosened (or the law judged under another contract's bound)
  // moves K, and so does one tightened; either way the table and the page's must change together.
  for (const Row& row : rows) {
    const PropertyResult past = judge(row, row.just_past);
    EXPECT_EQ(verdict_name(past.verdict), "fail") << label(row) << " at k = " << row.just_past;
    const PropertyResult within = judge(row, row.just_past / 2);
    EXPECT_EQ(verdict_name(within.verdict), "pass")
        << label(row) << " at k = " << row.just_past / 2 << ": " << within.message;
    std::printf("%-60s K = %-4g %.4g u against %.4g u\n", label(row).c_str(), row.just_past, past.max_error_u,
                past.bound_u);
  }
}

void measure_the_table(std::span<const Row> rows) {
  for (const Row& row : rows) {
    double k = 1;
    while (k < 4096 && judge(row, k).verdict == Verdict::pass) k *= 2;
    std::printf("%-60s K = %g (table: %g)\n", label(row).c_str(), k, row.just_past);
  }
}

}  // namespace pecheck::sharpness
