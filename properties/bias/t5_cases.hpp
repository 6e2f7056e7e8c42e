// Cases shared by the T5 bucketed-bias theorems.
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
#include <string>
#include <vector>

#include "harness/generators.hpp"
#include "harness/measure.hpp"
#include "harness/runner.hpp"
#include "harness/tolerance.hpp"
#include "interface/encoder.hpp"

namespace pecheck::props {

/// A T5 spec, positions spread over up to 3 max_distances, and the data seed of the table.
struct T5Case {
  T5Spec spec;
  std::vector<std::int64_t> positions;
  std::uint32_t data = 0;

  std::string describe() const {
    return fmt::format("{} pos=[{}] data={}", spec.describe(), fmt::join(positions, ","), data);
  }
  std::vector<std::string> tags() const {
    return {spec.bidirectional ? "bidirectional" : "causal",
            spec.num_buckets == 32 && spec.max_distance == 128 ? "T5 defaults" : "other buckets"};
  }
};

/// T5's defaults (32 buckets, max_distance 128) 4/5 of the time each; otherwise other published
/// settings or any; positions at a random start plus offsets up to 3 max_distance.
rc::Gen<T5Case> t5_case_gen();

/// The encoder's bias tensor (heads, n, n); failure set when an output is not clean.
inline std::vector<float> encoder_t5(Encoder& enc, DType dt, const T5Case& c, const std::vector<float>& table,
                                     std::string& failure) {
  const std::size_t n = c.positions.size();
  std::vector<float> out = poisoned(static_cast<std::size_t>(c.spec.heads) * n * n);
  enc.run(T5Bias{c.spec, dt, table, c.positions, out});
  if (failure.empty()) failure = classify_outputs(dt, out, "bias");
  return out;
}

}  // namespace pecheck::props

namespace pecheck {
// The case type erased once, in properties/bias/t5_cases.cpp (see erased() in harness/runner.hpp).
extern template rc::Gen<AnyCase> erased(rc::Gen<props::T5Case>);
}  // namespace pecheck
