// settle_contract (harness/contract_ladder.hpp): a law that fails under the contract agreement's
// sample met steps the verdict down to the strongest contract under which it holds, with the
// stricter contracts' failures as misses; an asked-for contract, a crash, or a law failing under
// every contract leaves the verdict and the results as they were.
#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/contract_ladder.hpp"
#include "properties/registry.hpp"

namespace pecheck {
namespace {

using C = tol::Contract;

const Property& property(const std::string& id) { return registered_property(id); }

PropertyResult result(const std::string& id, Verdict v, const std::string& message = "") {
  PropertyResult r;
  r.property = id;
  r.dtype = DType::bf16;
  r.verdict = v;
  r.message = message;
  return r;
}

ContractVerdict met(C c) { return {.op = Op::rope_apply, .dtype = DType::bf16, .met = c}; }

// A law that holds from contract `holds_from` down; records the contracts it was re-run under.
auto law_holding_from(C holds_from, std::vector<C>& asked) {
  return [holds_from, &asked](const Property& p, const RunParams& params) {
    asked.push_back(params.contract);
    return result(p.id, params.contract >= holds_from ? Verdict::pass : Verdict::fail,
                  "error at pos=" + std::to_string(100 + static_cast<int>(params.contract)));
  };
}

TEST(ContractSettle, AFailingPerCallLawStepsTheVerdictDownToWhereItHolds) {
  ASSERT_LT(C::exact, C::dtype_trig);
  ASSERT_LT(C::dtype_trig, C::fp32_angles);  // the ladder's order, strongest first
  ContractVerdict v = met(C::exact);
  PropertyResult agreement = result("rope.agrees_with_reference", Verdict::pass);
  PropertyResult orthogonal = result("rope.orthogonal", Verdict::fail, "error at pos=187");
  PropertyResult inverse = result("rope.inverse", Verdict::pass);
  std::vector<C> asked;
  std::optional<RunParams> orthogonal_params = RunParams{};
  const std::vector<JudgedLaw> laws = {{&property("rope.agrees_with_reference"), &agreement},
                                       {&property("rope.orthogonal"), &orthogonal, &orthogonal_params},
                                       {&property("rope.inverse"), &inverse}};
  ASSERT_TRUE(settle_contract(v, laws, RunParams{.seed = 3}, law_holding_from(C::fp32_angles, asked)));
  EXPECT_EQ(v.met, C::fp32_angles);
  EXPECT_EQ(asked, (std::vector{C::dtype_trig, C::fp32_angles}));  // only the failed law, weaker step by step
  ASSERT_EQ(v.misses.size(), 2u);
  EXPECT_EQ(v.misses[0].contract, C::exact);
  EXPECT_EQ(v.misses[0].position, 187);  // the first run's failure
  EXPECT_EQ(v.misses[1].contract, C::dtype_trig);
  EXPECT_EQ(v.misses[1].result.verdict, Verdict::fail);
  EXPECT_EQ(orthogonal.verdict, Verdict::pass);  // replaced by its run under the contract settled on
  ASSERT_TRUE(orthogonal_params.has_value());
  EXPECT_EQ(orthogonal_params->contract, C::fp32_angles);  // and so are the params it ran with
  EXPECT_EQ(inverse.verdict, Verdict::pass);
  EXPECT_NE(v.describe().find("meets fp32-angles; exact fails at position 187 (rope.orthogonal"), std::string::npos)
      << v.describe();
}

TEST(ContractSettle, AnAskedContractACrashOrALawFailingEverywhereChangesNothing) {
  std::vector<C> asked;
  PropertyResult orthogonal = result("rope.orthogonal", Verdict::fail, "error at pos=5");
  const std::vector<JudgedLaw> laws = {{&property("rope.orthogonal"), &orthogonal}};

  ContractVerdict named = met(C::exact);
  named.asked = C::exact;
  EXPECT_FALSE(settle_contract(named, laws, {}, law_holding_from(C::exact, asked)));

  ContractVerdict crashed{.op = Op::rope_apply, .dtype = DType::bf16, .crashed = true};
  EXPECT_FALSE(settle_contract(crashed, laws, {}, law_holding_from(C::exact, asked)));
  EXPECT_TRUE(asked.empty());

  // A law no contract accepts is the encoder's failure: the verdict and the result stay.
  ContractVerdict v = met(C::exact);
  const PropertyResult before = orthogonal;
  EXPECT_FALSE(settle_contract(v, laws, {}, [&](const Property& p, const RunParams& params) {
    asked.push_back(params.contract);
    return result(p.id, Verdict::fail);
  }));
  EXPECT_EQ(v.met, C::exact);
  EXPECT_TRUE(v.misses.empty());
  EXPECT_EQ(orthogonal.message, before.message);
  EXPECT_EQ(asked, (std::vector{C::dtype_trig, C::fp32_angles}));
}

TEST(ContractSettle, EveryLawIsJudgedUnderTheWeakerContract) {
  // sinusoidal.injectivity compares rows: under a weaker contract it runs with that contract's
  // bounds, below the fp32-angles ceiling of the laws that compare calls.
  ContractVerdict v = met(C::exact);
  v.op = Op::sinusoidal_table;
  PropertyResult injective = result("sinusoidal.injectivity", Verdict::fail, "pos=9");
  std::vector<C> asked;
  std::optional<RunParams> ran;
  ASSERT_TRUE(settle_contract(v, {{&property("sinusoidal.injectivity"), &injective, &ran}}, {},
                              law_holding_from(C::fp32_angles, asked)));
  EXPECT_EQ(asked, (std::vector{C::dtype_trig, C::fp32_angles}));
  EXPECT_EQ(v.met, C::fp32_angles);
  EXPECT_EQ(injective.verdict, Verdict::pass);
  ASSERT_TRUE(ran.has_value());
  EXPECT_EQ(ran->contract, C::fp32_angles);
  EXPECT_EQ(ran->max_position, tol::rope_law_ceiling(C::fp32_angles, DType::bf16));
}

TEST(ContractSettle, AttentionStepsFromExactToRoundedPFirst) {
  // Attention's ladder is its own: exact, then P rounded to the dtype, then its RoPE's contracts.
  ContractVerdict v{.op = Op::attention, .dtype = DType::bf16, .met = C::exact};
  PropertyResult agreement = result("attention.agrees_with_reference", Verdict::pass);
  PropertyResult permuted = result("attention.permutation_equivariance", Verdict::fail, "token 3");
  std::vector<C> asked;
  std::optional<RunParams> ran;
  ASSERT_TRUE(settle_contract(v,
                              {{&property("attention.agrees_with_reference"), &agreement},
                               {&property("attention.permutation_equivariance"), &permuted, &ran}},
                              {}, law_holding_from(C::rounded_p, asked)));
  EXPECT_EQ(asked, (std::vector{C::rounded_p}));
  EXPECT_EQ(v.met, C::rounded_p);
  ASSERT_TRUE(ran.has_value());
  EXPECT_EQ(ran->contract, C::rounded_p);
  EXPECT_EQ(ran->max_position, 0);  // no ceiling: rounded-p's bound does not grow with the position
  EXPECT_NE(v.describe().find("meets rounded-p; exact fails (attention.permutation_equivariance"), std::string::npos)
      << v.describe();
}

TEST(ContractLadder, EachOperationClimbsTheContractsThatGovernIt) {
  EXPECT_EQ(std::vector(contract_ladder(Op::attention).begin(), contract_ladder(Op::attention).end()),
            (std::vector{C::exact, C::rounded_p, C::dtype_trig, C::fp32_angles}));
  EXPECT_EQ(std::vector(contract_ladder(Op::rope_apply).begin(), contract_ladder(Op::rope_apply).end()),
            (std::vector{C::exact, C::dtype_trig, C::fp32_angles}));
  EXPECT_TRUE(contract_ladder(Op::alibi_bias).empty());
  EXPECT_TRUE(governs(C::exact, Op::sinusoidal_table));
  EXPECT_FALSE(governs(C::rounded_p, Op::rope_apply));
  EXPECT_TRUE(governs(C::fp32_angles, Op::attention));  // the RoPE inside attention
  EXPECT_FALSE(governs(C::rounded_p, Op::sinusoidal_table));
  EXPECT_EQ(contract_named("rounded-p"), C::rounded_p);
  EXPECT_THROW(contract_named("rounded_p"), std::invalid_argument);

  std::vector<C> tried;
  PropertyResult decided;
  const auto agreement_failing = [&](C c) {
    tried.push_back(c);
    return result("attention.agrees_with_reference", Verdict::fail);
  };
  const ContractVerdict v = climb_contracts(Op::attention, DType::f32, std::nullopt, agreement_failing, decided);
  EXPECT_EQ(tried, (std::vector{C::exact, C::rounded_p, C::dtype_trig, C::fp32_angles}));
  EXPECT_FALSE(v.met.has_value());
  EXPECT_NE(v.describe().find("meets no named contract (tried exact, rounded-p, dtype-trig, fp32-angles)"),
            std::string::npos)
      << v.describe();
  // No attention law compares calls under a position ceiling: none is said.
  EXPECT_EQ(v.describe().find("judged below"), std::string::npos) << v.describe();
  // Agreement skipped: the other laws are judged under the weakest contract, and the verdict states
  // the ceiling their cases are drawn below.
  const ContractVerdict skipped{.op = Op::attention, .dtype = DType::f32, .note = "agreement did not run"};
  EXPECT_EQ(skipped.judged(), C::fp32_angles);
  EXPECT_EQ(skipped.laws_below(), tol::attention_rope_ceiling(C::fp32_angles));
  EXPECT_EQ(params_under(property("attention.convex_combination"), skipped, {}).max_position, skipped.laws_below());
  EXPECT_NE(skipped.describe().find("its cases drawn below position 2048"), std::string::npos) << skipped.describe();
  // A contract asked of an operation it does not govern is the caller's mistake, said so.
  EXPECT_THROW(climb_contracts(Op::rope_apply, DType::f32, C::rounded_p, agreement_failing, decided),
               std::invalid_argument);
}

}  // namespace
}  // namespace pecheck
