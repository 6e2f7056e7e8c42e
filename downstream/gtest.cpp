#include "downstream/gtest.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "harness/property.hpp"
#include "properties/registry.hpp"

namespace pecheck::gtest {

namespace {

/// One property x dtype against the factory's encoder.
class CatalogueTest : public ::testing::Test {
 public:
  CatalogueTest(const Property& p, DType dt, EncoderFactory make, std::string filter)
      : property_(p), dtype_(dt), make_(std::move(make)), filter_(std::move(filter)) {}

  void TestBody() override {
    const auto encoder = make_();
    ASSERT_TRUE(encoder) << "the encoder factory returned null";
    const Support s = encoder->supports(property_.op, dtype_);
    if (!s.ok) GTEST_SKIP() << encoder->name() << " does not offer " << op_name(property_.op) << ": " << s.reason;
    const RunParams params{run_seed(), run_cases()};
    const PropertyResult r = property_.run(*encoder, dtype_, params);
    std::cout << fmt::format("{}: seed {} (property seed {}), {} cases, max {:.4g} u, bound {:.4g} u\n", property_.id,
                             params.seed, r.seed, r.cases, r.max_error_u, r.bound_u);
    if (r.verdict == Verdict::skip) GTEST_SKIP() << r.message;
    ASSERT_EQ(r.verdict, Verdict::pass)
        << property_.id << " (" << dtype_name(dtype_) << "): " << property_.statement << "\n  " << r.message
        << "\n  counterexample (shrunk): " << r.counterexample
        << fmt::format("\n  replay: PECHECK_SEED={} PECHECK_CASES={} <this test binary> --gtest_filter='{}'",
                       params.seed, params.cases, filter_)
        << "\n  the property's page: " << property_.doc;
    EXPECT_EQ(r.cases, params.cases) << "not every case ran";  // no vacuous pass
  }

 private:
  const Property& property_;
  DType dtype_;
  EncoderFactory make_;
  std::string filter_;
};

}  // namespace

std::uint64_t run_seed() {
  const char* s = std::getenv("PECHECK_SEED");
  return s ? std::strtoull(s, nullptr, 10) : 20261130;
}

int run_cases() {
  const char* s = std::getenv("PECHECK_CASES");
  return s ? std::max(1, std::atoi(s)) : 100;
}

int register_catalogue(const std::string& suite, EncoderFactory make, const CatalogueOptions& options) {
  int registered = 0;
  for (const Property& p : property_registry()) {
    if (!p.matches(options.properties)) continue;
    for (const DType dt : p.dtypes) {
      if (std::find(options.dtypes.begin(), options.dtypes.end(), dt) == options.dtypes.end()) continue;
      std::string name = p.id;
      std::replace(name.begin(), name.end(), '.', '_');
      name += "__" + std::string(dtype_name(dt));
      const std::string filter = suite + "." + name;
      ::testing::RegisterTest(
          suite.c_str(), name.c_str(), nullptr, p.id.c_str(), __FILE__, __LINE__,
          [&p, dt, make, filter]() -> CatalogueTest* { return new CatalogueTest(p, dt, make, filter); });
      ++registered;
    }
  }
  return registered;
}

}  // namespace pecheck::gtest
