// pecheck::gtest: the property catalogue inside a downstream project's own GoogleTest binary.
// A kernel author adapts their function to pecheck::Encoder (override supports() and the
// operations they have) and writes one line:
//
//   PECHECK_CATALOGUE(MyRope, std::make_unique<MyRopeEncoder>());
//
// which registers one test per applicable property x dtype, named MyRope.<property>__<dtype>, with
// the generators, bounds and shrinking of `pecheck verify`. A property whose operation the encoder
// does not offer (supports() says no, or it throws pecheck::Unsupported) is skipped with the
// reason. A failure prints the shrunk counterexample and the line that replays it. PECHECK_SEED and
// PECHECK_CASES change the run; the seed is printed by every test.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "interface/encoder.hpp"
#include "spec/dtype.hpp"

namespace pecheck::gtest {

struct CatalogueOptions {
  std::string properties = "*";  ///< glob over property ids, e.g. "rope.*"
  std::vector<DType> dtypes = {std::begin(kAllDTypes), std::end(kAllDTypes)};
};

using EncoderFactory = std::function<std::unique_ptr<Encoder>()>;

/// Registers the catalogue for the encoders `make` returns (a fresh one per test); returns the
/// number of tests registered. Call before RUN_ALL_TESTS (the macro does, at static init).
int register_catalogue(const std::string& suite, EncoderFactory make, const CatalogueOptions& options = {});

/// The seed and case count of a run: PECHECK_SEED / PECHECK_CASES, else 20261130 and 100.
std::uint64_t run_seed();
int run_cases();

}  // namespace pecheck::gtest

#define PECHECK_CATALOGUE(Suite, ...)                                                                 \
  [[maybe_unused]] static const int pecheck_catalogue_##Suite = ::pecheck::gtest::register_catalogue( \
      #Suite, []() -> std::unique_ptr<::pecheck::Encoder> { return __VA_ARGS__; })
