// Every property x every encoder under test x every dtype of the property, one GoogleTest each,
// named Catalogue/PropertyTest.Holds/<property>__<encoder>__<dtype>. An unavailable backend, or one
// that declines the property's operation, is a skip with its reason. The seed is printed; PECHECK_SEED and
// PECHECK_CASES change the run.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "harness/encoders.hpp"
#include "harness/property.hpp"
#include "properties/registry.hpp"
#include "tests/test_seed.hpp"

namespace pecheck {
namespace {

struct Combo {
  const Property* property;
  const Backend* backend;
  DType dtype;
};

std::vector<Combo> all_combos() {
  std::vector<Combo> out;
  for (const Backend& b : encoders_under_test())
    for (const Property& p : property_registry())
      for (DType dt : p.dtypes) out.push_back({&p, &b, dt});
  return out;
}

std::string combo_name(const ::testing::TestParamInfo<Combo>& info) {
  std::string id = info.param.property->id;
  std::replace(id.begin(), id.end(), '.', '_');
  std::string enc = info.param.backend->name;
  std::replace(enc.begin(), enc.end(), '-', '_');
  return fmt::format("{}__{}__{}", id, enc, dtype_name(info.param.dtype));
}

class PropertyTest : public ::testing::TestWithParam<Combo> {};

TEST_P(PropertyTest, Holds) {
  const Combo& c = GetParam();
  const Availability a = c.backend->probe();
  if (!a.available) GTEST_SKIP() << c.backend->name << " unavailable: " << a.reason;
  const auto encoder = c.backend->make();
  // A backend that declines the operation (the vector backends and CUDA leave the 2-D relative
  // bias's table read to the scalar one) is a skip with its reason, as the CLI reports it.
  if (const Support s = encoder->supports(c.property->op, c.dtype); !s.ok)
    GTEST_SKIP() << c.backend->name << " declines " << op_name(c.property->op) << ": " << s.reason;
  const RunParams params{testing::test_seed(), testing::test_cases()};
  const PropertyResult r = c.property->run(*encoder, c.dtype, params);
  std::cout << fmt::format("seed {} (property seed {}): {} cases, max {:.4g} u, bound {:.4g} u\n", params.seed, r.seed,
                           r.cases, r.max_error_u, r.bound_u);
  ASSERT_EQ(r.verdict, Verdict::pass) << r.message << "\n  counterexample: " << r.counterexample
                                      << fmt::format(
                                             "\n  replay: PECHECK_SEED={} ctest -R '{}' or build/pecheck verify "
                                             "--backend {} --property {} --dtype {} --seed {} --cases {}",
                                             params.seed, c.property->id, c.backend->name, c.property->id,
                                             dtype_name(c.dtype), params.seed, params.cases);
  // No vacuous pass: every requested case ran and was measured.
  EXPECT_EQ(r.cases, params.cases);
  EXPECT_FALSE(r.distribution.empty()) << "cases were not classified";
}

INSTANTIATE_TEST_SUITE_P(Catalogue, PropertyTest, ::testing::ValuesIn(all_combos()), combo_name);

}  // namespace
}  // namespace pecheck
