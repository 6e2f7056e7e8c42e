// Cases shared by the sinusoidal theorems: a spec and a few positions.
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
#include <string>
#include <vector>

#include "harness/generators.hpp"
#include "harness/measure.hpp"
#include "harness/runner.hpp"
#include "interface/encoder.hpp"

namespace pecheck::props {

struct SinusoidalCase {
  SinusoidalSpec spec;
  std::vector<std::int64_t> positions;

  std::string describe() const { return fmt::format("{} pos=[{}]", spec.describe(), fmt::join(positions, ",")); }
  std::vector<std::string> tags() const {
    std::vector<std::string> t{gen::dim_class(spec.d_model)};
    for (auto p : positions) t.push_back(gen::position_class(p));
    return t;
  }
};

/// Vaswani's frequencies mostly, fairseq's (base^(-i/(d/2-1))) a third of the time; no padding row.
rc::Gen<SinusoidalSpec> sinusoidal_spec_gen();

/// The encoder's rows for the given positions; failure set when an output is not clean.
inline std::vector<float> encoder_rows(Encoder& enc, DType dt, const SinusoidalSpec& s,
                                       const std::vector<std::int64_t>& positions, std::string& failure) {
  std::vector<float> out = poisoned(positions.size() * static_cast<std::size_t>(s.d_model));
  enc.run(SinusoidalTable{s, dt, positions, out});
  failure = classify_outputs(dt, out, "pe");
  return out;
}

/// (sin, cos) of pair i of row r, as a complex number cos + i sin.
struct Phasor {
  double re, im;
};
inline Phasor phasor(const SinusoidalSpec& s, const std::vector<float>& rows, std::size_t r, int i) {
  const std::size_t d = static_cast<std::size_t>(s.d_model);
  const bool inter = s.layout == SinusoidalLayout::interleaved;
  const std::size_t si = inter ? 2 * static_cast<std::size_t>(i) : static_cast<std::size_t>(i);
  const std::size_t ci = inter ? si + 1 : d / 2 + static_cast<std::size_t>(i);
  return {rows[r * d + ci], rows[r * d + si]};
}

}  // namespace pecheck::props

namespace pecheck {
// The case type erased once, in properties/absolute/sinusoidal_cases.cpp (see erased() in harness/runner.hpp).
extern template rc::Gen<AnyCase> erased(rc::Gen<props::SinusoidalCase>);
}  // namespace pecheck
