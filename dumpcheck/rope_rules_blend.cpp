// The two-regime rules: YaRN and Llama 3 leave the fast pairs unscaled, divide the slow ones by
// the factor, and blend between, each its own way.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "dumpcheck/convention_fit.hpp"
#include "dumpcheck/rope_rules_fit.hpp"
#include "reference/rope_scaling.hpp"

namespace pecheck::dumpcheck::rules {

std::optional<TwoRegimes> two_regimes(const Context& c) {
  const Measured& m = c.m;
  TwoRegimes r;
  for (int k = 1; k <= m.count(); ++k) {
    const auto b = head_base(c, k);
    if (!b) continue;
    bool ok = true;
    for (int p = 0; p < k && ok; ++p)
      if (m.measured(p))
        ok = std::fabs(m.lnw(p) - std::log(theta(m, p, b->first))) <= m.tol[static_cast<std::size_t>(p)];
    if (!ok) break;
    r.head = k, r.base = b->first, r.raw_base = b->second;
  }
  if (r.head == 0) return std::nullopt;
  if (r.head == m.count()) {  // every pair unscaled: YaRN whose ramp lies past the last pair, if any
    if (!(m.gain > 1)) return std::nullopt;
    r.tail = m.count();
    r.factor = c.stated.factor.value_or(snap(std::exp(10 * (m.gain - 1)), 1.0));
    return r;
  }
  // The tail: the longest [T, count) whose ratios theta_p / w_p agree on one factor s.
  double sw = 0, sy = 0;
  r.tail = m.count();
  for (int p = m.count() - 1; p >= r.head; --p) {
    if (!m.measured(p)) {
      r.tail = p;
      continue;
    }
    const double sigma = m.sigma[static_cast<std::size_t>(p)], w = 1 / (sigma * sigma);
    const double y = std::log(theta(m, p, r.base)) - m.lnw(p);  // ln s
    const double mean = (sy + w * y) / (sw + w);
    bool ok = true;
    for (int q = p; q < m.count() && ok; ++q)
      if (m.measured(q))
        ok = std::fabs(std::log(theta(m, q, r.base)) - m.lnw(q) - mean) <= m.tol[static_cast<std::size_t>(q)];
    if (!ok) break;
    sw += w, sy += w * y, r.tail = p;
  }
  if (c.stated.factor) {
    r.factor = *c.stated.factor;
  } else if (sw > 0) {
    r.factor = snap(std::exp(sy / sw), 1 / std::sqrt(sw));
  } else if (m.gain > 1) {  // only YaRN's attention factor 0.1 ln s + 1 tells s
    r.factor = snap(std::exp(10 * (m.gain - 1)), 1.0);
  } else {
    return std::nullopt;
  }
  return r;
}

namespace {

std::int64_t l0_of(const RopeSpec& s) { return s.scaling.original_max_position; }

/// Whether some measured pair turns at s's scaled frequency rather than at plain RoPE's of the same
/// base: YaRN then shows itself in the frequencies, not only in the magnitude.
bool shows_scaling(const Measured& m, const RopeSpec& s) {
  for (int p = 0; p < m.count(); ++p)
    if (m.measured(p) && std::fabs(std::log(ref::rope_inv_freq<double>(s, p) / theta(m, p, s.base))) >
                             m.tol[static_cast<std::size_t>(p)])
      return true;
  return false;
}

/// YaRN candidate s scored with its attention factor as stated, else HF's default 0.1 ln s + 1,
/// else, when that does not explain the rotated pairs' magnitude, one fitted to it (snapped like
/// a base: 1.2, 1): the magnitude then confirms nothing, one more free parameter, and the
/// frequencies alone must show YaRN (a ramp past every measured pair with a fitted factor would
/// read plain RoPE as YaRN).
RuleCandidate yarn_scored(const Context& c, const TwoRegimes& r, RopeSpec s, const std::string& range, int free) {
  const auto text = [&](const RopeSpec& t, const std::string& how) {
    return fmt::format("{}, YaRN scaling by {}, {}, attention factor {:.6g}{}",
                       base_text(r.base, r.raw_base, c.stated.base.has_value()), short_number(r.factor), range,
                       t.magnitude(), how);
  };
  const RuleCandidate as_is = score(c.m, s, text(s, ""), free);
  const bool stated =
      c.stated.attention_factor || (c.stated.mscale.value_or(0) != 0 && c.stated.mscale_all_dim.value_or(0) != 0);
  if (as_is.explains || stated || !shows_scaling(c.m, s)) return as_is;
  s.scaling.attention_factor = snap(c.m.gain, gain_tolerance(c.m.dt) / 4);
  const RuleCandidate fitted =
      score(c.m, s, text(s, fmt::format(" (fit {:.7g}, from the magnitude)", c.m.gain)), free + 1);
  return fitted.explains ? fitted : as_is;
}

}  // namespace

/// YaRN: the blend weight falls linearly in the pair index from 1 at `low` to 0 at `high`
/// (integers: floor and ceil of the correction dims). Every integer range is tried.
std::optional<RuleCandidate> yarn(const Context& c, const TwoRegimes& r) {
  const Measured& m = c.m;
  const int d = m.rotary_dim;
  double best = kInf;
  int lo_best = 0, hi_best = 1;
  for (int lo = 0; lo <= m.count(); ++lo)
    for (int hi = lo + 1; hi <= d - 1 && hi <= m.count() + 1; ++hi) {
      double worst = 0;
      for (int p = 0; p < m.count() && worst <= best; ++p) {
        if (!m.measured(p)) continue;
        const double ramp = std::clamp((p - lo) / double(hi - lo), 0.0, 1.0), w = 1 - ramp;
        const double pred = theta(m, p, r.base) * ((1 - w) / r.factor + w);
        worst = std::max(worst, std::fabs(m.lnw(p) - std::log(pred)) / m.tol[static_cast<std::size_t>(p)]);
      }
      if (worst < best) best = worst, lo_best = lo, hi_best = hi;
    }
  if (!std::isfinite(best)) return std::nullopt;
  // Any (L0, beta_fast, beta_slow) giving this correction range reads the same; HF's betas 32
  // and 1 with the stated or a common L0 when one gives it, else betas that do at L0.
  // base, factor and the two ends of the ramp, less what is stated
  const int free = (c.stated.base ? 0 : 1) + (c.stated.factor ? 0 : 1) +
                   (c.stated.original_max_position && c.stated.beta_fast && c.stated.beta_slow ? 0 : 2);
  RopeSpec s = c.pairing;
  s.base = r.base;
  s.scaling = {.kind = RopeScalingKind::yarn, .factor = r.factor};
  // What the pairs cannot tell, as stated: the attention factor's source and the rounding.
  s.scaling.truncate = c.stated.truncate.value_or(true);
  s.scaling.attention_factor = c.stated.attention_factor.value_or(0);
  s.scaling.mscale = c.stated.mscale.value_or(0), s.scaling.mscale_all_dim = c.stated.mscale_all_dim.value_or(0);
  std::vector<std::int64_t> lengths = {4096, 2048, 8192, 16384, 32768, 65536, 131072, 1024, 262144};
  if (c.stated.original_max_position) lengths = {*c.stated.original_max_position};
  bool found = false;
  for (std::int64_t l0 : lengths) {
    s.scaling.original_max_position = l0;
    s.scaling.beta_fast = c.stated.beta_fast.value_or(32);
    s.scaling.beta_slow = c.stated.beta_slow.value_or(1);
    if (score(m, s, "", free).worst <= best * (1 + 1e-9) + 1e-12) {  // the same range as the best
      found = true;
      break;
    }
  }
  std::string betas =
      fmt::format("beta_fast {} beta_slow {}", short_number(s.scaling.beta_fast), short_number(s.scaling.beta_slow));
  if (!found) {
    s.scaling.original_max_position = lengths.front();
    const double l0 = double(lengths.front()), ln_b = std::log(r.base);
    auto beta_at = [&](double dim) { return l0 / kTwoPi * std::exp(-2 * dim * ln_b / d); };
    // floor gives lo_best and ceil hi_best; untruncated, the ends are the correction dims themselves
    const double inside = s.scaling.truncate ? 0.25 : 0.0;
    s.scaling.beta_fast = beta_at(lo_best + inside);
    s.scaling.beta_slow = beta_at(hi_best - inside);
    betas = fmt::format("betas {:.4g}/{:.4g} (any giving this range)", s.scaling.beta_fast, s.scaling.beta_slow);
  }
  const RuleCandidate truncated = yarn_scored(
      c, r, s, fmt::format("correction range pairs {}..{} (L0 {}, {})", lo_best, hi_best, l0_of(s), betas), free);
  if (truncated.explains || c.stated.truncate.value_or(false)) return truncated;
  // Untruncated (HF's truncate false, gpt-oss's): the ramp's ends are the correction dims
  // themselves, between pairs, which no integer range gives; HF's betas at the stated or a common L0.
  for (std::int64_t l0 : lengths) {
    RopeSpec u = s;
    u.scaling.truncate = false;
    u.scaling.original_max_position = l0;
    u.scaling.beta_fast = c.stated.beta_fast.value_or(32);
    u.scaling.beta_slow = c.stated.beta_slow.value_or(1);
    const auto dim = [&](double beta) { return ref::yarn_correction_dim<double>(beta, d, u.base, l0); };
    const RuleCandidate t =
        yarn_scored(c, r, u,
                    fmt::format("untruncated correction range {:.4g}..{:.4g} (L0 {}, beta_fast {} beta_slow {})",
                                std::max(dim(u.scaling.beta_fast), 0.0), std::min(dim(u.scaling.beta_slow), d - 1.0),
                                l0, short_number(u.scaling.beta_fast), short_number(u.scaling.beta_slow)),
                    free);
    if (t.explains) return t;
  }
  return truncated;
}

/// Llama 3: the blend weight is linear in theta_p between the wavelengths L0/high_freq_factor
/// (unscaled below) and L0/low_freq_factor (scaled by s above); fitted on the pairs between.
std::optional<RuleCandidate> llama3(const Context& c, const TwoRegimes& r) {
  const Measured& m = c.m;
  if (!(r.factor > 1) || r.tail >= m.count()) return std::nullopt;
  // beta_p = (w_p / theta_p - 1/s) / (1 - 1/s) = A theta_p + B on the transition pairs
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  int used = 0;
  const double inv = 1 / r.factor;
  for (int p = r.head; p < r.tail; ++p) {
    if (!m.measured(p)) continue;
    const double th = theta(m, p, r.base), ratio = m.pairs[static_cast<std::size_t>(p)].freq / th;
    const double beta = (ratio - inv) / (1 - inv), sigma = ratio * m.sigma[static_cast<std::size_t>(p)] / (1 - inv);
    const double w = 1 / (sigma * sigma);
    sw += w, sx += w * th, sy += w * beta, sxx += w * th * th, sxy += w * th * beta;
    ++used;
  }
  const double l0 = double(c.stated.original_max_position.value_or(8192));
  double wl_hi = 0, wl_lo = 0;  // L0 / high_freq_factor, L0 / low_freq_factor
  const double det = sw * sxx - sx * sx;
  if (used >= 2 && det > 0) {
    const double a = (sw * sxy - sx * sy) / det, b = (sy - a * sx) / sw;
    if (!(a > 0)) return std::nullopt;
    wl_lo = kTwoPi * a / -b, wl_hi = kTwoPi * a / (1 - b);
  } else {
    // The step falls between pairs (at most one between): the stated factors, else HF's ratio 4
    // placed to split the pairs where they change.
    const double ratio = c.stated.low_freq_factor && c.stated.high_freq_factor
                             ? *c.stated.high_freq_factor / *c.stated.low_freq_factor
                             : 4.0;
    const double wl_head = kTwoPi / theta(m, r.head - 1, r.base), wl_tail = kTwoPi / theta(m, r.tail, r.base);
    wl_hi = std::sqrt(wl_head * wl_tail / ratio);
    wl_lo = wl_hi * ratio;
    if (used == 1) {  // the transition pair fixes the band's position for that ratio
      for (int p = r.head; p < r.tail; ++p)
        if (m.measured(p)) {
          const double th = theta(m, p, r.base),
                       beta = (m.pairs[static_cast<std::size_t>(p)].freq / th - inv) / (1 - inv);
          // beta = (L0 th / 2pi - low) / (high - low), with wl = L0/f: th/2pi = beta/wl_hi + (1-beta)/wl_lo
          const double x = th / kTwoPi;  // = (beta (ratio - 1) + 1) / wl_lo
          wl_lo = (beta * (ratio - 1) + 1) / x;
          wl_hi = wl_lo / ratio;
        }
    }
  }
  if (!(wl_lo > wl_hi && wl_hi > 0)) return std::nullopt;
  // base, factor and the band's two wavelengths, less what is stated
  const int free = (c.stated.base ? 0 : 1) + (c.stated.factor ? 0 : 1) +
                   (c.stated.low_freq_factor && c.stated.high_freq_factor ? 0 : 2);
  RopeSpec s = c.pairing;
  s.base = r.base;
  const double low = snap(l0 / wl_lo, 1.0), high = snap(l0 / wl_hi, 1.0);
  s.scaling = {.kind = RopeScalingKind::llama3,
               .factor = r.factor,
               .original_max_position = static_cast<std::int64_t>(l0),
               .low_freq_factor = c.stated.low_freq_factor.value_or(low),
               .high_freq_factor = c.stated.high_freq_factor.value_or(high)};
  RopeSpec raw = s;
  raw.scaling.low_freq_factor = l0 / wl_lo, raw.scaling.high_freq_factor = l0 / wl_hi;
  const std::string l0_text =
      c.stated.original_max_position ? fmt::format("L0 {} (stated)", l0) : fmt::format("L0 {} assumed", l0);
  auto text = [&](const RopeSpec& t) {
    return fmt::format(
        "{}, Llama 3 scaling by {}, low_freq_factor {:.6g}, high_freq_factor {:.6g} ({}; the "
        "wavelengths L0/low {:.6g} and L0/high {:.6g} are what the pairs fix)",
        base_text(r.base, r.raw_base, c.stated.base.has_value()), short_number(r.factor), t.scaling.low_freq_factor,
        t.scaling.high_freq_factor, l0_text, wl_lo, wl_hi);
  };
  return snapped_or_raw(score(m, s, text(s), free), score(m, raw, text(raw), free));
}

}  // namespace pecheck::dumpcheck::rules
