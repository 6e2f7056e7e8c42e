// T5's bucket of a relative position, with the log coordinate in double, written once for every
// backend: the scalar and vector kernels on the host and the CUDA bodies (C++17, host and device).
// Where the exact coordinate is an integer (a bucket edge: (n / max_exact)^(half - max_exact) a
// power of max_distance / max_exact) double may round either way; the T5 property accepts both
// there, and attention's T5 cases draw no distance that near an edge (reference/t5.hpp's ties).
#pragma once

#include <math.h>

#include <cstdint>

#include "impl/angles.hpp"  // PECHECK_HOST_DEVICE

namespace pecheck::t5 {

/// A T5Spec's bucketing as the kernels read it.
struct Buckets {
  int half = 16;      ///< buckets per direction (num_buckets, halved when bidirectional)
  int max_exact = 8;  ///< distances below it get their own bucket
  bool bidirectional = true;
  double log_range = 0;  ///< log(max_distance / max_exact)
};

inline Buckets buckets(int half, int max_exact, bool bidirectional, int max_distance) {
  return {half, max_exact, bidirectional, log(static_cast<double>(max_distance) / max_exact)};
}
/// A T5Spec's (spec/conventions.hpp, which this C++17 header does not include).
template <class Spec>
Buckets buckets_of(const Spec& s) {
  return buckets(s.half(), s.max_exact(), s.bidirectional, s.max_distance);
}

/// relative = p_j - p_i (key minus query): bidirectional, keys after the query take the upper
/// half; causal, they all fall in bucket 0.
PECHECK_HOST_DEVICE inline int bucket(std::int64_t relative, const Buckets& b) {
  const int offset = b.bidirectional && relative > 0 ? b.half : 0;
  const std::int64_t dist = b.bidirectional ? (relative < 0 ? -relative : relative) : (relative < 0 ? -relative : 0);
  if (dist < b.max_exact) return offset + static_cast<int>(dist);
  const double t = (b.half - b.max_exact) * log(static_cast<double>(dist) / b.max_exact) / b.log_range;
  return offset + static_cast<int>(fmin(b.max_exact + floor(t), static_cast<double>(b.half - 1)));
}

}  // namespace pecheck::t5
