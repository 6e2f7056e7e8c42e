// The call-sequence laws see a drift wherever it falls in the run: an encoder that changes after
// N calls fails rope.call_sequence, sinusoidal.call_sequence and attention.call_sequence for every
// N up to the length of a default run (1,995 calls at 100 cases), and passes when N lies past it;
// the length is what the pages state.
#include "properties/call_sequence.hpp"

#include <gtest/gtest.h>

#include "harness/property.hpp"
#include "mutants/forwarding_encoder.hpp"
#include "properties/registry.hpp"
#include "tests/test_seed.hpp"

namespace pecheck {
namespace {

const Property& property(const std::string& id) { return registered_property(id); }

/// The scalar backend until call N; from call N + 1 on, every RoPE and table position is one step
/// nearer 0 and every attention scale a part in a thousand off (a stale table, a cache that wrapped); it
/// counts its calls.
struct DriftsAfter : mutants::Forwarding {
  using Forwarding::run;
  explicit DriftsAfter(long n) : Forwarding("drifts-after-n-calls"), n_(n) {}
  void run(const RopeApply& c) override {
    std::vector<std::int64_t> p(c.positions.begin(), c.positions.end());
    if (++calls > n_)
      for (auto& x : p) x = x > 0 ? x - 1 : x + 1;
    inner_->run(RopeApply{c.spec, c.dtype, c.heads, p, c.x});
  }
  void run(const SinusoidalTable& c) override {
    std::vector<std::int64_t> p(c.positions.begin(), c.positions.end());
    if (++calls > n_)
      for (auto& x : p) x = x > 0 ? x - 1 : x + 1;
    inner_->run(SinusoidalTable{c.spec, c.dtype, p, c.out});
  }
  void run(const Attention& c) override {
    AttentionSpec s = c.spec;
    if (++calls > n_) s.scale = s.effective_scale() * 1.001;
    inner_->run(Attention{s, c.dtype, c.positions, c.q, c.k, c.v, c.pe_table, c.out});
  }
  long calls = 0;

 private:
  long n_;
};

constexpr long kRunLength = props::kSequenceCalls * 100 - 5;  // the first case repeats no earlier input

class CallSequence : public ::testing::TestWithParam<const char*> {};

TEST_P(CallSequence, ADefaultRunIsAsLongAsThePagesSay) {
  DriftsAfter never(1L << 40);
  const PropertyResult r = property(GetParam()).run(never, DType::f32, RunParams{testing::test_seed(), 100});
  EXPECT_EQ(r.verdict, Verdict::pass) << r.message;
  EXPECT_EQ(never.calls, kRunLength);
}

TEST_P(CallSequence, ADriftAfterAnyNumberOfCallsInTheRunFails) {
  for (long n : {0L, 1L, 57L, 500L, 1000L, 1500L, kRunLength - 10, kRunLength - 2}) {
    DriftsAfter drifts(n);
    const PropertyResult r = property(GetParam()).run(drifts, DType::f32, RunParams{testing::test_seed(), 100});
    if (n == 0) {  // drifted from the first call on: every call agrees with every other
      EXPECT_EQ(r.verdict, Verdict::pass) << r.message;
      continue;
    }
    EXPECT_EQ(r.verdict, Verdict::fail) << "a drift after " << n << " calls was not seen";
    EXPECT_NE(r.message.find("drifted between them"), std::string::npos) << r.message;
  }
}

TEST_P(CallSequence, ADriftPastTheRunIsNotSeen) {
  DriftsAfter late(kRunLength);
  EXPECT_EQ(property(GetParam()).run(late, DType::f32, RunParams{testing::test_seed(), 100}).verdict, Verdict::pass);
}

INSTANTIATE_TEST_SUITE_P(Laws, CallSequence,
                         ::testing::Values("rope.call_sequence", "sinusoidal.call_sequence", "attention.call_sequence"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param).substr(0, std::string(info.param).find('.'));
                         });

}  // namespace
}  // namespace pecheck
