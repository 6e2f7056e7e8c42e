// Theorem: T5 buckets lie in [0, num_buckets), split by direction (bidirectional: keys after the
// query in the upper half; causal: all of them in bucket 0), equal the distance below max_exact,
// grow monotonically with |p_j - p_i|, and are clamped to the last bucket from max_distance on.
// Doc: docs/properties/t5.bucket_laws.md
#include <cmath>
#include <map>

#include "harness/runner.hpp"
#include "properties/catalogue.hpp"
#include "properties/bias/t5_cases.hpp"

namespace pecheck::props {

namespace t5_bucket_laws_detail {
namespace {

rc::Gen<T5Case> cases(DType) { return t5_case_gen(); }

Outcome check(Encoder& enc, DType dt, const T5Case& c) {
  Outcome o;
  const std::size_t H = static_cast<std::size_t>(c.spec.heads), n = c.positions.size();
  // table[b, h] = b: the bias reads back the bucket (exact in every dtype below 257 buckets).
  std::vector<float> table(static_cast<std::size_t>(c.spec.num_buckets) * H);
  for (std::size_t b = 0; b < static_cast<std::size_t>(c.spec.num_buckets); ++b)
    for (std::size_t h = 0; h < H; ++h) table[b * H + h] = round_to(dt, static_cast<double>(b));
  const auto out = encoder_t5(enc, dt, c, table, o.failure);
  if (!o.failure.empty()) return o;
  const int half = c.spec.half(), me = c.spec.max_exact();
  std::map<std::pair<int, std::int64_t>, int> seen;  // (direction, distance) -> bucket offset
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t h = 0; h < H; ++h) {
        const float got = out[(h * n + i) * n + j];
        const std::int64_t rel = c.positions[j] - c.positions[i];
        const auto say = [&](std::string_view law, const std::string& why) {
          o.failure =
              fmt::format("{} head {} query {} key {} (p_j - p_i = {}): bucket {} {}", law, h, i, j, rel, got, why);
        };
        if (!(got >= 0 && got < c.spec.num_buckets && got == std::floor(got)))
          return say("(1) range:", fmt::format("is not a bucket in [0, {})", c.spec.num_buckets)), o;
        const int b = static_cast<int>(got);
        const bool after = rel > 0;
        if (!c.spec.bidirectional && rel >= 0 && b != 0)
          return say("(2) direction:", "for a key at or after the query; causal T5 puts those in bucket 0"), o;
        if (c.spec.bidirectional && (b >= half) != after)
          return say("(2) direction:", fmt::format("is in the {} half for a key {} the query",
                                                   b >= half ? "upper" : "lower", after ? "after" : "at or before")),
                 o;
        const int offset = c.spec.bidirectional && after ? b - half : b;
        const std::int64_t dist = std::abs(rel);
        if (!c.spec.bidirectional && rel >= 0) continue;
        if (dist < me && offset != dist)
          return say("(3) exact:", fmt::format("should be the distance itself below max_exact = {}", me)), o;
        if (dist >= c.spec.max_distance && offset != half - 1)
          return say("(4) clamp:", fmt::format("should be the last bucket ({}) from max_distance = {} on", half - 1,
                                               c.spec.max_distance)),
                 o;
        seen[{after ? 1 : 0, dist}] = offset;
      }
  // (5) monotone in the distance, per direction.
  for (auto it = seen.begin(); it != seen.end(); ++it) {
    const auto next = std::next(it);
    if (next != seen.end() && next->first.first == it->first.first && next->second < it->second) {
      o.failure = fmt::format("(5) monotone: distance {} gets bucket offset {} but distance {} gets {}",
                              it->first.second, it->second, next->first.second, next->second);
      return o;
    }
  }
  return o;
}

}  // namespace
}  // namespace t5_bucket_laws_detail

Property t5_bucket_laws() {
  using namespace t5_bucket_laws_detail;
  return make_property<T5Case>(
      {.id = "t5.bucket_laws",
       .statement = "T5 buckets lie in [0, n), split by direction, equal small distances, grow with |i - j| and are "
                    "clamped past max_distance.",
       .family = Family::t5,
       .op = Op::t5_bias,
       .pinnable = true},
      cases, check);
}

}  // namespace pecheck::props
