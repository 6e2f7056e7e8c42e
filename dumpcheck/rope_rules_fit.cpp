// The weighted line fit, the scoring of a rule, and the plain and linear rules.
#include "dumpcheck/rope_rules_fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "dumpcheck/convention_fit.hpp"
#include "reference/rope_scaling.hpp"

namespace pecheck::dumpcheck::rules {

std::optional<Line> fit_line(const Measured& m, int from, int to, std::optional<double> lnb,
                             std::optional<double> lns) {
  double sw = 0, st = 0, sy = 0, stt = 0, sty = 0;
  int used = 0, sloped = 0;
  for (int p = from; p < to; ++p) {
    if (!m.measured(p)) continue;
    const double w = 1 / (m.sigma[static_cast<std::size_t>(p)] * m.sigma[static_cast<std::size_t>(p)]), t = m.t(p),
                 y = m.lnw(p);
    sw += w, st += w * t, sy += w * y, stt += w * t * t, sty += w * t * y;
    ++used;
    sloped += p > 0;
  }
  // y = a - t k with a = -ln s, k = ln b
  if (lnb && lns) return Line{*lnb, *lns};
  if (lnb) {
    if (used == 0) return std::nullopt;
    return Line{*lnb, -(sy + *lnb * st) / sw, 0, 1 / std::sqrt(sw)};
  }
  if (lns) {
    if (sloped == 0) return std::nullopt;
    return Line{-(sty + *lns * st) / stt, *lns, 1 / std::sqrt(stt), 0};
  }
  const double det = sw * stt - st * st;
  if (used < 2 || !(det > 0)) return std::nullopt;
  const double k = -(sw * sty - st * sy) / det, a = (sy + k * st) / sw;
  return Line{k, -a, std::sqrt(sw / det), std::sqrt(stt / det)};
}

/// Pairs read to better than 5 % in ln w: the ones that can confirm or refute a rule.
int informative_pairs(const Measured& m) {
  int n = 0;
  for (double t : m.tol) n += t <= 0.05;
  return n;
}

/// Scores a candidate with `free` parameters fitted to the pairs: its frequencies and gain
/// against the measurement. A rule explains the pairs only when more informative pairs (and the
/// magnitude, for YaRN) than fitted parameters agree with it: k parameters fit k pairs by
/// construction.
RuleCandidate score(const Measured& m, RopeSpec s, std::string text, int free) {
  s.scaling.rotated_pairs = m.rotated_pairs;
  RuleCandidate c{.spec = s, .gain = s.magnitude(), .text = std::move(text)};
  try {
    s.validate();
  } catch (const std::invalid_argument& e) {
    c.worst = kInf;
    c.text += fmt::format(" (not a valid spec: {})", e.what());
    return c;
  }
  for (int p = 0; p < m.count(); ++p) {
    if (!m.measured(p)) continue;
    const double r =
        std::fabs(m.lnw(p) - std::log(ref::rope_inv_freq<double>(s, p))) / m.tol[static_cast<std::size_t>(p)];
    if (!(r <= c.worst)) c.worst = r, c.worst_pair = p;
  }
  const bool gain_ok = std::fabs(m.gain - c.gain) <= gain_tolerance(m.dt);
  const int checks = informative_pairs(m) + (c.gain != 1 ? 1 : 0);
  // One pair has one frequency, which linear scaling by 1/w states exactly: nothing to confirm.
  c.explains = c.worst <= 1 && gain_ok && (checks > free || m.count() == 1);
  if (!gain_ok)
    c.text += fmt::format(" (but the rotated pairs carry magnitude {:.6g}, the rule {:.6g})", m.gain, c.gain);
  else if (c.worst <= 1 && checks <= free)
    c.text += fmt::format(" (but {} informative pairs cannot confirm {} fitted parameters)", checks, free);
  return c;
}

/// The better of a snapped and a raw value: the snapped one when it explains as well.
RuleCandidate snapped_or_raw(const RuleCandidate& snapped, const RuleCandidate& raw) {
  return snapped.explains || !raw.explains ? snapped : raw;
}

std::string base_text(double b, double fitted, bool stated) {
  if (stated) return fmt::format("base {} (stated)", short_number(b));
  return fmt::format("base {} (fit {:.7g})", short_number(b), fitted);
}

/// The base from the pairs [0, to) read as unscaled (ln s = 0), or the stated one.
std::optional<std::pair<double, double>> head_base(const Context& c, int to) {
  if (c.stated.base) return std::pair{*c.stated.base, *c.stated.base};
  const auto line = fit_line(c.m, 0, to, std::nullopt, 0.0);
  if (!line) return std::nullopt;
  const double raw = std::exp(line->lnb);
  return std::pair{snap(raw, line->lnb_error), raw};
}

std::vector<RuleCandidate> plain_and_linear(const Context& c) {
  std::vector<RuleCandidate> out;
  const Measured& m = c.m;
  const bool base_stated = c.stated.base.has_value();
  std::optional<double> lnb;
  if (base_stated) lnb = std::log(*c.stated.base);
  RopeSpec s = c.pairing;
  // none: every pair at base^(-2p/d).
  if (const auto line = fit_line(m, 0, m.count(), lnb, 0.0)) {
    // a stated base is kept bit for bit, not passed through its logarithm
    const double raw = base_stated ? *c.stated.base : std::exp(line->lnb),
                 b = base_stated ? raw : snap(raw, line->lnb_error);
    s.base = b;
    s.scaling = {};
    RopeSpec r = s;
    r.base = raw;
    const int free_base = base_stated ? 0 : 1;
    out.push_back(snapped_or_raw(score(m, s, base_text(b, raw, base_stated) + ", no scaling", free_base),
                                 score(m, r, base_text(raw, raw, base_stated) + ", no scaling", free_base)));
    // NTK and dynamic NTK are plain RoPE at a larger base: named only against a stated base.
    if (base_stated && m.count() >= 2) {
      const auto free = fit_line(m, 0, m.count(), std::nullopt, 0.0);
      if (free) {
        const double d = m.rotary_dim, stretch = std::exp((free->lnb - *lnb) * (d - 2) / d);
        RopeSpec n = c.pairing;
        n.base = *c.stated.base;
        const double f = snap(stretch, free->lnb_error * (d - 2) / d);
        n.scaling = {.kind = RopeScalingKind::ntk, .factor = f};
        out.push_back(score(m, n,
                            fmt::format("{}, NTK scaling by {} (fit {:.7g})", base_text(n.base, n.base, true),
                                        short_number(f), stretch),
                            1));
        if (c.stated.factor && c.stated.original_max_position && *c.stated.factor > 0) {
          // dynamic NTK at length L stretches by s L / L0 - (s - 1)
          const double sf = *c.stated.factor, l0 = double(*c.stated.original_max_position);
          const double len = std::round(l0 * (stretch + sf - 1) / sf);
          RopeSpec dn = n;
          dn.scaling = {.kind = RopeScalingKind::dynamic_ntk,
                        .factor = sf,
                        .original_max_position = *c.stated.original_max_position,
                        .seq_len = static_cast<std::int64_t>(std::max(1.0, len))};
          out.push_back(score(
              m, dn,
              fmt::format("{}, dynamic NTK, factor {}, L0 {}, at length L = {}", base_text(dn.base, dn.base, true),
                          short_number(sf), dn.scaling.original_max_position, dn.scaling.seq_len),
              1));
        }
      }
    }
  }
  // linear: every pair at base^(-2p/d) / s.
  const bool factor_stated = c.stated.factor && c.stated.rule == RopeScalingKind::linear;
  std::optional<double> lns;  // (assigned, not a conditional expression: GCC 12 warns on that)
  if (factor_stated) lns = std::log(*c.stated.factor);
  if (const auto line = fit_line(m, 0, m.count(), lnb, lns)) {
    const double raw_b = base_stated ? *c.stated.base : std::exp(line->lnb);
    const double raw_s = factor_stated ? *c.stated.factor : std::exp(line->lns);
    const double b = base_stated ? raw_b : snap(raw_b, line->lnb_error);
    const double f = factor_stated ? raw_s : snap(raw_s, line->lns_error);
    const int free = (base_stated ? 0 : 1) + (factor_stated ? 0 : 1);
    if (std::fabs(f - 1) > 0 && f > 1) {
      s.base = b;
      s.scaling = {.kind = RopeScalingKind::linear, .factor = f};
      RopeSpec r = s;
      r.base = raw_b;
      r.scaling.factor = raw_s;
      out.push_back(snapped_or_raw(
          score(m, s,
                fmt::format("{}, linear scaling by {}", base_text(b, raw_b, base_stated),
                            factor_stated ? fmt::format("{} (stated)", short_number(f))
                                          : fmt::format("{} (fit {:.7g})", short_number(f), raw_s)),
                free),
          score(m, r, fmt::format("{}, linear scaling by {:.7g}", base_text(raw_b, raw_b, base_stated), raw_s), free)));
    }
  }
  return out;
}

}  // namespace pecheck::dumpcheck::rules
