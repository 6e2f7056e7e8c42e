// Statelessness over long call sequences, not only within one property's cases: every encoder
// pecheck ships answers a call with the same bits wherever it comes in a sequence of thousands
// of calls of every operation, shape, dtype and scaling rule (what a cache keyed on too little,
// a buffer reused at another size, or a rule that remembers the longest length seen would
// break). The stateful dynamic-NTK mutant (transformers issue 25306) must be caught the same way.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <variant>

#include "harness/encoders.hpp"
#include "harness/generators.hpp"
#include "interface/encoder.hpp"
#include "mutants/mutants.hpp"

namespace pecheck {
namespace {

/// One call, its inputs kept, so that it can be made again.
struct Call {
  std::variant<RopeSpec, SinusoidalSpec, AlibiSpec> spec;
  DType dtype = DType::f32;
  int heads = 1;
  std::vector<std::int64_t> positions;
  std::vector<float> input;  ///< x for RoPE; the out buffer's size otherwise
};

Call draw(std::mt19937_64& rng) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<std::uint64_t>(n)); };
  Call c;
  c.dtype = kAllDTypes[static_cast<std::size_t>(pick(3))];
  const int tokens = 1 + pick(9);
  const std::int64_t far = std::int64_t{1} << (1 + pick(24));
  for (int t = 0; t < tokens; ++t)
    c.positions.push_back(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(far)));
  std::uniform_real_distribution<float> uniform(-1, 1);
  const int op = pick(4);
  if (op <= 1) {  // RoPE, half the calls: every scaling rule, dynamic NTK and LongRoPE at lengths below and past L0
    RopeSpec s{.head_dim = 2 * (2 + pick(64)), .base = std::array{1e4, 5e5, 1e6}[static_cast<std::size_t>(pick(3))]};
    s.rotary_dim = pick(2) ? s.head_dim : 2 * (2 + pick(s.head_dim / 2 - 1));
    s.layout = pick(2) ? RopeLayout::interleaved : RopeLayout::half_split;
    const auto kind = static_cast<RopeScalingKind>(pick(7));
    s.scaling = {.kind = kind, .factor = double(1 + pick(16)), .original_max_position = 1024 << pick(4)};
    s.scaling.seq_len = 1 + static_cast<std::int64_t>(rng() % 65536);
    if (kind == RopeScalingKind::longrope)
      gen::longrope_lists(s.scaling, s.rotary_dim, static_cast<std::uint32_t>(rng()));
    c.spec = s;
    c.heads = 1 + pick(3);
    c.input.resize(c.positions.size() * static_cast<std::size_t>(c.heads * s.head_dim));
    for (float& v : c.input) v = round_to(c.dtype, uniform(rng));
  } else if (op == 2) {
    const SinusoidalSpec s{.d_model = 2 * (1 + pick(128)), .base = 10000};
    c.spec = s;
    c.input.resize(c.positions.size() * static_cast<std::size_t>(s.d_model));
  } else {
    const AlibiSpec s{.heads = 1 + pick(16), .causal = pick(2) == 1};
    c.spec = s;
    c.input.resize(static_cast<std::size_t>(s.heads) * c.positions.size() * c.positions.size());
  }
  return c;
}

/// The call's output, or nothing when the encoder does not offer it.
std::optional<std::vector<float>> make(Encoder& enc, const Call& c) {
  std::vector<float> out = c.input;
  try {
    if (const auto* s = std::get_if<RopeSpec>(&c.spec))
      enc.run(RopeApply{*s, c.dtype, c.heads, c.positions, out});
    else if (const auto* t = std::get_if<SinusoidalSpec>(&c.spec))
      enc.run(SinusoidalTable{*t, c.dtype, c.positions, out});
    else
      enc.run(AlibiBias{std::get<AlibiSpec>(c.spec), c.dtype, c.positions, out});
  } catch (const Unsupported&) {
    return std::nullopt;
  }
  return out;
}

/// Runs `steps` random calls; every 25th, one of the probe calls again. Returns how many of the
/// repeats differed in any bit from the probe's first answer, and how many repeats there were.
std::pair<int, int> repeats_that_differ(Encoder& enc, std::uint64_t seed, int steps) {
  std::mt19937_64 rng(seed);
  std::vector<Call> probes;
  std::vector<std::optional<std::vector<float>>> first;
  for (int i = 0; i < 24; ++i) {
    probes.push_back(draw(rng));
    first.push_back(make(enc, probes.back()));
  }
  int differ = 0, repeats = 0;
  for (int step = 1; step <= steps; ++step) {
    make(enc, draw(rng));
    if (step % 25 != 0) continue;
    const std::size_t k = static_cast<std::size_t>(rng() % probes.size());
    if (!first[k]) continue;
    const auto again = make(enc, probes[k]);
    ++repeats;
    differ += !again || std::memcmp(again->data(), first[k]->data(), again->size() * sizeof(float)) != 0;
  }
  return {differ, repeats};
}

TEST(StatelessSequence, EveryEncoderAnswersACallTheSameWhereverItComes) {
  int checked = 0;
  for (const Backend& b : encoders_under_test()) {
    if (!b.probe().available) continue;
    const auto enc = b.make();
    const auto [differ, repeats] = repeats_that_differ(*enc, 2026, 3000);
    EXPECT_GT(repeats, 60) << b.name;  // not vacuous: the probes were offered and repeated
    EXPECT_EQ(differ, 0) << b.name << ": " << differ << " of " << repeats << " repeated calls changed";
    ++checked;
  }
  EXPECT_GE(checked, 3);
}

TEST(StatelessSequence, TheStatefulDynamicNtkMutantIsCaught) {
  for (const auto& m : mutants::scaling_mutants()) {
    const auto enc = m.make();
    if (enc->name() != "mutant-rope-dynamic-ntk-stateful") continue;
    const auto [differ, repeats] = repeats_that_differ(*enc, 2026, 3000);
    EXPECT_GT(differ, 0) << "the mutant answered all " << repeats << " repeated calls the same";
    return;
  }
  FAIL() << "mutant-rope-dynamic-ntk-stateful is not in the catalogue";
}

}  // namespace
}  // namespace pecheck
