// Shared by the CUDA backend's tests: an encoder under test by name, and deterministic attention
// inputs of a dtype.
#pragma once

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/encoders.hpp"

namespace pecheck::testing {

inline const Backend& backend(const std::string& name) {
  for (const Backend& b : encoders_under_test())
    if (b.name == name) return b;
  throw std::logic_error("no encoder under test is named " + name);
}

/// Q, K and V of `count` values of dt each, in [-1, 1], different from one another.
struct AttentionInputs {
  std::vector<float> q, k, v;
};

inline AttentionInputs attention_inputs(std::size_t count, DType dt) {
  AttentionInputs in{std::vector<float>(count), std::vector<float>(count), std::vector<float>(count)};
  for (std::size_t i = 0; i < count; ++i) {
    in.q[i] = round_to(dt, std::sin(0.7 * double(i)));
    in.k[i] = round_to(dt, std::cos(1.9 * double(i)));
    in.v[i] = round_to(dt, std::sin(0.3 * double(i) + 2));
  }
  return in;
}

}  // namespace pecheck::testing
