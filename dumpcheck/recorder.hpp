// The octave-by-octave recorder behind every dump measurement (dumpcheck/agreement.cpp,
// dumpcheck/alibi_dump.cpp): errors per octave of position, the worst one against its bound,
// and the finding in plain words. Internal to dumpcheck/.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>

#include "dumpcheck/agreement.hpp"
#include "harness/rope_measure.hpp"

namespace pecheck::dumpcheck {

/// Collects errors per octave and the worst one overall.
class Recorder {
 public:
  /// `filed_by` names what the octaves are of, in the summary: "position", or "distance" for the
  /// biases filed by |p_i - p_j| ("key position" for BLOOM's key form).
  Recorder(std::string property, double bound, std::string bound_text = "", std::string filed_by = "position")
      : filed_by_(std::move(filed_by)) {
    m_.property = std::move(property), m_.bound_u = bound, m_.filed_by = filed_by_;
    m_.bound_text = bound_text.empty() ? fmt::format("{:.4g} u", bound) : std::move(bound_text);
  }

  /// An error at `pos`, judged by `bound` (the recorder's own when not given).
  template <class Where>
  void offer(std::int64_t pos, double err_u, double abs_err, Where&& where, double bound = 0) {
    if (std::isnan(err_u)) err_u = std::numeric_limits<double>::infinity();
    const double ratio = err_u / (bound > 0 ? bound : m_.bound_u);
    const std::size_t k = static_cast<std::size_t>(measure::octave_of(pos));
    if (m_.octaves.size() <= k) m_.octaves.resize(k + 1);
    Octave& o = m_.octaves[k];
    o.max_u = std::max(o.max_u, err_u);
    o.max_ratio = std::max(o.max_ratio, ratio);
    o.max_abs = std::max(o.max_abs, std::isnan(abs_err) ? std::numeric_limits<double>::infinity() : abs_err);
    m_.max_u = std::max(m_.max_u, err_u);
    if (m_.where.empty() || ratio > m_.max_ratio) {
      m_.max_ratio = ratio;
      m_.where = where();
    }
  }
  void count_token(std::int64_t pos) {
    const std::size_t k = static_cast<std::size_t>(measure::octave_of(pos));
    if (m_.octaves.size() <= k) m_.octaves.resize(k + 1);
    ++m_.octaves[k].tokens;
  }

  /// Drops empty octaves, names their ranges and writes the plain-words summary.
  Measurement finish(std::string_view what) {
    std::vector<Octave> kept;
    for (std::size_t k = 0; k < m_.octaves.size(); ++k) {
      Octave o = m_.octaves[k];
      o.lo = measure::octave_lo(static_cast<int>(k));
      o.hi = measure::octave_hi(static_cast<int>(k));
      if (o.tokens > 0) kept.push_back(o);
    }
    m_.octaves = kept;
    const auto first_bad = std::find_if(kept.begin(), kept.end(), [&](const Octave& o) { return !o.holds(); });
    const std::string& bound = m_.bound_text;
    if (first_bad == kept.end()) {
      m_.summary = fmt::format("{} within {} at every {} present (max {:.3g} u, worst against its bound at {})", what,
                               bound, filed_by_, m_.max_u, m_.where);
    } else if (first_bad == kept.begin()) {
      m_.summary = fmt::format("{} fails from the smallest {}s on: {:.3g} u, {:.3g} times {}, at {}", what, filed_by_,
                               first_bad->max_u, first_bad->max_ratio, bound, m_.where);
    } else {
      m_.summary = fmt::format(
          "{} holds within {} below {} {}; from [{},{}) it exceeds it ({:.3g} u, |diff| {:.2g}), growing to "
          "{:.3g} times it at {}",
          what, bound, filed_by_, first_bad->lo, first_bad->lo, first_bad->hi, first_bad->max_u, first_bad->max_abs,
          m_.max_ratio, m_.where);
    }
    return m_;
  }

 private:
  Measurement m_;
  std::string filed_by_;
};

}  // namespace pecheck::dumpcheck
