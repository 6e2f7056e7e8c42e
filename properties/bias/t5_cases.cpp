// The T5 case generators, compiled once (see properties/rope/rope_cases.cpp for why).
#include "properties/bias/t5_cases.hpp"

namespace pecheck::props {

namespace {

/// An offset from the sequence start: within max_exact, around max_distance (the clamp's edge),
/// or anywhere up to 3 max_distance.
rc::Gen<std::int64_t> offset(const T5Spec& s) {
  using P = std::int64_t;
  const P me = s.max_exact(), md = s.max_distance;
  return rc::gen::weightedOneOf<P>({
      {2, rc::gen::inRange<P>(0, 2 * me + 1)},
      {1, rc::gen::element<P>(md - 1, md, md + 1, 2 * md, 3 * md)},  // size-independent, unlike inRange
      {2, rc::gen::inRange<P>(0, 3 * md + 1)},
  });
}

}  // namespace

rc::Gen<T5Case> t5_case_gen() {
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

}  // namespace pecheck::props

namespace pecheck {
// The case type erased once for every theorem file (see erased() in harness/runner.hpp).
template rc::Gen<AnyCase> erased(rc::Gen<props::T5Case>);
}  // namespace pecheck
