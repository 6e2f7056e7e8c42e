// An encoder that crashes, aborts, throws or hangs is a reported result (verdict crash), never
// the end of the run; a healthy one gives the same result in a child as in-process.
#include "harness/isolation.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <thread>

#include "impl/scalar/scalar_encoder.hpp"
#include "properties/registry.hpp"

namespace pecheck {
namespace {

const Property& rope_relative() {
  for (const Property& p : property_registry())
    if (p.id == "rope.relative") return p;
  throw std::logic_error("rope.relative is not registered");
}

/// Forwards supports() to the scalar backend and misbehaves in rope_apply.
template <class Misbehave>
class Misbehaving final : public Offering<RopeApply> {
 public:
  using Offering<RopeApply>::run;
  std::string name() const override { return "misbehaving"; }
  void run(const RopeApply&) override { Misbehave{}(); }
};

struct Segfault {
  void operator()() { std::raise(SIGSEGV); }
};
struct Abort {
  void operator()() { std::abort(); }
};
struct Hang {
  void operator()() { std::this_thread::sleep_for(std::chrono::seconds(30)); }
};

template <class M>
Backend backend_of() {
  return {"misbehaving", "test",
          [] {
            return Availability{true, ""};
          },
          [] { return std::unique_ptr<Encoder>(new Misbehaving<M>); }};
}

const RunParams kParams{42, 20};

TEST(Isolation, SegfaultIsACrashWithTheSignal) {
  const PropertyResult r = run_isolated(rope_relative(), backend_of<Segfault>(), DType::f32, kParams);
  EXPECT_EQ(r.verdict, Verdict::crash);
  EXPECT_NE(r.message.find("signal 11"), std::string::npos) << r.message;
  EXPECT_EQ(r.encoder, "misbehaving");
  // The case journal names the case it crashed on.
  EXPECT_NE(r.counterexample.find("rope(layout="), std::string::npos) << r.counterexample;
}

TEST(Isolation, AbortIsACrash) {
  const PropertyResult r = run_isolated(rope_relative(), backend_of<Abort>(), DType::f32, kParams);
  EXPECT_EQ(r.verdict, Verdict::crash);
  EXPECT_NE(r.message.find("signal 6"), std::string::npos) << r.message;
}

TEST(Isolation, HangIsKilledAfterTheTimeout) {
  const PropertyResult r = run_isolated(rope_relative(), backend_of<Hang>(), DType::f32, kParams, {.timeout_s = 0.5});
  EXPECT_EQ(r.verdict, Verdict::crash);
  EXPECT_NE(r.message.find("hung"), std::string::npos) << r.message;
}

TEST(Isolation, HealthyEncoderGivesTheInProcessResult) {
  const Backend scalar{"scalar", "", [] { return Availability{true, ""}; }, [] { return make_scalar_encoder(); }};
  const PropertyResult isolated = run_isolated(rope_relative(), scalar, DType::bf16, kParams);
  const auto encoder = make_scalar_encoder();
  const PropertyResult direct = rope_relative().run(*encoder, DType::bf16, kParams);
  EXPECT_EQ(isolated.verdict, Verdict::pass) << isolated.message;
  EXPECT_EQ(isolated.cases, direct.cases);
  EXPECT_EQ(isolated.max_error_u, direct.max_error_u);
  EXPECT_EQ(isolated.bound_u, direct.bound_u);
  EXPECT_EQ(isolated.distribution, direct.distribution);
}

/// Claims RoPE in supports() but throws Unsupported when called: a skip, never a failure.
struct ThrowsUnsupported {
  void operator()() { throw Unsupported("misbehaving does not implement rope_apply for this layout"); }
};

TEST(Isolation, UnsupportedThrownMidRunIsASkip) {
  const PropertyResult r = run_isolated(rope_relative(), backend_of<ThrowsUnsupported>(), DType::f32, kParams);
  EXPECT_EQ(r.verdict, Verdict::skip) << r.message;
  EXPECT_NE(r.message.find("does not implement"), std::string::npos) << r.message;
}

/// The scalar backend, except that it declines half-split RoPE when called.
class DeclinesHalfSplit final : public Offering<RopeApply> {
 public:
  using Offering<RopeApply>::run;
  std::string name() const override { return "declines-half-split"; }
  Support supports(Op op, DType dt) const override { return inner_->supports(op, dt); }
  void run(const RopeApply& c) override {
    const auto& [s, dt, h, p, x] = c;
    if (s.layout == RopeLayout::half_split) throw Unsupported("declines half-split pairs");
    inner_->run(c);
  }

 private:
  std::unique_ptr<Encoder> inner_ = make_scalar_encoder();
};

TEST(Isolation, CasesDeclinedMidRunAreDiscardedAndTheRestStillRun) {
  const Backend b{"declines-half-split", "test",
                  [] {
                    return Availability{true, ""};
                  },
                  [] { return std::unique_ptr<Encoder>(new DeclinesHalfSplit); }};
  const PropertyResult r = run_isolated(rope_relative(), b, DType::f32, kParams);
  EXPECT_EQ(r.verdict, Verdict::pass) << r.message;
  EXPECT_EQ(r.cases, kParams.cases);
  EXPECT_NE(r.message.find("not offered by the encoder (declines half-split pairs)"), std::string::npos) << r.message;
}

}  // namespace
}  // namespace pecheck
