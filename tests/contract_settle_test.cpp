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

using C = tol::RopeContract;

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
    asked.push_back(params.rope_contract);
    return result(p.id, params.rope_contract >= holds_from ? Verdict::pass : Verdict::fail,
                  "error at pos=" + std::to_string(100 + static_cast<int>(params.rope_contract)));
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
  EXPECT_EQ(orthogonal_params->rope_contract, C::fp32_angles);  // and so are the params it ran with
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
    asked.push_back(params.rope_contract);
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
  EXPECT_EQ(ran->rope_contract, C::fp32_angles);
  EXPECT_EQ(ran->max_position, tol::rope_law_ceiling(C::fp32_angles, DType::bf16));
}

}  // namespace
}  // namespace pecheck
