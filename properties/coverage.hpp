// What a run exercised, read back from its cases' tags (Property results' distribution): per
// encoder and operation, the forms real kernels are written in that no case of the run drew (a
// layout, a scaling rule, grouped-query or windowed attention, a decode step, a key tile crossed,
// a position past 2^20), so that a pass says what it covered and a form never drawn is named,
// not implied.
#pragma once

#include <string>
#include <vector>

#include "harness/property.hpp"

namespace pecheck {

/// The case tags (AttentionCase::tags() and the others) that stand for the forms of `op` a run
/// should exercise. A pinned encoder (one convention) is not asked for the forms its convention
/// fixes: RoPE's layouts and rules, attention's PEs.
std::vector<std::string> coverage_forms(Op op, bool pinned);

struct CoverageGap {
  std::string encoder;
  Op op;
  std::vector<std::string> never;  ///< the forms no case drew, in coverage_forms' order
  int cases = 0;                   ///< the cases run for this encoder and operation (pass or fail rows)
};

/// Over a run's results (its pass and fail rows; skips drew nothing), per encoder and operation
/// in the order first met: the forms no case exercised. An encoder and operation with no case run
/// is not listed (its rows say why).
std::vector<CoverageGap> coverage_gaps(const std::vector<PropertyResult>& results, bool pinned);

/// One line per gap, "never exercised on <encoder> (<op>, <cases> cases): window, stated scale";
/// or, where nothing is missing, one line saying every form was.
std::vector<std::string> coverage_lines(const std::vector<CoverageGap>& gaps);

}  // namespace pecheck
