// A property: a theorem with a stable dotted id, checked against an encoder under test by
// drawing cases, measuring a discrepancy in units u of the storage dtype, and comparing it with
// a derived bound. The registry lists them all.
#pragma once

#include <any>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/pins.hpp"
#include "harness/tolerance.hpp"
#include "interface/encoder.hpp"
#include "spec/dtype.hpp"

namespace pecheck {

enum class Family {
  sinusoidal,
  sinusoidal2d,
  learned,
  shaw,
  t5,
  rope,
  rope2d,
  mrope,
  alibi,
  attention,
  relative_bias_2d
};
std::string_view family_name(Family f);

/// Whether the measured value must stay below the bound (a discrepancy) or exceed it (a
/// separation, e.g. attention.order_sensitivity must find a permutation that changes the output).
enum class Direction { at_most, at_least };

/// What one case measured.
struct Outcome {
  double error_u = 0;   ///< the measured discrepancy (or separation), in u
  double bound_u = 0;   ///< the derived bound for this case, in u
  std::string failure;  ///< non-empty: a structural failure (NaN parity, a masked entry, ...)
  std::string where;    ///< where the worst discrepancy sits (index, position, dimension)
  /// The case could not have failed for any wrong output of the kind it tests: a shift of 0 (the
  /// case compares a call with itself), a bound at or above what any bounded output reaches, a
  /// pinned value too small to tell from 0. It still runs (a structural failure still fails);
  /// the runner counts the others (PropertyResult::nontrivial_cases).
  bool trivial = false;
};

/// The least share of a property's cases that must be non-trivial for it to pass: below it the
/// verdict is fail, "vacuous" (PropertyResult::vacuous), whatever the measurements were. Every
/// shipped generator draws non-trivial cases only, or nearly (docs/json-schema.md).
inline constexpr double kMinNontrivialShare = 0.9;

enum class Verdict { pass, fail, skip, crash };
std::string_view verdict_name(Verdict v);

/// What one run of a property keeps from case to case, fresh for each run (run_property makes
/// it): a law that compares a call with one made thousands of calls earlier keeps the earlier
/// calls here, so that a drift is seen whichever case it falls in.
struct RunMemory {
  struct Call {
    std::any input;             ///< the check's own case type
    std::vector<float> output;  ///< what the encoder returned for it
    long at = 0;                ///< its index among the run's calls (1 for the first)
  };
  std::vector<Call> earlier;  ///< kept by the checks, one or more a case
  long calls = 0;             ///< calls the run's checks have made so far
  std::size_t cursor = 0;     ///< which earlier call to repeat next (round-robin)
};

struct Property;

struct RunParams {
  std::uint64_t seed = 0;  ///< the run's seed; each property x dtype derives its own from it
  int cases = 100;
  /// After a failure under one scaling rule, run again without it for the others' counterexamples
  /// (PropertyResult::other_rules). Off where only pass or fail matters (selftest's mutants).
  bool per_rule = false;
  /// Shrink a failing case to a minimal counterexample. Off where only pass or fail matters
  /// (selftest's mutants): the first failing case is reported as drawn, and the verdict is the same.
  bool shrink = true;
  /// The encoder's pinned conventions (harness/pins.hpp), or null: it honours every spec.
  std::shared_ptr<const Pins> pins;
  /// 0, or the largest position the encoder takes (a function that builds a table of that many
  /// rows): positions are then drawn below (max_position + 1) / 2, so that a case's sums of two
  /// (a shift, a composition) stay within it too (gen::PositionCeiling).
  std::int64_t max_position = 0;
  /// The accuracy contract agreement and the laws built on it judge by (harness/tolerance.hpp):
  /// exact (the catalogue's), or what dtype-trig or fp32-angles arithmetic guarantees a position
  /// encoding, or rounded-p an attention kernel (harness/contract_ladder.hpp: which governs which).
  tol::Contract contract = tol::Contract::exact;
  /// The encoder's platform flushes subnormals to zero, stated as a convention: its cases draw no
  /// input below FLT_MIN (gen::FlushSubnormals), so none is judged by what such a platform cannot
  /// hold; every law and bound is otherwise the same. Off, a flushing encoder fails.
  bool ftz = false;
  /// The run's memory (RunMemory): set by run_property for the checks it runs; null outside one.
  std::shared_ptr<RunMemory> memory;
  /// After a failure, a clause on its likely cause, appended to the message ("its output fits RoPE
  /// interleaved ..."); empty for nothing to add. The CLI and the Python package set it to
  /// dumpcheck::convention_hint: the engine knows no family's conventions. Called where the
  /// failure was found (the property's child under isolation); it may call the encoder.
  std::function<std::string(const Property&, Encoder&, DType, const RunParams&)> explain_failure;
};

struct PropertyResult {
  std::string property, encoder;
  DType dtype = DType::f32;
  Verdict verdict = Verdict::pass;
  int cases = 0;  ///< cases that ran (successes, plus the failing one)
  /// Of those, the cases that could have failed (Outcome::trivial unset): shrinks not counted.
  int nontrivial_cases = 0;
  /// Failed only because fewer than kMinNontrivialShare of its cases were non-trivial: the
  /// property measured nothing it could have caught. selftest does not count it as a kill.
  bool vacuous = false;
  double max_error_u = 0;  ///< worst measured value over every case run, shrinks included (the minimum for at_least)
  /// A failure: the shrunk counterexample's own measurement (NaN when it failed without one: an
  /// unclean output, a crash). A failing row reports both: where it ended up, and how bad it got.
  double counterexample_error_u = std::numeric_limits<double>::quiet_NaN();
  /// And that counterexample's own bound (NaN with counterexample_error_u): what its error is
  /// judged against, which bound_u (of the case that came closest) need not be.
  double counterexample_bound_u = std::numeric_limits<double>::quiet_NaN();
  double bound_u = 0;          ///< the bound of the case that came closest to it
  std::uint64_t seed = 0;      ///< the derived seed that replays exactly this result
  std::string message;         ///< why it failed, was skipped or crashed
  std::string counterexample;  ///< the shrunk case, rendered as one string
  /// Counterexamples under other scaling rules: after a failure, its rule is set aside and the
  /// property run again, so that one rule's corner does not hide another rule's fault.
  struct OtherRule {
    std::string rule, counterexample, message;
    double counterexample_error_u = std::numeric_limits<double>::quiet_NaN();
  };
  std::vector<OtherRule> other_rules;
  std::vector<std::pair<std::string, int>> distribution;  ///< RC_TAG classes of the cases
  double seconds = 0;                                     ///< wall time of the check (0 if skipped)
};

struct Property {
  std::string id;         ///< stable dotted id, e.g. "rope.relative"
  std::string statement;  ///< the theorem in one sentence
  std::string doc;        ///< its page, relative to the repository root
  std::string source;     ///< the file that checks it
  Family family;
  Op op;  ///< the operation an encoder must offer for it to apply
  std::vector<DType> dtypes;
  Direction direction = Direction::at_most;
  /// Holds for every member of the family whatever its convention (layout, base, rotary_dim,
  /// scaling): the properties that can check an encoder that states no convention (a plugin's
  /// opaque operation). Agreement properties never are.
  bool convention_free = false;
  /// Calls the encoder with each case's spec as drawn, never a variant of it, and derives
  /// everything it compares with from that spec at check time: it can check an encoder pinned to
  /// one convention (harness/pins.hpp), its drawn specs rewritten to the pinned one.
  bool pinnable = false;
  /// Calls the encoder only at the case's own positions (every call the same list): it can judge
  /// a pin whose convention follows each call's positions (Pins::rope_length_per_call).
  bool calls_at_case_positions = false;
  /// Former ids, kept for one release: --property and PECHECK_CATALOGUE's glob match them too,
  /// and `list --json` lists them. Reports always name the property by its id.
  std::vector<std::string> aliases;
  /// Checked only when named (properties/registry.hpp, opt_in_registry): a law some correct
  /// encoders do not have, such as batch invariance, reported apart from the catalogue.
  bool opt_in = false;
  /// Whether `glob` (fnmatch) names this property by its id or by a former id.
  bool matches(const std::string& glob) const;
  /// What its cases' seed is derived from: its first id (the first alias, else the id), so that a
  /// renamed property draws the same cases for the same --seed as before the rename.
  const std::string& seed_key() const { return aliases.empty() ? id : aliases.front(); }
  /// Whether it is checked in dt at all (its dtypes).
  bool applies(DType dt) const;
  std::function<PropertyResult(Encoder&, DType, const RunParams&)> run;
};

/// Seed of one property x dtype within a run: the same for every encoder, so all encoders see
/// the same cases, and independent of which other properties were selected.
std::uint64_t derive_seed(std::uint64_t run_seed, const Property& property, DType dtype);

/// Why `property` cannot check an encoder with these pins, or nothing (it is not pinned for the
/// property's operation, or the property can judge the pinned convention).
std::optional<std::string> pinned_skip(const Property& property, const Pins& pins);

/// What a run reports for a property x dtype it does not run (an encoder without the operation, a
/// convention the property cannot check): a skip with its reason and the seed it would have used.
PropertyResult skipped_result(const Property& p, std::string encoder, DType dt, std::uint64_t run_seed,
                              std::string reason);

}  // namespace pecheck
