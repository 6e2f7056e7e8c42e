// The rounded-P policy (docs/error-model.md, section 6): the exact attention contract requires the
// softmax probabilities P in fp32 where they meet V. A FlashAttention-2-style bf16 kernel that
// rounds P to bf16 before P.V can exceed that bound, and stays within the rounded-P contract's
// bound, attention_output + u_P/u. Simulated here: the kernel computes in double except for P
// (rounded to bf16) and the output (rounded to bf16), so every other term of the bound is slack.
// Then as a run judges it: a flash-style kernel that rounds P to its dtype meets every attention
// law under the rounded-P contract (contract=rounded_p), and one that rounds P to f16 whatever the
// dtype (mutant-attention-p-hard-coded-f16) meets no attention contract in f32; a RoPE bug inside
// attention fails under the weakest contract, fp32-angles, too.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "harness/contract_ladder.hpp"
#include "harness/generators.hpp"
#include "harness/tolerance.hpp"
#include "mutants/hand_written_softmax.hpp"
#include "mutants/mutants.hpp"
#include "properties/attention/attention_cases.hpp"
#include "properties/registry.hpp"

namespace pecheck {
namespace {

/// Plain attention (one head, head_dim 1, no mask) in double, P rounded to p_dtype for P.V when
/// `round_p`, the output rounded to storage when `round_out`.
std::vector<double> attention(const props::AttentionData& x, double scale, bool round_p, bool round_out, DType dt) {
  const std::size_t n = x.q.size();
  std::vector<double> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<double> s(n);
    for (std::size_t j = 0; j < n; ++j) s[j] = scale * double{x.q[i]} * x.k[j];
    const double m = *std::max_element(s.begin(), s.end());
    double num = 0, den = 0;
    for (std::size_t j = 0; j < n; ++j) {
      const double w = std::exp(s[j] - m);
      den += w;  // the running sum from the unrounded P, as FlashAttention-2 keeps it
      num += (round_p ? double{round_to(DType::bf16, w)} : w) * x.v[j];
    }
    out[i] = round_out ? double{round_to(dt, num / den)} : num / den;
  }
  return out;
}

TEST(RoundedPContract, ABf16PKernelCanExceedTheExactBoundAndStaysWithinItsOwn) {
  const DType dt = DType::bf16;
  const double u = unit_roundoff(dt);
  double worst_over_exact = 0, worst_over_rounded = 0;
  int beyond_exact = 0;
  for (std::uint32_t seed = 1; seed <= 20000; ++seed) {
    props::AttentionCase c;
    c.spec.heads = 1;
    c.spec.head_dim = 1;
    c.spec.pe = AttentionPE::none;
    c.positions.resize(2 + seed % 3);
    for (std::size_t i = 0; i < c.positions.size(); ++i) c.positions[i] = static_cast<std::int64_t>(i);
    const double qk = seed % 2 ? 1.0 : 3.0;
    const std::size_t n = c.positions.size();
    const props::AttentionData x{
        gen::values(seed, 1, n, dt, qk), gen::values(seed, 2, n, dt, qk), gen::values(seed, 3, n, dt), {}};
    const props::AttentionBound b = props::attention_bound(c, dt, x, tol::Contract::exact);
    const double scale = c.spec.effective_scale();
    const auto exact = attention(x, scale, false, false, dt), got = attention(x, scale, true, true, dt);
    double err = 0;
    for (std::size_t i = 0; i < n; ++i) err = std::max(err, std::fabs(got[i] - exact[i]) / (u * b.max_v));
    // attention_bound gives the exact contract's bound; the rounded-P contract adds u_P/u to it
    // (checked against tol::attention_output_rounded_p below).
    const double exact_bound = b.bound_u;
    const double rounded_bound = exact_bound + unit_roundoff(DType::bf16) / u;
    worst_over_exact = std::max(worst_over_exact, err / exact_bound);
    worst_over_rounded = std::max(worst_over_rounded, err / rounded_bound);
    beyond_exact += err > exact_bound;
  }
  const tol::AttentionMagnitudes tc{.dtype = dt, .n = 3, .dot_length = 1, .head_dim = 1, .scale = 1, .max_weighted = 9};
  EXPECT_DOUBLE_EQ(tol::attention_output_rounded_p(tc, DType::bf16) - tol::attention_output(tc), 1.0);
  // Not a bare failure for a legitimate bf16-P kernel: within its own contract on every case...
  EXPECT_LE(worst_over_rounded, 1.0);
  // ...while the exact contract, which requires P in fp32, fails it on some.
  EXPECT_GT(beyond_exact, 0);
  EXPECT_GT(worst_over_exact, 1.0);
  std::printf("bf16-P kernel: worst error / exact bound %.4f, / rounded-P bound %.4f, %d of 20000 beyond exact\n",
              worst_over_exact, worst_over_rounded, beyond_exact);
}

/// FlashAttention-2's loop in bf16 and f16: P rounded to the call's dtype where it meets V, the
/// running sum from the unrounded weights; key tiles of 16, so that long cases rescale.
struct RoundsPToItsDtype : mutants::TiledOnlineSoftmax {
  RoundsPToItsDtype() : TiledOnlineSoftmax("flash-style kernel, P in the dtype", 16) {}
  float p_at_v(float w, DType dt) const override { return round_to(dt, w); }
};

RunParams under(tol::Contract c) {
  RunParams rp{.seed = 11, .cases = 40};
  rp.contract = c;
  return rp;
}

TEST(RoundedPContract, AKernelRoundingPToItsDtypeMeetsEveryAttentionLawUnderIt) {
  int judged = 0;
  for (const DType dt : {DType::f32, DType::bf16, DType::f16})
    for (const Property& p : property_registry()) {
      if (p.op != Op::attention || !p.applies(dt)) continue;
      RoundsPToItsDtype kernel;
      const PropertyResult r = p.run(kernel, dt, under(tol::Contract::rounded_p));
      EXPECT_TRUE(r.verdict == Verdict::pass || r.verdict == Verdict::skip)
          << p.id << " " << dtype_name(dt) << ": " << r.message << " " << r.counterexample;
      judged += r.verdict == Verdict::pass && r.nontrivial_cases > 0;
    }
  EXPECT_GE(judged, 30);  // not a pass by skipping: most laws ran in every dtype
}

TEST(RoundedPContract, PRoundedToF16InAnF32KernelMeetsNoAttentionContract) {
  const Property& agreement = registered_property("attention.agrees_with_reference");
  const auto mutant = [] { return mutants::make_mutant_named("mutant-attention-p-hard-coded-f16"); };
  std::vector<tol::Contract> tried;
  PropertyResult decided;
  const ContractVerdict v = climb_contracts(
      Op::attention, DType::f32, std::nullopt,
      [&](tol::Contract c) {
        tried.push_back(c);
        return agreement.run(*mutant(), DType::f32, under(c));
      },
      decided);
  EXPECT_EQ(tried, (std::vector{tol::Contract::exact, tol::Contract::rounded_p, tol::Contract::dtype_trig,
                                tol::Contract::fp32_angles}));
  EXPECT_FALSE(v.met.has_value()) << v.describe();
  ASSERT_EQ(decided.verdict, Verdict::fail);
  EXPECT_GT(decided.counterexample_error_u, decided.counterexample_bound_u);
  // In bf16, f16 is the finer dtype: P rounded to it is within what rounding to bf16 may do.
  EXPECT_EQ(agreement.run(*mutant(), DType::bf16, under(tol::Contract::rounded_p)).verdict, Verdict::pass);
}

TEST(AttentionContracts, AttentionsRopeBugsStillFailUnderTheWeakestContract) {
  // fp32-angles lets the RoPE inside attention err as fp32 angles do, below its ceiling: a scaling
  // rule dropped is no rounding, and fails there too.
  const Property& agreement = registered_property("attention.agrees_with_reference");
  const RunParams weakest =
      under_contract(Op::attention, tol::Contract::fp32_angles, RunParams{.seed = 11, .cases = 100});
  EXPECT_EQ(weakest.max_position, tol::attention_rope_ceiling(tol::Contract::fp32_angles));
  EXPECT_EQ(weakest.max_position, 2048);
  for (const DType dt : {DType::f32, DType::bf16}) {
    const PropertyResult r =
        agreement.run(*mutants::make_mutant_named("mutant-attention-rope-scaling-ignored"), dt, weakest);
    EXPECT_EQ(r.verdict, Verdict::fail) << dtype_name(dt) << ": " << r.message;
  }
}

}  // namespace
}  // namespace pecheck
