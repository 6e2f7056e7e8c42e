// The opt-in properties (properties/registry.hpp): apart from the catalogue, each with its own
// expectations. attention.batch_invariance holds, value for value, for the encoders that compute
// every query row on its own in key order (scalar, reference-double, the CUDA kernels through the
// emulator), and fails for one whose accumulation order depends on the rows beside it: AVX2 in
// fp32 with a sliding window (its 8-row blocks sum the keys every row sees first).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <string>

#include "harness/encoders.hpp"
#include "harness/property.hpp"
#include "properties/registry.hpp"
#include "tests/test_seed.hpp"

namespace pecheck {
namespace {

/// The property, or null (each test asserts it is there).
const Property* batch_invariance() {
  const auto& all = opt_in_registry();
  const auto it =
      std::find_if(all.begin(), all.end(), [](const Property& p) { return p.id == "attention.batch_invariance"; });
  return it == all.end() ? nullptr : &*it;
}

TEST(OptInProperties, AreApartFromTheCatalogue) {
  for (const Property& p : opt_in_registry()) {
    EXPECT_TRUE(p.opt_in) << p.id;
    for (const Property& q : property_registry()) EXPECT_NE(p.id, q.id) << "in the catalogue too";
  }
  for (const Property& q : property_registry()) EXPECT_FALSE(q.opt_in) << q.id;
}

TEST(OptInProperties, BatchInvarianceHoldsForRowByRowEncoders) {
  ASSERT_NE(batch_invariance(), nullptr);
  const Property& p = *batch_invariance();
  for (const Backend& b : encoders_under_test()) {
    if (b.name != "scalar" && b.name != "reference-double" && b.name != "cuda-emulated") continue;
    ASSERT_TRUE(b.probe().available) << b.name;
    const auto enc = b.make();
    for (DType dt : p.dtypes) {
      const PropertyResult r = p.run(*enc, dt, RunParams{testing::test_seed(), testing::test_cases()});
      EXPECT_EQ(r.verdict, Verdict::pass)
          << b.name << " " << dtype_name(dt) << ": " << r.message << "\n  " << r.counterexample;
      EXPECT_EQ(r.cases, testing::test_cases());
      EXPECT_EQ(r.max_error_u, 0.0);
    }
  }
}

TEST(OptInProperties, BatchInvarianceSeesAvx2sBlockOrder) {
  ASSERT_NE(batch_invariance(), nullptr);
  const Property& p = *batch_invariance();
  for (const Backend& b : encoders_under_test()) {
    if (b.name != "avx2") continue;
    const Availability a = b.probe();
    if (!a.available) GTEST_SKIP() << "avx2 unavailable: " << a.reason;
    const auto enc = b.make();
    const PropertyResult r = p.run(*enc, DType::f32, RunParams{testing::test_seed(), testing::test_cases()});
    std::cout << fmt::format("avx2 f32: {} after {} cases; {}\n  {}\n", verdict_name(r.verdict), r.cases, r.message,
                             r.counterexample);
    EXPECT_EQ(r.verdict, Verdict::fail);
    EXPECT_NE(r.counterexample.find("window="), std::string::npos) << r.counterexample;
  }
}

}  // namespace
}  // namespace pecheck
