// The mutation catalogue: each deliberately wrong encoder (a real bug) must be caught by the
// property named for it, with a shrunk counterexample; the forwarding wrapper the mutants are
// built on must itself pass, so a catch is the mutation's doing and not the wrapper's.
#include "mutants/mutants.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <iostream>

#include "harness/property.hpp"
#include "properties/registry.hpp"
#include "tests/test_seed.hpp"

namespace pecheck {
namespace {

const Property& property(const std::string& id) { return registered_property(id); }

class MutantTest : public ::testing::TestWithParam<std::size_t> {};

TEST_P(MutantTest, IsCaught) {
  const mutants::Mutant& m = mutants::mutants()[GetParam()];
  const Property& p = property(m.caught_by);
  const auto mutant = m.make();
  const auto control = mutants::make_forwarding_scalar("forwarding-scalar");
  const RunParams params{testing::test_seed(), testing::test_cases()};
  const PropertyResult caught = p.run(*mutant, DType::f32, params);
  std::cout << fmt::format("{} / {}: {} after {} cases\n  counterexample: {}\n  {}\n", m.name, p.id,
                           verdict_name(caught.verdict), caught.cases, caught.counterexample, caught.message);
  EXPECT_EQ(caught.verdict, Verdict::fail) << m.name << " was not caught by " << p.id;
  EXPECT_FALSE(caught.counterexample.empty()) << "a failure must come with its shrunk counterexample";
  EXPECT_FALSE(caught.message.empty());
  const PropertyResult clean = p.run(*control, DType::f32, params);
  EXPECT_EQ(clean.verdict, Verdict::pass) << "the unmutated wrapper fails " << p.id << ": " << clean.message;
}

INSTANTIATE_TEST_SUITE_P(Catalogue, MutantTest, ::testing::Range<std::size_t>(0, mutants::mutants().size()),
                         [](const ::testing::TestParamInfo<std::size_t>& info) {
                           std::string n = mutants::mutants()[info.param].name;
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

}  // namespace
}  // namespace pecheck
