#include "dumpcheck/convention_fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>

#include "dumpcheck/rope_rules.hpp"
#include "tensorfiles/array.hpp"

namespace pecheck::dumpcheck {

namespace {

constexpr double kPi = std::numbers::pi;
/// Angles are unwrapped over positions up to here: far enough to resolve slow pairs, near enough
/// that an encoder's own angle error (fp32 pos * inv_freq) does not bias the fit.
constexpr std::int64_t kFitPositions = 4096;
constexpr double kFollow = 0.05;
/// RMS distance of ln w_p from the fitted line above which no member fits: a correct encoder in
/// bf16 is ~1e-4 off; fp32 angles are ~1e-7 off.
constexpr double kMaxResidual = 1e-2;
/// A fit snaps to a round value within 4 standard errors of it, but always within 1e-4 and never
/// past 3e-3 (round values of 2 significant digits are at least 1e-2 apart).
constexpr double kMinSnap = 1e-4, kMaxSnap = 3e-3;

/// ln w = intercept + slope t, with the standard errors the data's rounding allows.
struct Line {
  double slope, intercept;
  double slope_error = 0, intercept_error = 0;
};

/// Weighted least squares of ln w_p against t_p, with the intercept or the slope fixed when given.
/// Pairs whose total angle is below what the dtype can resolve carry no weight.
Line fit_log_frequencies(const std::vector<std::optional<std::pair<double, std::int64_t>>>& freqs,
                         const std::vector<double>& t, DType dt, std::optional<double> slope,
                         std::optional<double> intercept) {
  double sw = 0, st = 0, sy = 0, stt = 0, sty = 0;
  int used = 0;
  for (std::size_t p = 0; p < freqs.size(); ++p) {
    if (!freqs[p] || !(freqs[p]->first > 0)) continue;
    const double total = freqs[p]->first * double(freqs[p]->second);  // radians turned at the last position
    if (total < 8 * unit_roundoff(dt)) continue;
    const double w = total * total, y = std::log(freqs[p]->first);
    sw += w, st += w * t[p], sy += w * y, stt += w * t[p] * t[p], sty += w * t[p] * y;
    ++used;
  }
  if (used == 0 || (used < 2 && !slope && !intercept))
    throw FitError(
        "the frequencies cannot be fitted: no pair turns measurably by a position below 3 (a dump needs tokens at "
        "positions 1 or 2, or the manifest must state the convention)");
  // An angle read from outputs rounded to the dtype is good to about 2u radians, so ln w_p from
  // a total turn T_p is good to 2u / T_p: the weights T_p^2 are 1/variance up to (2u)^2.
  const double noise = 2 * unit_roundoff(dt), det = sw * stt - st * st;
  Line line;
  if (slope) {
    line = {*slope, (sy - *slope * st) / sw, 0, noise / std::sqrt(sw)};
  } else if (intercept) {
    line = {(sty - *intercept * st) / stt, *intercept, noise / std::sqrt(stt), 0};
  } else {
    const double s = (sw * sty - st * sy) / det;
    line = {s, (sy - s * st) / sw, noise * std::sqrt(sw / det), noise * std::sqrt(stt / det)};
  }
  // A RoPE or a sinusoid has geometric frequencies: ln w_p on a line, to the data's precision.
  double residual = 0;
  for (std::size_t p = 0; p < freqs.size(); ++p) {
    if (!freqs[p] || !(freqs[p]->first > 0)) continue;
    const double total = freqs[p]->first * double(freqs[p]->second);
    if (total < 8 * unit_roundoff(dt)) continue;
    const double r = std::log(freqs[p]->first) - (line.intercept + line.slope * t[p]);
    residual += total * total * r * r;
  }
  residual = std::sqrt(residual / sw);
  if (!(residual < kMaxResidual))
    throw FitError(
        fmt::format("the pairs' frequencies are not geometric (ln w_p is {:.2g} off a line, RMS): no "
                    "member of the family turns its pairs like this",
                    residual));
  return line;
}

std::string fitted(double snapped, double raw, bool stated) {
  if (stated) return fmt::format("{} (stated)", short_number(snapped));
  return fmt::format("{} (fit {:.7g})", short_number(snapped), raw);
}

}  // namespace

namespace {

/// The round value nearest a fit (2 significant digits), and how far the fit is from it.
double round_value(double fitted) {
  const double e = std::floor(std::log10(fitted)) - 1;
  // Below 10, divide by an exact power of ten: one rounding, so 12 / 10 is the double 1.2 (12 * 0.1
  // is not).
  if (e < 0) {
    const double p = std::pow(10.0, -e);
    return std::round(fitted * p) / p;
  }
  const double scale = std::pow(10.0, e);
  return std::round(fitted / scale) * scale;
}

/// How far a fit is from its round value, relatively; infinity when too far to snap.
double off_round(double fitted, double relative_error) {
  if (!(fitted > 0) || !std::isfinite(fitted)) return INFINITY;
  const double off = std::fabs(fitted / round_value(fitted) - 1);
  return off < std::min(kMaxSnap, std::max(kMinSnap, 4 * relative_error)) ? off : INFINITY;
}

}  // namespace

double snap(double fitted, double relative_error) {
  return std::isfinite(off_round(fitted, relative_error)) ? round_value(fitted) : fitted;
}

// Up to kFitPositions every angle refines the frequency; past there only while each new angle lies
// within kFollow radians of the prediction, so that a correct encoder's far positions sharpen the
// fit and an encoder whose angles drift (bf16 positions) does not bend it.
std::optional<std::pair<double, std::int64_t>> unwrap(const Angles& angles) {
  std::optional<double> w;
  std::int64_t last = 0;
  for (const auto& [pos, theta] : angles) {
    if (pos <= 0) continue;
    if (!w) {
      if (pos >= 3) return std::nullopt;  // the first angle may have wrapped already
      w = theta / double(pos);
    } else {
      const double predicted = *w * double(pos);
      const double k = std::round((predicted - theta) / (2 * kPi));
      if (pos > kFitPositions && std::fabs(theta + 2 * kPi * k - predicted) > kFollow) break;
      w = (theta + 2 * kPi * k) / double(pos);
    }
    last = pos;
  }
  if (!w) return std::nullopt;
  return std::pair{*w, last};
}

RopeSpec fit_rope_pairing(const Dump& d) {
  const std::size_t D = static_cast<std::size_t>(d.width);
  RopeFit f;  // only f.spec is filled here
  f.spec.head_dim = d.width;
  // rotary_dim: the dims past it come out bitwise unchanged for every token.
  if (d.rope.rotary_dim) {
    f.spec.rotary_dim = *d.rope.rotary_dim;
  } else {
    std::size_t r = D;
    while (r > 0) {
      bool same = true;
      for (std::size_t i = r - 1; i < d.x.size() && same; i += D) same = d.x[i] == d.y[i];
      if (!same) break;
      --r;
    }
    f.spec.rotary_dim = static_cast<int>(r == 0 ? D : r + r % 2);
    // HF's proportional rule (Gemma 4): half-split pairs (i, i + D/2) over the whole head, those
    // from k on still. The unchanged tail is then [D/2 + k, D), and [k, D/2) is unchanged too,
    // which no partial rotary of width D/2 + k leaves (its pairs there turn).
    const std::size_t half = D / 2;
    if (d.rope.layout.value_or(RopeLayout::half_split) == RopeLayout::half_split && r > half && r < D) {
      bool still = true;
      for (std::size_t dim = r - half; dim < half && still; ++dim)
        for (std::size_t i = dim; i < d.x.size() && still; i += D) still = d.x[i] == d.y[i];
      if (still) {
        f.spec.rotary_dim = static_cast<int>(D);
        f.spec.layout = RopeLayout::half_split;
        f.spec.scaling.rotated_pairs = static_cast<int>(r - half);
        return f.spec;
      }
    }
  }
  const std::size_t pairs = static_cast<std::size_t>(f.spec.rotary_dim / 2);
  // Layout: the pairing under which every pair keeps its norm.
  if (d.rope.layout) {
    f.spec.layout = *d.rope.layout;
  } else {
    double mismatch[2] = {0, 0};
    for (int l = 0; l < 2; ++l) {
      for (std::size_t base = 0; base < d.x.size(); base += D)
        for (std::size_t p = 0; p < pairs; ++p) {
          const std::size_t a = base + (l == 0 ? 2 * p : p), b = base + (l == 0 ? 2 * p + 1 : p + pairs);
          const double nx = d.x[a] * d.x[a] + d.x[b] * d.x[b], ny = d.y[a] * d.y[a] + d.y[b] * d.y[b];
          if (nx > 0) mismatch[l] += std::fabs(ny - nx) / nx;
        }
    }
    f.spec.layout = mismatch[1] < mismatch[0] ? RopeLayout::half_split : RopeLayout::interleaved;
  }
  return f.spec;
}

RopeFit fit_rope(const Dump& d) {
  const std::size_t D = static_cast<std::size_t>(d.width), H = static_cast<std::size_t>(d.heads);
  RopeFit f;
  f.spec = fit_rope_pairing(d);
  const std::size_t pairs = static_cast<std::size_t>(f.spec.rotary_dim / 2);
  // Each pair's angle at each position, then its frequency; and the magnitude the rotated pairs
  // carry (YaRN's attention factor), as sqrt(sum |y|^2 / sum |x|^2) over every rotated pair.
  std::vector<PairFrequency> freqs(pairs);
  double norm_x = 0, norm_y = 0;
  for (std::size_t p = 0; p < pairs; ++p) {
    const std::size_t ia = f.spec.layout == RopeLayout::interleaved ? 2 * p : p;
    const std::size_t ib = f.spec.layout == RopeLayout::interleaved ? 2 * p + 1 : p + pairs;
    std::map<std::int64_t, std::pair<double, double>> best;  // position -> (norm^2, angle)
    for (std::size_t tok = 0; tok < d.tokens(); ++tok)
      for (std::size_t h = 0; h < H; ++h) {
        const std::size_t base = (tok * H + h) * D;
        const double x1 = d.x[base + ia], x2 = d.x[base + ib], y1 = d.y[base + ia], y2 = d.y[base + ib];
        const double n2 = x1 * x1 + x2 * x2;
        norm_x += n2, norm_y += y1 * y1 + y2 * y2;
        auto& slot = best[d.positions[tok]];
        if (n2 > slot.first) slot = {n2, std::atan2(x1 * y2 - x2 * y1, x1 * y1 + x2 * y2)};
      }
    Angles angles;
    for (const auto& [pos, v] : best)
      if (v.first > 0) angles[pos] = v.second;
    if (const auto w = unwrap(angles)) freqs[p] = {w->first, w->second};
  }
  const double gain = norm_x > 0 ? std::sqrt(norm_y / norm_x) : 1.0;
  const bool any = std::any_of(freqs.begin(), freqs.end(), [](const PairFrequency& q) { return q.measured(); });
  if (!any)
    throw FitError(
        "the frequencies cannot be fitted: no pair turns measurably by a position below 3 (a dump needs tokens at "
        "positions 1 or 2, or the manifest must state the convention)");
  // One pair turns at 1/factor whatever the base: the base is then no part of the convention.
  const bool base_free = pairs == 1 && !d.rope.base;
  StatedRope stated = d.rope;
  if (base_free) stated.base = 10000;
  if (f.spec.scaling.rotated_pairs != 0) stated.rotated_pairs = f.spec.scaling.rotated_pairs;  // fitted: still pairs
  RuleReading r = read_rope_rule(freqs, gain, f.spec, stated, d.dtype);
  if (base_free) {
    const std::string stated_base = "base 10000 (stated)";
    if (const auto at = r.text.find(stated_base); at != std::string::npos)
      r.text.replace(at, stated_base.size(), "any base (one pair turns at 1/factor whatever the base)");
  }
  const std::string pairing = fmt::format(
      "RoPE {}, rotary_dim {} of {}{}{}", layout_name(f.spec.layout), f.spec.rotary_dim, d.width,
      d.rope.rotary_dim ? " (stated)" : "",
      stated.rotated_pairs ? fmt::format(", pairs from {} on still (HF's proportional)", *stated.rotated_pairs)
                           : std::string());
  if (!r.spec) throw FitError(fmt::format("{}: {}", pairing, r.text), r);
  f.spec = *r.spec;
  f.reading = r;
  f.measured = freqs;
  f.text = fmt::format("{}, {}", pairing, r.text);
  if (d.rope.layout) f.text += " (layout stated)";
  return f;
}

SinusoidalFit fit_sinusoidal(const Dump& d) {
  const std::size_t W = static_cast<std::size_t>(d.width), half = W / 2;
  SinusoidalFit f;
  f.spec.d_model = d.width;
  auto slots = [&](SinusoidalLayout l, std::size_t i) {
    return l == SinusoidalLayout::interleaved ? std::pair{2 * i, 2 * i + 1} : std::pair{i, half + i};
  };
  // All-zero rows (fairseq's padding), found once rather than once per pair.
  std::vector<bool> zero_row(d.tokens());
  for (std::size_t tok = 0; tok < d.tokens(); ++tok)
    zero_row[tok] =
        std::all_of(d.y.begin() + static_cast<std::ptrdiff_t>(tok * W),
                    d.y.begin() + static_cast<std::ptrdiff_t>((tok + 1) * W), [](double v) { return v == 0; });
  if (d.sinusoidal.layout) {
    f.spec.layout = *d.sinusoidal.layout;
  } else {  // the pairing under which sin^2 + cos^2 = 1
    double mismatch[2] = {0, 0};
    for (int l = 0; l < 2; ++l)
      for (std::size_t tok = 0; tok < d.tokens(); ++tok)
        for (std::size_t i = 0; i < half; ++i) {
          const auto [s, c] = slots(l == 0 ? SinusoidalLayout::interleaved : SinusoidalLayout::concatenated, i);
          mismatch[l] += std::fabs(d.y[tok * W + s] * d.y[tok * W + s] + d.y[tok * W + c] * d.y[tok * W + c] - 1);
        }
    f.spec.layout = mismatch[1] < mismatch[0] ? SinusoidalLayout::concatenated : SinusoidalLayout::interleaved;
  }
  std::vector<std::optional<std::pair<double, std::int64_t>>> freqs(half);
  std::vector<double> t(half);
  for (std::size_t i = 0; i < half; ++i) {
    const auto [s, c] = slots(f.spec.layout, i);
    Angles angles;
    for (std::size_t tok = 0; tok < d.tokens(); ++tok)
      if (!zero_row[tok]) angles[d.positions[tok]] = std::atan2(d.y[tok * W + s], d.y[tok * W + c]);
    freqs[i] = unwrap(angles);
    t[i] = double(i);
  }
  // ln w_i = -i k, with k = 2 ln(base) / d (Vaswani) or 2 ln(base) / (d - 2) (fairseq): w_0 = 1.
  const auto freq_stated = d.sinusoidal.frequencies;
  double k = 0, k_error = 0;
  if (d.sinusoidal.base) {
    const double w = freq_stated == SinusoidalFrequencies::fairseq ? double(W - 2) : double(W);
    k = 2 * std::log(*d.sinusoidal.base) / w;
  } else {
    const Line line = fit_log_frequencies(freqs, t, d.dtype, std::nullopt, 0.0);
    k = -line.slope;
    k_error = line.slope_error;
  }
  // Relative errors of the two readings of the base: ln(base) = k w / 2.
  const double vaswani = std::exp(k * double(W) / 2), fairseq = std::exp(k * double(W - 2) / 2);
  const double vaswani_error = k_error * double(W) / 2, fairseq_error = k_error * double(W - 2) / 2;
  // The two rules give the same frequencies at bases b and b^((d-2)/d): prefer the reading that
  // snaps to a round base, and of two that do, the one nearer to it.
  SinusoidalFrequencies rule = freq_stated.value_or(SinusoidalFrequencies::vaswani);
  if (!freq_stated && W >= 4 && off_round(fairseq, fairseq_error) < off_round(vaswani, vaswani_error))
    rule = SinusoidalFrequencies::fairseq;
  f.spec.frequencies = rule;
  const bool fair = rule == SinusoidalFrequencies::fairseq;
  f.fitted_base = fair ? fairseq : vaswani;
  f.spec.base = d.sinusoidal.base.value_or(snap(f.fitted_base, fair ? fairseq_error : vaswani_error));
  if (!(f.spec.base > 1))
    throw FitError(fmt::format("no sinusoid fits: the fitted base {:.6g} is not above 1", f.spec.base));
  for (std::size_t tok = 0; tok < d.tokens(); ++tok)  // a zero row at a non-zero position is fairseq's padding
    if (zero_row[tok] && d.positions[tok] != 0) f.spec.padding_idx = d.positions[tok];
  f.text = fmt::format("sinusoid {}, {} frequencies, d_model {}, base {}{}", layout_name(f.spec.layout),
                       rule == SinusoidalFrequencies::fairseq ? "fairseq" : "Vaswani", d.width,
                       fitted(f.spec.base, f.fitted_base, d.sinusoidal.base.has_value()),
                       f.spec.padding_idx >= 0 ? fmt::format(", padding row at position {}", f.spec.padding_idx) : "");
  return f;
}

}  // namespace pecheck::dumpcheck
