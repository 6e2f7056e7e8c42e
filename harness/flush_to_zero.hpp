// A platform that flushes subnormals to zero (XLA on the CPU, CUDA or Triton built with fast
// math), stated: gen::FlushSubnormals opens the statement for this thread, which the runner does
// while a property draws and judges its cases and the dump check while it judges a dump. Header-only,
// so that the measures every kernel test shares (harness/rope_measure.hpp) read it without linking
// the harness.
#pragma once

#include <cmath>
#include <limits>

namespace pecheck::gen {

namespace detail {
inline thread_local bool flush_subnormals = false;
}  // namespace detail

/// A platform that flushes subnormals to zero (XLA on CPU, CUDA and Triton kernels built with
/// fast math), stated as a convention for this thread while it lives (where `stated`): the data
/// drawn (harness/generators.hpp) and the results judged (flushed_pair_slack, flushed_value_slack)
/// read it. A dump's
/// stated "ftz" opens one around its judging (cli/dump_report.cpp).
class FlushSubnormals {
 public:
  explicit FlushSubnormals(bool stated = true) : saved_(detail::flush_subnormals) {
    detail::flush_subnormals = saved_ || stated;
  }
  ~FlushSubnormals() { detail::flush_subnormals = saved_; }
  FlushSubnormals(const FlushSubnormals&) = delete;
  FlushSubnormals& operator=(const FlushSubnormals&) = delete;

 private:
  bool saved_;
};

/// Whether a FlushSubnormals lives on this thread.
inline bool flushing_subnormals() { return detail::flush_subnormals; }

/// How far a rotated pair may move by flushing alone where a FlushSubnormals lives (0 elsewhere):
/// each component's two products and its difference may each be a subnormal the platform flushes,
/// less than FLT_MIN apiece, so 3 sqrt(2) FLT_MIN over the pair. The RoPE laws judge the error
/// beyond it: XLA flushes a result below FLT_MIN of normal inputs, as it does its inputs.
inline double flushed_pair_slack() {
  return detail::flush_subnormals ? 3 * std::sqrt(2.0) * static_cast<double>(std::numeric_limits<float>::min()) : 0.0;
}

/// How far one computed value may move by flushing alone where a FlushSubnormals lives (0
/// elsewhere): a result below FLT_MIN may come back as the zero of its sign, less than FLT_MIN
/// away. Learned's add judges the error beyond it (x + E[pos] can cancel below FLT_MIN).
inline double flushed_value_slack() {
  return detail::flush_subnormals ? static_cast<double>(std::numeric_limits<float>::min()) : 0.0;
}

}  // namespace pecheck::gen
