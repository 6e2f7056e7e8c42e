// A stated flush-to-zero platform (XLA on the CPU, CUDA or Triton built with fast math), as the
// thread that runs a property sees it: gen::FlushSubnormals (harness/generators.hpp) sets it while
// a property draws and judges its cases. Header-only, so that the measures every kernel test
// shares (harness/rope_measure.hpp) read it without linking the harness.
#pragma once

#include <cmath>
#include <limits>

namespace pecheck::gen {

namespace detail {
inline thread_local bool flush_subnormals = false;
}  // namespace detail

/// Whether a FlushSubnormals lives on this thread.
inline bool flushing_subnormals() { return detail::flush_subnormals; }

/// How far a rotated pair may move by flushing alone where a FlushSubnormals lives (0 elsewhere):
/// each component's two products and its difference may each be a subnormal the platform flushes,
/// less than FLT_MIN apiece, so 3 sqrt(2) FLT_MIN over the pair. The RoPE laws judge the error
/// beyond it: XLA flushes a result below FLT_MIN of normal inputs, as it does its inputs.
inline double flushed_pair_slack() {
  return detail::flush_subnormals ? 3 * std::sqrt(2.0) * static_cast<double>(std::numeric_limits<float>::min()) : 0.0;
}

}  // namespace pecheck::gen
