#include "harness/runner.hpp"

#include <map>
#include <set>

namespace pecheck {

std::string MeasurementTracker::record(const Outcome& o) {
  const bool at_most = direction_ == Direction::at_most;
  const std::string where = o.where.empty() ? "" : " at " + o.where;
  if (!o.failure.empty()) {
    if (!seen_ || ratio_ < std::numeric_limits<double>::infinity()) {
      worst_ = at_most ? std::numeric_limits<double>::infinity() : 0.0;
      bound_ = o.bound_u;
      ratio_ = std::numeric_limits<double>::infinity();
    }
    seen_ = true;
    return last_failure_ = o.failure + where;
  }
  // How close the case came to failing: error/bound, or bound/separation for at_least.
  double ratio = at_most ? o.error_u / o.bound_u : o.bound_u / o.error_u;
  if (std::isnan(ratio)) ratio = std::numeric_limits<double>::infinity();
  if (!seen_ || ratio > ratio_) {
    worst_ = o.error_u;
    bound_ = o.bound_u;
    ratio_ = ratio;
  }
  seen_ = true;
  const bool holds = at_most ? o.error_u <= o.bound_u : o.error_u > o.bound_u;
  if (holds) return {};
  return last_failure_ =
             at_most ? fmt::format("error {:.4g} u exceeds the bound {:.4g} u{}", o.error_u, o.bound_u, where)
                     : fmt::format("separation {:.4g} u does not exceed {:.4g} u{}", o.error_u, o.bound_u, where);
}

void fill_from_rapidcheck(const rc::detail::TestResult& r, const MeasurementTracker& t, PropertyResult& out) {
  out.max_error_u = t.worst();
  out.bound_u = t.bound_at_worst();
  if (r.template is<rc::detail::SuccessResult>()) {
    const auto* ok = &r.template get<rc::detail::SuccessResult>();
    out.verdict = Verdict::pass;
    out.cases = ok->numSuccess;
    // Marginal counts: how many cases carried each tag (RapidCheck counts whole tag sets,
    // which explode combinatorially and hide whether an edge region was hit at all).
    std::map<std::string, int> marginal;
    for (const auto& [tags, count] : ok->distribution) {
      std::set<std::string> unique;
      for (std::string tag : tags) {
        if (tag.size() >= 2 && tag.front() == '"' && tag.back() == '"') tag = tag.substr(1, tag.size() - 2);
        unique.insert(tag);
      }
      for (const auto& tag : unique) marginal[tag] += count;
    }
    out.distribution.assign(marginal.begin(), marginal.end());
  } else if (r.template is<rc::detail::FailureResult>()) {
    const auto* fail = &r.template get<rc::detail::FailureResult>();
    out.verdict = Verdict::fail;
    out.cases = fail->numSuccess + 1;
    out.message = t.last_failure().empty() ? fail->description : t.last_failure();
    for (const auto& [type, value] : fail->counterExample)
      out.counterexample += (out.counterexample.empty() ? "" : " ") + value;
  } else if (r.template is<rc::detail::GaveUpResult>()) {
    const auto* gave_up = &r.template get<rc::detail::GaveUpResult>();
    out.verdict = Verdict::fail;
    out.cases = gave_up->numSuccess;
    out.message = "gave up: " + gave_up->description;
  } else if (r.template is<rc::detail::Error>()) {
    const auto* error = &r.template get<rc::detail::Error>();
    out.verdict = Verdict::fail;
    out.message = "RapidCheck error: " + error->description;
  }
  if (!t.seen() && out.verdict == Verdict::pass) {
    out.verdict = Verdict::fail;  // a property that measured nothing proves nothing
    out.message = "no case was measured";
  }
}

}  // namespace pecheck

namespace pecheck {

void note_unsupported(PropertyResult& out, const MeasurementTracker& t, int unsupported, const std::string& reason) {
  if (!t.seen()) {
    out.verdict = Verdict::skip;
    out.cases = 0;
    out.message = reason;
    out.counterexample.clear();
    return;
  }
  const std::string note =
      fmt::format("{} drawn case{} not offered by the encoder ({})", unsupported, unsupported == 1 ? "" : "s", reason);
  // Only unsupported cases are discarded, so giving up means too many of them, not a failure.
  if (out.verdict == Verdict::fail && out.message.starts_with("gave up")) {
    out.verdict = Verdict::pass;
    out.message = note;
  } else if (out.verdict == Verdict::pass) {
    out.message = note;
  }
}

}  // namespace pecheck
