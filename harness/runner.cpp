// The runner, compiled once for every theorem. RapidCheck's public API runs a property inside a
// GoogleTest or a rc::check() call that prints to stdout and reads RC_PARAMS; pecheck needs the
// result as a value, its own seed per property x dtype, and silence. So this file, and only this
// file, uses RapidCheck's internals: rc::detail::checkProperty/toProperty with TestParams (seed,
// case count, size, discard ratio) and TestMetadata, a TestListener that listens to nothing, and
// the TestResult variants (SuccessResult with its tag distribution, FailureResult with its
// shrunk counterexample, GaveUpResult, Error). They are the same across RapidCheck's Debian 12
// package and its upstream head.
#include "harness/runner.hpp"

#include <fmt/format.h>
#include <rapidcheck/detail/TestListener.h>

#include <cmath>
#include <exception>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include "harness/case_journal.hpp"
#include "harness/told_apart.hpp"

namespace pecheck {

namespace {

/// The worst measurement over every evaluated case (shrinking included: each is a real case).
class MeasurementTracker {
 public:
  explicit MeasurementTracker(Direction d) : direction_(d) {}

  /// Records o; returns the failure message, empty when the case holds.
  std::string record(const Outcome& o);
  double worst() const { return worst_; }
  double bound_at_worst() const { return bound_; }
  bool seen() const { return seen_; }
  /// Cases up to and including the first failing one that were not trivial (shrinks excluded).
  int nontrivial() const { return nontrivial_; }
  /// The failure of the last failing case: after shrinking, the counterexample's.
  const std::string& last_failure() const { return last_failure_; }
  /// That case's measurement (NaN when its failure was not a measurement: unclean outputs).
  double last_failure_error() const { return last_failure_error_; }
  /// And its bound (NaN alike).
  double last_failure_bound() const { return last_failure_bound_; }

 private:
  /// The verdict on o alone, keeping the worst measurement.
  std::string judge(const Outcome& o);

  Direction direction_;
  bool seen_ = false, failed_ = false;
  int nontrivial_ = 0;
  double worst_ = 0, bound_ = 0, ratio_ = -1;
  std::string last_failure_;
  double last_failure_error_ = std::numeric_limits<double>::quiet_NaN();
  double last_failure_bound_ = std::numeric_limits<double>::quiet_NaN();
};

/// Listens to nothing: results come back as values, and RapidCheck's global listener (which
/// prints its configuration and a reproduce string at exit) stays out of our reports.
struct SilentListener final : rc::detail::TestListener {
  void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
  void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
};

std::string MeasurementTracker::record(const Outcome& o) {
  std::string failure = judge(o);
  // Every case before the first failure is one RapidCheck counts as a success; after it, each
  // case is a shrink. The failing case itself could fail, so it counts as non-trivial.
  if (!failed_ && (!o.trivial || !failure.empty())) ++nontrivial_;
  failed_ = failed_ || !failure.empty();
  return failure;
}

std::string MeasurementTracker::judge(const Outcome& o) {
  const bool at_most = direction_ == Direction::at_most;
  const std::string where = o.where.empty() ? "" : " at " + o.where;
  if (!o.failure.empty()) {
    if (!seen_ || ratio_ < std::numeric_limits<double>::infinity()) {
      worst_ = at_most ? std::numeric_limits<double>::infinity() : 0.0;
      bound_ = o.bound_u;
      ratio_ = std::numeric_limits<double>::infinity();
    }
    seen_ = true;
    last_failure_error_ = last_failure_bound_ = std::numeric_limits<double>::quiet_NaN();
    return last_failure_ = o.failure + where;
  }
  // How close the case came to failing: error/bound, or bound/separation for at_least.
  double ratio = at_most ? o.error_u / o.bound_u : o.bound_u / o.error_u;
  // An exact law (bound 0, e.g. attention.determinism): a case that meets it came nowhere near.
  if (at_most && o.bound_u == 0 && o.error_u == 0) ratio = 0;
  if (std::isnan(ratio)) ratio = std::numeric_limits<double>::infinity();
  if (!seen_ || ratio > ratio_) {
    worst_ = o.error_u;
    bound_ = o.bound_u;
    ratio_ = ratio;
  }
  seen_ = true;
  const bool holds = at_most ? o.error_u <= o.bound_u : o.error_u > o.bound_u;
  if (holds) return {};
  last_failure_error_ = o.error_u;
  last_failure_bound_ = o.bound_u;
  const auto [error, bound] = told_apart(o.error_u, o.bound_u);
  return last_failure_ = at_most ? fmt::format("error {} u exceeds the bound {} u{}", error, bound, where)
                                 : fmt::format("separation {} u does not exceed {} u{}", error, bound, where);
}

/// Converts RapidCheck's result into a PropertyResult (verdict, cases, counterexample).
void fill_from_rapidcheck(const rc::detail::TestResult& r, const MeasurementTracker& t, PropertyResult& out) {
  out.max_error_u = t.worst();
  out.bound_u = t.bound_at_worst();
  out.nontrivial_cases = t.nontrivial();
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
    out.counterexample_error_u = t.last_failure_error();
    out.counterexample_bound_u = t.last_failure_bound();
    // The case the check ran: the last pick. A case the encoder declined is drawn again (below),
    // and each redraw is a pick of its own that RapidCheck also lists.
    if (!fail->counterExample.empty()) out.counterexample = fail->counterExample.back().second;
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

/// Folds the cases the encoder did not offer into the result: none measured is a skip; some
/// measured and none failed is a pass over those, saying how many were not offered.
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

/// A pass over too few cases that could have failed is no pass: it becomes a vacuous failure.
void refuse_vacuous_pass(PropertyResult& out) {
  if (out.verdict != Verdict::pass || out.cases == 0) return;
  if (out.nontrivial_cases >= kMinNontrivialShare * out.cases) return;
  out.verdict = Verdict::fail;
  out.vacuous = true;
  out.message = fmt::format(
      "vacuous: only {} of {} cases could have failed (a pass needs {:.0f}%); the others compared a call with "
      "itself or had a bound no output could exceed{}",
      out.nontrivial_cases, out.cases, 100 * kMinNontrivialShare, out.message.empty() ? "" : "; " + out.message);
}

}  // namespace

namespace {

/// RapidCheck's largest size: its cases run through sizes 0 to this, and its generators choose
/// from their whole range only from about half of it (at size 0, gen::element picks its first).
constexpr int kMaxSize = 100;

/// One RapidCheck pass of p over enc: cases whose tags include one of `excluded` are discarded
/// (a rerun that looks for another rule's counterexample). Also gives the scaling rule of the
/// last failing case, when it carried one ("scaling:<rule>" among its tags).
struct Pass {
  PropertyResult result;
  std::string failing_rule;
};

Pass run_pass(const Property& p, const rc::Gen<AnyCase>& gen, const AnyCheck& check, Encoder& enc, DType dt,
              const RunParams& params, const std::set<std::string>& excluded) {
  Pass pass;
  PropertyResult& out = pass.result;
  out.property = p.id;
  out.encoder = enc.name();
  out.dtype = dt;
  out.seed = derive_seed(params.seed, p, dt);
  MeasurementTracker tracker(p.direction);
  // A case the encoder does not offer (Unsupported: a layout, a scaling rule, a size) is drawn
  // again, up to kRedraws times, at sizes from half the largest up: RapidCheck draws its first
  // cases at small sizes, where each choice is its first (interleaved, no scaling), so an encoder
  // that declines that one alone would otherwise decline every early case and lose a property
  // that needs nothing it declines. A case still declined is discarded and the others run; after
  // kSticky such cases with none measured, the encoder is taken to refuse them all (a skip, as
  // supports() would have said) without drawing a thousand more.
  constexpr int kSticky = 10, kRedraws = 8;
  int declined_cases = 0;
  // Each reason given, and how often: the report names the commonest (a case may be declined for
  // what every case needs, a decode step, or for what only some draw, a PE).
  std::map<std::string, int> reasons;
  const auto commonest = [&] {
    return std::max_element(reasons.begin(), reasons.end(),
                            [](const auto& a, const auto& b) { return a.second < b.second; })
        ->first;
  };
  // A batched encoder's pass that defers: a case with a call still unanswered measured placeholders,
  // so it counts for nothing (a success to RapidCheck, so that the pass draws what the next will).
  // While shrinking, the first such candidate ends the descent for this pass: every later one is
  // still made (its calls deferred with the rest) and counts for nothing, so that one flush answers
  // the candidates of a level and the next pass descends one level further along the same path.
  CallBatcher* const batcher = enc.batcher();
  bool failed = false, deferred_in_search = false, deferred_in_shrink = false, shrinks_void = false;
  const auto defer_case = [&] { (failed ? deferred_in_shrink : deferred_in_search) = true; };
  const auto property = [&] {
    if (shrinks_void) return;  // a failure after a deferral: this pass is drawn again, unshrunk
    if (declined_cases >= kSticky && !tracker.seen() && !deferred_in_search) RC_DISCARD(commonest());
    AnyCase c = *gen;
    std::string failure;
    for (int redraw = 1;; ++redraw) {
      for (const std::string& tag : c.tags())
        if (excluded.contains(tag)) RC_DISCARD("a rule whose counterexample is already reported");
      if (journal::active()) journal::note_case(c.describe());  // named if the encoder crashes on it
      const long deferred_before = batcher ? batcher->deferred() : 0;
      const auto unanswered = [&] { return batcher && batcher->deferred() != deferred_before; };
      try {
        const Outcome outcome = check(enc, dt, c, params);
        if (unanswered()) return defer_case();
        failure = tracker.record(outcome);
        break;
      } catch (const Unsupported& e) {
        if (unanswered()) return defer_case();
        ++reasons[e.what()];
        if (redraw > kRedraws) {
          ++declined_cases;
          RC_DISCARD(e.what());
        }
        c = *rc::gen::resize(kMaxSize / 2 + kMaxSize * redraw / (2 * kRedraws), gen);
      } catch (const std::exception& e) {  // an encoder that throws on a valid case fails it
        if (unanswered()) return defer_case();
        failure = tracker.record({.failure = fmt::format("the encoder threw: {}", e.what())});
        break;
      }
    }
    if (deferred_in_shrink) return;  // a candidate after a deferred one: collected, not descended into
    const std::vector<std::string> tags = c.tags();
    for (const std::string& tag : tags) RC_TAG(tag);
    if (!failure.empty()) {
      pass.failing_rule.clear();
      for (const std::string& tag : tags)
        if (tag.starts_with("scaling:")) pass.failing_rule = tag;
      // A failure found after a deferral in the search may not be the run's first: this pass is
      // drawn again once the deferred calls are answered, and its shrinks are not tried.
      if (!failed && deferred_in_search) shrinks_void = true;
      failed = true;
      RC_FAIL(failure);
    }
  };
  rc::detail::TestParams tp;
  tp.seed = out.seed;
  tp.maxSuccess = params.cases;
  tp.maxSize = kMaxSize;
  tp.maxDiscardRatio = 10;
  tp.disableShrinking = !params.shrink;
  rc::detail::TestMetadata md;
  md.id = p.id + "/" + enc.name() + "/" + std::string(dtype_name(dt));
  md.description = md.id;
  SilentListener listener;
  const std::unordered_map<std::string, rc::detail::Reproduce> no_reproduce;  // not RC_PARAMS: our seed rules
  fill_from_rapidcheck(rc::detail::checkProperty(rc::detail::toProperty(property), md, tp, listener, no_reproduce),
                       tracker, out);
  if (!reasons.empty()) {
    int declined_calls = 0;
    for (const auto& [reason, count] : reasons) declined_calls += count;
    note_unsupported(out, tracker, declined_calls, commonest());
  }
  refuse_vacuous_pass(out);
  return pass;
}

/// run_pass, for an encoder that answers calls a batch at a time (CallBatcher): passes over the
/// same draws, each answering at once what the last deferred, until one defers nothing (most
/// properties: one or two, the depth of calls that take an earlier call's output). Each pass has
/// a fresh RunMemory, so each draws as the first did. A failure's shrinking takes a pass a level (the
/// candidates of a level answered together). Past kPasses, one pass answering each call as it
/// comes. Leaves the encoder answering calls as they come (a hint's, a rerun's).
Pass run_settled(const Property& p, const rc::Gen<AnyCase>& gen, const AnyCheck& check, Encoder& enc, DType dt,
                 const RunParams& run_params, const std::set<std::string>& excluded) {
  CallBatcher* const batcher = enc.batcher();
  if (!batcher) return run_pass(p, gen, check, enc, dt, run_params, excluded);
  constexpr int kPasses = 64;
  RunParams params = run_params;
  for (int i = 0; i <= kPasses; ++i) {
    batcher->begin_pass(/*defer=*/i < kPasses);
    params.memory = std::make_shared<RunMemory>();
    Pass pass = run_pass(p, gen, check, enc, dt, params, excluded);
    if (batcher->deferred() == 0) {
      batcher->begin_pass(false);
      return pass;
    }
    if (journal::active()) journal::note_case(fmt::format("a batched call of {} deferred calls", batcher->deferred()));
    batcher->flush();
  }
  throw std::logic_error("a pass that answers every call as it comes deferred one");
}

}  // namespace

PropertyResult run_property(const Property& p, const rc::Gen<AnyCase>& gen, const AnyCheck& check, Encoder& enc,
                            DType dt, const RunParams& run_params) {
  if (const Support s = enc.supports(p.op, dt); !s.ok)
    return skipped_result(p, enc.name(), dt, run_params.seed, s.reason);
  RunParams params = run_params;
  params.memory = std::make_shared<RunMemory>();  // one for the run, its shrinks and its reruns
  Pass first = run_settled(p, gen, check, enc, dt, params, {});
  // One counterexample per scaling rule that fails: a corner of one rule (a YaRN edge) must not
  // hide a fault of another (fp32 angles under no scaling). The rule of each counterexample is
  // set aside and the property run again, until it holds on the rules left.
  std::set<std::string> excluded;
  std::string rule = first.failing_rule;
  while (params.per_rule && first.result.verdict == Verdict::fail && !rule.empty() && excluded.size() < 6) {
    excluded.insert(rule);
    const Pass again = run_settled(p, gen, check, enc, dt, params, excluded);
    if (again.result.verdict != Verdict::fail || again.result.message.starts_with("gave up")) break;
    first.result.other_rules.push_back({again.failing_rule.empty() ? "?" : again.failing_rule.substr(8),
                                        again.result.counterexample, again.result.message,
                                        again.result.counterexample_error_u});
    rule = again.failing_rule;
  }
  if (!first.result.other_rules.empty())
    first.result.message +=
        fmt::format(" (under {}; {} more rule{} fail: see below)", first.failing_rule.substr(8),
                    first.result.other_rules.size(), first.result.other_rules.size() == 1 ? "" : "s");
  if (first.result.verdict == Verdict::fail && params.explain_failure) {
    try {
      if (const std::string why = params.explain_failure(p, enc, dt, params); !why.empty())
        first.result.message += "; " + why;
    } catch (const std::exception&) {  // a hint that cannot be had leaves the failure as it is
    }
  }
  return first.result;
}

PropertyResult run_property_within(const Property& p, rc::Gen<AnyCase> gen, const CaseFilter& refuses,
                                   const AnyCheck& check, Encoder& enc, DType dt, const RunParams& params) {
  if (const Support s = enc.supports(p.op, dt); !s.ok) return skipped_result(p, enc.name(), dt, params.seed, s.reason);
  // The probe: kProbe cases at every size, from the property's own seed. One that gets through
  // is enough (the run draws again until each does); none is a property outside the declaration.
  constexpr int kProbe = 400;
  std::map<std::string, int> refusals;
  const std::uint64_t seed = derive_seed(params.seed, p, dt);
  rc::Random random(seed);
  for (int i = 0; i < kProbe; ++i) {
    const auto why = refuses(gen(random.split(), i % 100).value());
    if (!why) {
      return run_property(p, rc::gen::suchThat(std::move(gen), [refuses](const AnyCase& c) { return !refuses(c); }),
                          check, enc, dt, params);
    }
    ++refusals[*why];
  }
  // A case of another PE says only that the encoder applies one PE; a case of its own PE that still
  // does not fit (an undeclared form) says what the property lacks: named first, however rare.
  const auto of_another_pe = [](const std::string& why) { return why.starts_with("apply the PE"); };
  const auto most = std::max_element(refusals.begin(), refusals.end(), [&](const auto& a, const auto& b) {
    return std::pair(!of_another_pe(a.first), a.second) < std::pair(!of_another_pe(b.first), b.second);
  });
  return skipped_result(
      p, enc.name(), dt, params.seed,
      fmt::format("not applicable: its cases {} ({} of {} drawn; none fits the encoder's declaration)", most->first,
                  most->second, kProbe));
}

}  // namespace pecheck
