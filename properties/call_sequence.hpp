// The check shared by the call-sequence laws (rope.call_sequence, attention.call_sequence): the
// same input gives bitwise the same output however many calls came before it, and whatever they
// were. Each case makes kSequenceCalls calls: three inputs of its own, each called again and
// compared with its first call, interleaved with inputs of earlier cases (RunMemory, taken in
// turn), compared with their calls then. After the case its first input joins the earlier ones.
// A drift after any number of calls up to the run's length is seen at the next repeat of an
// earlier input that the drift changes: at most four calls later when it changes them all.
#pragma once

#include <fmt/format.h>

#include <any>
#include <array>
#include <bit>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/property.hpp"

namespace pecheck::props {

/// Rounds of four calls (an earlier case's input and the case's three) a case makes: 20 calls, so
/// 2,000 over the default 100 cases (the length the pages state).
inline constexpr int kSequenceRounds = 5;
inline constexpr int kSequenceCalls = 4 * kSequenceRounds;

/// How a family's law calls its encoder: the output for an input (failure set on an unclean one),
/// the case's three inputs (k = 0, 1, 2: the same spec, other data or positions; input 0 is the
/// run's first call and is kept for later cases, so it should be one a drift shows in), a label.
template <class Case>
struct SequenceCalls {
  std::function<std::vector<float>(const Case&, std::string& failure)> output;
  std::function<Case(const Case&, int)> input;
  std::function<std::string(const Case&)> describe;
};

template <class Case>
Outcome check_call_sequence(const Case& c, const RunParams& params, const SequenceCalls<Case>& calls) {
  if (!params.memory) throw std::logic_error("a call-sequence law runs inside run_property, which gives it memory");
  RunMemory& memory = *params.memory;
  Outcome o;
  const auto call = [&](const Case& x) {
    ++memory.calls;
    return calls.output(x, o.failure);
  };
  // Whether call `now` (just made) matches the earlier call `then` of the same input; on the first
  // output that differs, the failure says where.
  const auto same = [&](const std::vector<float>& then, long then_at, const std::vector<float>& now,
                        const std::string& what) {
    for (std::size_t i = 0; i < now.size() && i < then.size(); ++i)
      if (std::bit_cast<std::uint32_t>(then[i]) != std::bit_cast<std::uint32_t>(now[i])) {
        o.failure = fmt::format(
            "call {} of this run gave output {} = {:.9g}; call {}, of the same input ({}), gave {:.9g}: the encoder "
            "drifted between them",
            memory.calls, i, now[i], then_at, what, then[i]);
        return false;
      }
    return true;
  };
  const std::array<Case, 3> own = {calls.input(c, 0), calls.input(c, 1), calls.input(c, 2)};
  std::array<std::optional<std::vector<float>>, 3> seen;
  std::array<long, 3> seen_at{};
  for (int round = 0; round < kSequenceRounds; ++round)
    for (int slot = 0; slot < 4; ++slot) {
      const int which = (slot + round) % 4;  // each round in another order
      if (which == 3) {                      // an earlier case's input, in turn
        if (memory.earlier.empty()) continue;
        const RunMemory::Call& then = memory.earlier[memory.cursor++ % memory.earlier.size()];
        const Case& input = std::any_cast<const Case&>(then.input);
        const auto out = call(input);
        if (!o.failure.empty() || !same(then.output, then.at, out, "an earlier case's: " + calls.describe(input)))
          return o;
        continue;
      }
      const std::size_t k = static_cast<std::size_t>(which);
      auto out = call(own[k]);
      if (!o.failure.empty()) return o;
      if (!seen[k]) {
        seen[k] = std::move(out), seen_at[k] = memory.calls;
      } else if (!same(*seen[k], seen_at[k], out, calls.describe(own[k]))) {
        return o;
      }
    }
  memory.earlier.push_back({own[0], *seen[0], seen_at[0]});
  return o;
}

}  // namespace pecheck::props
