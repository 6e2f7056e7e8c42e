// Internals of the rule reader (dumpcheck/rope_rules.hpp), shared by its three files: the
// measurement with its tolerances, the weighted line fit, the scoring of a candidate rule, and
// the fitters of the plain and linear rules (rope_rules_fit.cpp) and of the two-regime rules,
// YaRN and Llama 3 (rope_rules_blend.cpp).
#pragma once

#include <cmath>
#include <limits>
#include <numbers>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dumpcheck/rope_rules.hpp"

namespace pecheck::dumpcheck::rules {

constexpr double kTwoPi = 2 * std::numbers::pi;
constexpr double kInf = std::numeric_limits<double>::infinity();

/// The measurement with what each pair allows.
struct Measured {
  std::vector<PairFrequency> pairs;
  std::vector<double> tol;    ///< frequency_tolerance per pair: what judges a rule
  std::vector<double> sigma;  ///< the measurement's own precision, 8u / (w P): what weighs a fit
  double gain = 1;
  DType dt = DType::f32;
  int rotary_dim = 2;
  /// Stated or fitted (HF's proportional rope_type): the pairs past it are still, in every candidate.
  int rotated_pairs = 0;
  int count() const { return static_cast<int>(pairs.size()); }
  double t(int p) const { return 2.0 * p / rotary_dim; }
  double lnw(int p) const { return std::log(pairs[static_cast<std::size_t>(p)].freq); }
  bool measured(int p) const { return pairs[static_cast<std::size_t>(p)].measured(); }
};

/// Plain RoPE's frequency of pair p at base b.
inline double theta(const Measured& m, int p, double b) { return std::exp(-m.t(p) * std::log(b)); }

/// ln w_p = -ln s - t_p ln b, fitted by least squares weighted by 1/sigma^2 over the measured pairs
/// in [from, to); ln b or ln s fixed when given. Returns {ln b, ln s, standard error of ln b, of
/// ln s}, or nothing when the pairs do not determine the free values.
struct Line {
  double lnb = 0, lns = 0, lnb_error = 0, lns_error = 0;
};
std::optional<Line> fit_line(const Measured& m, int from, int to, std::optional<double> lnb, std::optional<double> lns);

/// Pairs read to better than 5 % in ln w: the ones that can confirm or refute a rule.
int informative_pairs(const Measured& m);

/// Scores a candidate with `free` parameters fitted to the pairs: its frequencies and gain
/// against the measurement. A rule explains the pairs only when more informative pairs (and the
/// magnitude, for YaRN) than fitted parameters agree with it: k parameters fit k pairs by
/// construction.
RuleCandidate score(const Measured& m, RopeSpec s, std::string text, int free);

/// The better of a snapped and a raw value: the snapped one when it explains as well.
RuleCandidate snapped_or_raw(const RuleCandidate& snapped, const RuleCandidate& raw);

/// "base 500000 (fit 499992.1)", or "(stated)".
std::string base_text(double b, double fitted, bool stated);

struct Context {
  const Measured& m;
  const RopeSpec& pairing;
  const StatedRope& stated;
};

/// The base from the pairs [0, to) read as unscaled (ln s = 0), or the stated one.
std::optional<std::pair<double, double>> head_base(const Context& c, int to);

/// The plain rule (and NTK, dynamic NTK against a stated base) and linear scaling, fitted.
std::vector<RuleCandidate> plain_and_linear(const Context& c);

/// The pairs a two-regime rule (YaRN, Llama 3) leaves unscaled: the longest [0, K) that plain
/// RoPE explains, with its base.
struct TwoRegimes {
  int head = 0;  ///< K
  int tail = 0;  ///< pairs [tail, count) turn at theta / s
  double base = 0, raw_base = 0, factor = 1;
};

/// The head and tail of the pairs, or nothing when no pair run is unscaled.
std::optional<TwoRegimes> two_regimes(const Context& c);

/// YaRN: the blend weight falls linearly in the pair index from 1 at `low` to 0 at `high`
/// (integers: floor and ceil of the correction dims). Every integer range is tried.
std::optional<RuleCandidate> yarn(const Context& c, const TwoRegimes& r);

/// Llama 3: the blend weight is linear in theta_p between the wavelengths L0/high_freq_factor
/// (unscaled below) and L0/low_freq_factor (scaled by s above); fitted on the pairs between.
std::optional<RuleCandidate> llama3(const Context& c, const TwoRegimes& r);

}  // namespace pecheck::dumpcheck::rules
