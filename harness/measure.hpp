// Shared pieces of every check: poisoned output buffers, special-value classification before
// any error metric, and conversions to the reference's Real.
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "harness/property.hpp"
#include "reference/real.hpp"
#include "spec/dtype.hpp"

namespace pecheck::props {

using Real = ref::DefaultReal;

/// An output buffer filled with NaN, so an entry the encoder never wrote cannot pass.
inline std::vector<float> poisoned(std::size_t n) {
  return std::vector<float>(n, std::numeric_limits<float>::quiet_NaN());
}

/// Special values first: every output must be finite (unless `allow_neg_inf`) and a value of the
/// storage dtype. Returns the failure, empty when the buffer is clean.
inline std::string classify_outputs(DType dt, std::span<const float> out, std::string_view what) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (std::isnan(out[i])) return fmt::format("{}[{}] is NaN (not written, or computed NaN)", what, i);
    if (std::isinf(out[i])) return fmt::format("{}[{}] is {} where the exact value is finite", what, i, out[i]);
    if (!representable(dt, out[i]))
      return fmt::format("{}[{}] = {} is not a {} value", what, i, out[i], dtype_name(dt));
  }
  return {};
}

template <class R = Real>
std::vector<R> to_real(std::span<const float> x) {
  return std::vector<R>(x.begin(), x.end());
}

/// x.y summed in double, in index order (the score of the relativity theorems).
inline double dot(std::span<const float> a, std::span<const float> b) {
  double acc = 0;
  for (std::size_t i = 0; i < a.size(); ++i) acc += double{a[i]} * b[i];
  return acc;
}

/// The reference's values rounded to double, for the measurements that compare in double.
template <class R>
std::vector<double> to_doubles(const std::vector<R>& exact) {
  std::vector<double> out(exact.size());
  for (std::size_t i = 0; i < exact.size(); ++i) out[i] = ref::to_double(exact[i]);
  return out;
}

/// Euclidean norm of a pair, in double.
inline double pair_norm(double a, double b) { return std::hypot(a, b); }

/// Running maximum that remembers where it happened (NaN counts as the worst).
struct WorstOf {
  double value = 0;
  std::string where;
  bool empty = true;
  template <class Where>
  void offer(double v, Where&& at) {
    if (empty || v > value || (std::isnan(v) && !std::isnan(value))) {
      value = v;
      where = at();
      empty = false;
    }
  }
  /// The worst value and its place become the case's measurement.
  Outcome& store(Outcome& o) const {
    o.error_u = value;
    o.where = where;
    return o;
  }
};

}  // namespace pecheck::props
