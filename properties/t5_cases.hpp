// Cases shared by the T5 bucketed-bias theorems.
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
#include <string>
#include <vector>

#include "harness/generators.hpp"
#include "harness/measure.hpp"
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

/// An offset from the sequence start: within max_exact, around max_distance (the clamp's edge),
/// or anywhere up to 3 max_distance.
inline rc::Gen<std::int64_t> offset(const T5Spec& s) {
  using P = std::int64_t;
  const P me = s.max_exact(), md = s.max_distance;
  return rc::gen::weightedOneOf<P>({
      {2, rc::gen::inRange<P>(0, 2 * me + 1)},
      {1, rc::gen::element<P>(md - 1, md, md + 1, 2 * md, 3 * md)},  // size-independent, unlike inRange
      {2, rc::gen::inRange<P>(0, 3 * md + 1)},
  });
}

/// T5's defaults (32 buckets, max_distance 128) 4/5 of the time each; otherwise other published
/// settings or any; positions at a random start plus offsets up to 3 max_distance.
inline rc::Gen<T5Case> t5_case_gen() {
  const auto spec = rc::gen::apply(
      [](int heads, bool bidirectional, int buckets_choice, int any_buckets, int distance_choice, int any_distance) {
        const int buckets[] = {32, 8, 16, 64, 2 * any_buckets};
        const int distances[] = {128, 20, 100, 256, any_distance};
        T5Spec s{heads, buckets[buckets_choice], distances[distance_choice], bidirectional};
        s.max_distance = std::max(s.max_distance, s.max_exact() + 1);
        return s;
      },
      rc::gen::inRange(1, 4), rc::gen::arbitrary<bool>(),
      rc::gen::weightedOneOf<int>({{4, rc::gen::just(0)}, {1, rc::gen::inRange(1, 5)}}), rc::gen::inRange(2, 65),
      rc::gen::weightedOneOf<int>({{4, rc::gen::just(0)}, {1, rc::gen::inRange(1, 5)}}), rc::gen::inRange(2, 1000));
  return rc::gen::mapcat(rc::gen::pair(spec, rc::gen::inRange(1, 17)), [](std::pair<T5Spec, int> sn) {
    const T5Spec s = sn.first;
    return rc::gen::apply(
        [s](std::int64_t start, std::vector<std::int64_t> offsets, std::uint32_t data) {
          for (auto& o : offsets) o += start;
          return T5Case{s, offsets, data};
        },
        gen::position_below(tol::kMaxPosition - 3000),
        rc::gen::container<std::vector<std::int64_t>>(static_cast<std::size_t>(sn.second), offset(s)),
        gen::data_seed());
  });
}

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
