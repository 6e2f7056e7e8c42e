// A failing attention agreement names what the kernel's output fits (dumpcheck/convention_hint.hpp,
// attention_hint in dumpcheck/attention_dump.hpp): the catalogue's attention mutants whose bug is
// a convention (a mask aligned top-left, grouped-query heads round-robin, the scale dropped, the
// window one key wide, RoPE's rotary_dim or scaling rule ignored) are each named as such, in f32
// and bf16; a numeric bug (softmax without max subtraction, Q and K swapped) gets no such clause,
// and neither does a correct backend. The probes are convention_hint's own, so they are asked
// directly; one run shows the clause at the end of a failure line.
#include <gtest/gtest.h>

#include <string>

#include "dumpcheck/convention_hint.hpp"
#include "harness/encoders.hpp"
#include "mutants/mutants.hpp"
#include "properties/registry.hpp"
#include "tests/test_seed.hpp"

namespace pecheck {
namespace {

const Property& agreement() { return registered_property("attention.agrees_with_reference"); }

/// The clause convention_hint adds after the agreement fails: its probes are its own (fixed
/// specs and data), so this asks it directly, whatever case the failure was found at.
std::string hint(Encoder& e, DType dt) {
  return dumpcheck::convention_hint(agreement(), e, dt, RunParams{testing::test_seed(), testing::test_cases()});
}
std::string hint(const std::string& mutant, DType dt) { return hint(*mutants::make_mutant_named(mutant), dt); }

struct Named {
  const char* mutant;
  const char* clause;  ///< what the failure line must say
};

class AttentionHint : public ::testing::TestWithParam<std::tuple<Named, DType>> {};

TEST_P(AttentionHint, TheConventionTheOutputFitsIsNamed) {
  const auto& [named, dt] = GetParam();
  const std::string clause = hint(named.mutant, dt);
  EXPECT_NE(clause.find(named.clause), std::string::npos) << named.mutant << ": " << clause;
  EXPECT_NE(clause.find("called as attention("), std::string::npos) << clause;
}

INSTANTIATE_TEST_SUITE_P(
    Mutants, AttentionHint,
    ::testing::Combine(::testing::Values(Named{"mutant-attention-mask-top-left", "the causal mask aligned top-left"},
                                         Named{"mutant-attention-gqa-modulo", "(round-robin), not h / 2"},
                                         Named{"mutant-attention-no-scale", "the output fits scale 1, not the default"},
                                         Named{"mutant-attention-window-off-by-one", "fits a window of 6 keys, not 5"},
                                         Named{"mutant-attention-ignores-rotary-dim", "rotary_dim 16 is ignored"},
                                         Named{"mutant-attention-rope-scaling-ignored",
                                               "without its scaling rule (linear"}),
                       ::testing::Values(DType::f32, DType::bf16)));

TEST(AttentionHint, ANumericBugGetsNoConventionClause) {
  for (const char* mutant : {"mutant-attention-softmax-no-max", "mutant-attention-q-k-swapped"})
    for (DType dt : {DType::f32, DType::bf16}) EXPECT_EQ(hint(mutant, dt), "") << mutant;
}

TEST(AttentionHint, ACorrectBackendGetsNone) {
  const auto scalar = make_encoder("scalar");
  for (DType dt : {DType::f32, DType::bf16, DType::f16}) EXPECT_EQ(hint(*scalar, dt), "");
}

TEST(AttentionHint, AFailingRunEndsWithTheClause) {
  // The whole path, at a seed where the agreement catches the mask (it does at every seed tried).
  RunParams rp{testing::test_seed(), testing::test_cases()};
  rp.explain_failure = dumpcheck::convention_hint;
  auto e = mutants::make_mutant_named("mutant-attention-mask-top-left");
  const PropertyResult r = agreement().run(*e, DType::f32, rp);
  ASSERT_EQ(r.verdict, Verdict::fail);
  EXPECT_NE(r.message.find("the causal mask aligned top-left"), std::string::npos) << r.message;
}

}  // namespace
}  // namespace pecheck
