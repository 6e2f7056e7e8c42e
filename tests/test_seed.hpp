// The seed of the property tests: fixed by default so CI is reproducible; PECHECK_SEED, or the
// seed= of RapidCheck's own RC_PARAMS, varies it.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>

namespace pecheck::testing {

inline std::uint64_t test_seed() {
  if (const char* s = std::getenv("PECHECK_SEED")) return std::stoull(s);
  if (const char* rc = std::getenv("RC_PARAMS")) {
    const std::string params = rc;
    if (const auto at = params.find("seed="); at != std::string::npos) return std::stoull(params.substr(at + 5));
  }
  return 20261130;
}

inline int test_cases() {
  if (const char* s = std::getenv("PECHECK_CASES")) return std::stoi(s);
  return 100;
}

}  // namespace pecheck::testing
