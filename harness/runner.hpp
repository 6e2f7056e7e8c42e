// Runs one property against one encoder with RapidCheck: draws cases from the property's
// generator, records every measurement, and shrinks a failure to a minimal counterexample.
#pragma once

#include <fmt/format.h>
#include <rapidcheck.h>
#include <rapidcheck/detail/TestListener.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <sstream>
#include <string>
#include <unordered_map>

#include "harness/case_journal.hpp"
#include "harness/property.hpp"

namespace pecheck {

/// The worst measurement over every evaluated case (shrinking included: each is a real case).
class MeasurementTracker {
 public:
  explicit MeasurementTracker(Direction d) : direction_(d) {}

  /// Records o; returns the failure message, empty when the case holds.
  std::string record(const Outcome& o);
  double worst() const { return worst_; }
  double bound_at_worst() const { return bound_; }
  bool seen() const { return seen_; }
  /// The failure of the last failing case: after shrinking, the counterexample's.
  const std::string& last_failure() const { return last_failure_; }

 private:
  Direction direction_;
  bool seen_ = false;
  double worst_ = 0, bound_ = 0, ratio_ = -1;
  std::string last_failure_;
};

/// Converts RapidCheck's result into a PropertyResult (verdict, cases, counterexample).
void fill_from_rapidcheck(const rc::detail::TestResult& r, const MeasurementTracker& t, PropertyResult& out);

/// Folds the cases the encoder did not offer into the result: none measured is a skip; some
/// measured and none failed is a pass over those, saying how many were not offered.
void note_unsupported(PropertyResult& out, const MeasurementTracker& t, int unsupported, const std::string& reason);

/// Listens to nothing: results come back as values, and RapidCheck's global listener (which
/// prints its configuration and a reproduce string at exit) stays out of our reports.
struct SilentListener final : rc::detail::TestListener {
  void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
  void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
};

/// Generic runner: Gen(DType) -> rc::Gen<Case>; Check(Encoder&, DType, const Case&) -> Outcome.
/// A Case renders itself with describe() and classifies itself with tags().
template <class Case, class GenFn, class CheckFn>
PropertyResult run_property(const Property& p, GenFn gen_fn, CheckFn check, Encoder& enc, DType dt,
                            const RunParams& params) {
  PropertyResult out;
  out.property = p.id;
  out.encoder = enc.name();
  out.dtype = dt;
  out.seed = derive_seed(params.seed, p.id, dt);
  if (const Support s = enc.supports(p.op, dt); !s.ok) {
    out.verdict = Verdict::skip;
    out.message = s.reason;
    return out;
  }
  MeasurementTracker tracker(p.direction);
  const rc::Gen<Case> gen = gen_fn(dt);
  // A case the encoder does not offer (Unsupported: a layout, a scaling rule, a size) is
  // discarded and the others still run; an encoder that refuses the first kSticky cases is taken
  // to refuse them all (a skip, as supports() would have said) without drawing a thousand more.
  constexpr int kSticky = 10;
  int unsupported = 0;
  std::string unsupported_reason;
  const auto property = [&] {
    if (unsupported >= kSticky && !tracker.seen()) RC_DISCARD(unsupported_reason);
    const Case c = *gen;
    for (const std::string& tag : c.tags()) RC_TAG(tag);
    if (journal::active()) journal::note_case(c.describe());  // named if the encoder crashes on it
    std::string failure;
    try {
      failure = tracker.record(check(enc, dt, c));
    } catch (const Unsupported& e) {
      ++unsupported;
      unsupported_reason = e.what();
      RC_DISCARD(unsupported_reason);
    } catch (const std::exception& e) {  // an encoder that throws on a valid case fails it
      failure = tracker.record({.failure = fmt::format("the encoder threw: {}", e.what())});
    }
    if (!failure.empty()) RC_FAIL(failure);
  };
  rc::detail::TestParams tp;
  tp.seed = out.seed;
  tp.maxSuccess = params.cases;
  tp.maxSize = 100;
  tp.maxDiscardRatio = 10;
  rc::detail::TestMetadata md;
  md.id = p.id + "/" + enc.name() + "/" + std::string(dtype_name(dt));
  md.description = md.id;
  SilentListener listener;
  const std::unordered_map<std::string, rc::detail::Reproduce> no_reproduce;  // not RC_PARAMS: our seed rules
  fill_from_rapidcheck(rc::detail::checkProperty(rc::detail::toProperty(property), md, tp, listener, no_reproduce),
                       tracker, out);
  if (unsupported > 0) note_unsupported(out, tracker, unsupported, unsupported_reason);
  return out;
}

/// What a theorem file states about itself; the doc page and source path follow from the id.
struct PropertyInfo {
  std::string id, statement;
  Family family;
  Op op;
  std::vector<DType> dtypes = {DType::f32, DType::bf16, DType::f16};
  Direction direction = Direction::at_most;
  bool convention_free = false;  ///< see Property::convention_free
};

/// A registered property from its info, its case generator and its check.
template <class Case, class GenFn, class CheckFn>
Property make_property(PropertyInfo info, GenFn gen_fn, CheckFn check) {
  std::string file = info.id;
  std::replace(file.begin(), file.end(), '.', '_');
  Property p{.id = info.id,
             .statement = std::move(info.statement),
             .doc = "docs/properties/" + info.id + ".md",
             .source = "properties/" + file + ".cpp",
             .family = info.family,
             .op = info.op,
             .dtypes = std::move(info.dtypes),
             .direction = info.direction,
             .convention_free = info.convention_free};
  p.run = [p, gen_fn, check](Encoder& e, DType dt, const RunParams& rp) {
    return run_property<Case>(p, gen_fn, check, e, dt, rp);
  };
  return p;
}

}  // namespace pecheck

namespace pecheck::props {
/// RapidCheck prints a counterexample through showValue, found by ADL in the case's namespace.
template <class Case>
requires requires(const Case& c) { c.describe(); }
void showValue(const Case& c, std::ostream& os) { os << c.describe(); }
}  // namespace pecheck::props
