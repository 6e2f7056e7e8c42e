// An encoder that answers calls a batch at a time (interface/encoder.hpp's CallBatcher, the
// Python package's check(batch=)) is run in passes over the same draws (harness/runner.cpp's
// run_settled): a pass that defers leaves new calls unanswered, flush() answers them at once, and
// the first pass that defers nothing is the run. These tests hold that run to the one the same
// encoder gets call by call, result for result (verdict, cases, worst measurement, shrunk
// counterexample), for correct and mutant RoPEs, declined cases included; and count what it
// saves: a handful of flushes a property, each answering the calls of every case at once.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/encoders.hpp"
#include "mutants/mutants.hpp"
#include "properties/registry.hpp"
#include "tests/test_seed.hpp"

namespace pecheck {
namespace {

/// One RoPE call by its content: the same content made twice is two calls (each its own answer).
struct RopeCall {
  RopeSpec spec;
  DType dtype = DType::f32;
  int heads = 0;
  std::vector<std::int64_t> positions;
  std::vector<float> x;
  bool operator==(const RopeCall& o) const {  // bit for bit: NaNs and signed zeros included
    return spec == o.spec && dtype == o.dtype && heads == o.heads && positions == o.positions &&
           x.size() == o.x.size() && std::memcmp(x.data(), o.x.data(), x.size() * sizeof(float)) == 0;
  }
};

/// Another encoder's RoPE, answered a batch at a time: in a deferring pass a new call is noted
/// and x left as it came; flush() answers every noted call (one "batched call").
class BatchedRope final : public Offering<RopeApply>, public CallBatcher {
 public:
  using Offering<RopeApply>::run;
  explicit BatchedRope(std::unique_ptr<Encoder> inner) : inner_(std::move(inner)) {}
  std::string name() const override { return inner_->name(); }
  Support supports(Op op, DType dt) const override { return inner_->supports(op, dt); }
  CallBatcher* batcher() override { return this; }

  void begin_pass(bool defer) override {
    defer_ = defer;
    deferred_ = 0;
    made_.clear();
  }
  long deferred() const override { return deferred_; }
  void flush() override {
    ++flushes_;
    for (const std::size_t i : pending_) answer(calls_[i]);
    pending_.clear();
  }

  void run(const RopeApply& c) override {
    RopeCall call{c.spec, c.dtype, c.heads, {c.positions.begin(), c.positions.end()}, {c.x.begin(), c.x.end()}};
    const std::string bucket = prefix(call);
    const int occurrence = occurrence_of(made_[bucket], call);
    std::vector<std::size_t>& known = calls_by_prefix_[bucket];
    auto it = std::find_if(known.begin(), known.end(),
                           [&](std::size_t i) { return calls_[i].occurrence == occurrence && calls_[i].call == call; });
    if (it == known.end()) {
      known.push_back(calls_.size());
      calls_.push_back({std::move(call), occurrence, std::nullopt, {}});
      it = std::prev(known.end());
      if (defer_) {
        pending_.push_back(*it);
        ++deferred_;
        return;  // a placeholder: x as it came
      }
      answer(calls_[*it]);
    }
    const Entry& e = calls_[*it];
    if (!e.answered) throw std::logic_error("a call answered in a pass that deferred it");
    if (!e.declined.empty()) throw Unsupported(e.declined);
    std::copy(e.answered->begin(), e.answered->end(), c.x.begin());
  }

  int flushes() const { return flushes_; }
  long answered() const { return answered_; }

 private:
  struct Entry {
    RopeCall call;
    int occurrence;
    std::optional<std::vector<float>> answered;
    std::string declined;
  };
  /// A cheap key that equal calls share (unequal ones may too): the bucket searched bit for bit.
  static std::string prefix(const RopeCall& c) {
    return c.spec.describe() + "|" + std::to_string(c.x.size()) + "|" + std::to_string(c.positions.size());
  }
  /// How many calls equal to c this pass made before it (and counts this one).
  static int occurrence_of(std::vector<std::pair<RopeCall, int>>& made, const RopeCall& c) {
    for (auto& [call, count] : made)
      if (call == c) return count++;
    made.emplace_back(c, 1);
    return 0;
  }
  void answer(Entry& e) {
    ++answered_;
    std::vector<float> x = e.call.x;
    try {
      inner_->run(RopeApply{e.call.spec, e.call.dtype, e.call.heads, e.call.positions, x});
    } catch (const Unsupported& u) {
      e.declined = u.what();
    }
    e.answered = std::move(x);
  }

  std::unique_ptr<Encoder> inner_;
  bool defer_ = false;
  long deferred_ = 0, answered_ = 0;
  int flushes_ = 0;
  std::map<std::string, std::vector<std::pair<RopeCall, int>>> made_;  // this pass's calls, counted
  std::vector<Entry> calls_;  // every call answered or pending, by content and occurrence
  std::map<std::string, std::vector<std::size_t>> calls_by_prefix_;
  std::vector<std::size_t> pending_;
};

void expect_same_result(const PropertyResult& batched, const PropertyResult& direct) {
  EXPECT_EQ(batched.verdict, direct.verdict);
  EXPECT_EQ(batched.cases, direct.cases);
  EXPECT_EQ(batched.nontrivial_cases, direct.nontrivial_cases);
  EXPECT_EQ(batched.max_error_u, direct.max_error_u);
  EXPECT_EQ(batched.bound_u, direct.bound_u);
  EXPECT_EQ(batched.message, direct.message);
  EXPECT_EQ(batched.counterexample, direct.counterexample);
  EXPECT_EQ(batched.distribution, direct.distribution);
}

struct Compared {
  int most_flushes = 0;  ///< the flushes a property took, at most
  int failures = 0;      ///< properties that failed (call by call, and so batched)
};

/// Every RoPE property over `make()`'s encoder, batched and call by call: the same results.
Compared expect_batched_as_direct(const std::function<std::unique_ptr<Encoder>()>& make, DType dt) {
  RunParams rp{testing::test_seed(), testing::test_cases()};
  int most_flushes = 0, failures = 0, properties = 0;
  for (const Property& p : property_registry()) {
    if (p.op != Op::rope_apply) continue;
    BatchedRope batched(make());
    const auto direct = make();
    const PropertyResult b = p.run(batched, dt, rp), d = p.run(*direct, dt, rp);
    SCOPED_TRACE(p.id + " " + std::string(dtype_name(dt)) + ": " + d.message);
    expect_same_result(b, d);
    most_flushes = std::max(most_flushes, batched.flushes());
    failures += d.verdict == Verdict::fail;
    ++properties;
  }
  EXPECT_GE(properties, 10);
  return {most_flushes, failures};
}

class BatchedPasses : public ::testing::TestWithParam<DType> {};

TEST_P(BatchedPasses, ACorrectRopeGetsTheResultsItGetsCallByCall) {
  const Compared c = expect_batched_as_direct([] { return make_encoder("scalar"); }, GetParam());
  EXPECT_EQ(c.failures, 0);
  // The depth of calls that take an earlier call's output (rope.inverse's second call takes the
  // first's output), plus cases redrawn: a handful.
  EXPECT_GE(c.most_flushes, 1);
  EXPECT_LE(c.most_flushes, 4);
}

TEST_P(BatchedPasses, AMutantFailsWhereItFailsCallByCallWithTheSameCounterexample) {
  for (const char* name : {"mutant-rope-position-off-by-one", "mutant-rope-always-half-split",
                           "mutant-rope-no-range-reduction", "mutant-rope-switches-after-warm-up"}) {
    SCOPED_TRACE(name);
    EXPECT_GT(expect_batched_as_direct([name] { return mutants::make_mutant_named(name); }, GetParam()).failures, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, BatchedPasses, ::testing::Values(DType::f32, DType::bf16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

/// A scalar RoPE that declines interleaved pairs: redrawn cases are deferred and answered too.
class DeclinesInterleaved final : public Offering<RopeApply> {
 public:
  using Offering<RopeApply>::run;
  std::string name() const override { return "declines-interleaved"; }
  void run(const RopeApply& c) override {
    if (c.spec.layout == RopeLayout::interleaved) throw Unsupported("declines interleaved pairs");
    inner_->run(c);
  }

 private:
  std::unique_ptr<Encoder> inner_ = make_encoder("scalar");
};

TEST(BatchedPasses, DeclinedCasesAreRedrawnAsCallByCall) {
  expect_batched_as_direct([] { return std::make_unique<DeclinesInterleaved>(); }, DType::f32);
}

/// The scalar RoPE, counting its calls.
class CountedRope final : public Offering<RopeApply> {
 public:
  using Offering<RopeApply>::run;
  std::string name() const override { return "scalar"; }
  void run(const RopeApply& c) override {
    ++calls;
    inner_->run(c);
  }
  long calls = 0;

 private:
  std::unique_ptr<Encoder> inner_ = make_encoder("scalar");
};

TEST(BatchedPasses, EachCallIsAnsweredOnceAndTheCasesOfAPassTogether) {
  RunParams rp{testing::test_seed(), testing::test_cases()};
  const Property& relative = registered_property("rope.relative");
  BatchedRope batched(make_encoder("scalar"));
  CountedRope direct;
  const PropertyResult r = relative.run(batched, DType::f32, rp);
  ASSERT_EQ(r.verdict, Verdict::pass) << r.message;
  ASSERT_EQ(relative.run(direct, DType::f32, rp).verdict, Verdict::pass);
  EXPECT_EQ(r.cases, rp.cases);
  // Every case's calls take only the case's inputs: one flush answers them all, each call once.
  EXPECT_EQ(batched.flushes(), 1);
  EXPECT_EQ(batched.answered(), direct.calls);
  EXPECT_GE(direct.calls, 2L * rp.cases);
}

}  // namespace
}  // namespace pecheck
