#include "dumpcheck/agreement.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "dumpcheck/recorder.hpp"
#include "harness/flush_to_zero.hpp"
#include "harness/rope_measure.hpp"
#include "harness/tolerance.hpp"
#include "reference/real.hpp"
#include "reference/rope.hpp"
#include "reference/sinusoidal.hpp"

namespace pecheck::dumpcheck {

namespace {

using Real = ref::DefaultReal;

double pair_norm(double a, double b) { return std::hypot(a, b); }

}  // namespace

std::string ContractReading::text() const {
  std::string t =
      met ? fmt::format("{} contract met", tol::contract_name(*met))
          : fmt::format("no contract met (not even {}: a wrong convention or a bug)", tol::contract_name(weakest));
  if (exact_to) return t + fmt::format("; exact to position {}", *exact_to);
  return t + "; exact at every position present";
}

std::vector<double> rope_exact(const Dump& d, const RopeSpec& s, std::span<const std::int64_t> positions) {
  const std::size_t D = static_cast<std::size_t>(d.width), H = static_cast<std::size_t>(d.heads);
  std::vector<double> exact(d.x.size());
  std::vector<Real> head(D);
  for (std::size_t t = 0; t < d.tokens(); ++t)
    for (std::size_t h = 0; h < H; ++h) {
      const std::size_t base = (t * H + h) * D;
      for (std::size_t k = 0; k < D; ++k) head[k] = Real(d.x[base + k]);
      ref::rope_rotate<Real>(s, positions[t], head);
      for (std::size_t k = 0; k < D; ++k) exact[base + k] = ref::to_double(head[k]);
    }
  return exact;
}

Measurement rope_agreement(const Dump& d, const RopeSpec& s, tol::Contract judged) {
  return rotation_agreement(
      d, s, rope_exact(d, s, d.positions), [&](std::size_t token, int) { return d.positions[token]; }, judged);
}

Measurement rotation_agreement(const Dump& d, const RopeSpec& s, std::span<const double> exact,
                               const PairPosition& position_of, tol::Contract judged) {
  using tol::Contract;
  const std::size_t D = static_cast<std::size_t>(d.width), H = static_cast<std::size_t>(d.heads);
  const std::string contract = std::string(tol::contract_name(judged));
  Recorder rec("rope.agrees_with_reference", tol::rope_pair_contract(judged, d.dtype, 0, 0),
               judged == Contract::exact ? "" : "the " + contract + " contract");
  const measure::ContractBounds bounds(d.dtype, s);
  int weakest = 0;  // the weakest contract some pair needs: 0 exact, 1 dtype-trig, 2 fp32 angles, 3 none
  std::optional<std::int64_t> exact_to;
  auto needs = [&](std::int64_t pos, int contract_index) {
    weakest = std::max(weakest, contract_index);
    if (contract_index > 0 && (!exact_to || pos < *exact_to)) exact_to = pos;
  };
  // Each token counts once in every octave where one of its pairs was turned (M-RoPE's axes differ).
  for (std::size_t t = 0; t < d.tokens(); ++t) {
    std::vector<int> octaves;
    for (int p = 0; p < std::max(1, s.rotary_dim / 2); ++p) {
      const int o = measure::octave_of(position_of(t, p));
      if (std::find(octaves.begin(), octaves.end(), o) == octaves.end()) {
        octaves.push_back(o);
        rec.count_token(position_of(t, p));
      }
    }
  }
  // The catalogue's measurement (harness/rope_measure.hpp), pass-through rule included.
  measure::rope_errors(
      s, d.heads, d.dtype, d.x, d.y, exact, s.magnitude(),
      [&](const measure::PairError& e) {
        const std::int64_t pos = position_of(e.token, e.pair);
        const std::size_t a = (e.token * H + e.head) * D + static_cast<std::size_t>(e.i);
        const std::size_t b = (e.token * H + e.head) * D + static_cast<std::size_t>(e.j);
        int index = 3;
        for (Contract c : {Contract::fp32_angles, Contract::dtype_trig, Contract::exact})
          if (e.error_u <= bounds.at(c, e.pair, pos)) index = static_cast<int>(c);
        needs(pos, index);
        rec.offer(
            pos, e.error_u, e.abs_error,
            [&] {
              return fmt::format(
                  "position {} (token {}, head {}), dims ({},{}): ({:.9g}, {:.9g}), exact ({:.9g}, {:.9g})", pos,
                  e.token, e.head, e.i, e.j, d.y[a], d.y[b], exact[a], exact[b]);
            },
            bounds.at(judged, e.pair, pos));
      },
      [&](const measure::ChangedPassThrough& c) {
        const std::int64_t pos = d.positions[c.token];
        needs(pos, 3);
        rec.offer(pos, std::numeric_limits<double>::infinity(), std::fabs(c.got - c.expected), [&] {
          return fmt::format("position {} (token {}, head {}), pass-through dim {} changed: {:.9g} -> {:.9g}", pos,
                             c.token, c.head, c.dim, c.expected, c.got);
        });
      });
  Measurement m =
      rec.finish(judged == Contract::exact ? "agreement with the reference"
                                           : "agreement with the reference under the " + contract + " contract");
  ContractReading r{.judged = judged, .exact_to = exact_to};
  if (weakest < 3) r.met = static_cast<Contract>(weakest);
  m.contracts = r;
  return m;
}

Measurement rope_norms(const Dump& d, const RopeSpec& s, tol::Contract judged) {
  const std::size_t D = static_cast<std::size_t>(d.width);
  const double u = unit_roundoff(d.dtype);
  // | |y_p| - g |x_p| | <= |y_p - g R x_p| <= 2u g |x_p|: the agreement bound also bounds the
  // norm (g: YaRN's attention factor on the rotated pairs, else 1).
  const double g = s.magnitude();
  const bool exact = judged == tol::Contract::exact;
  Recorder rec("rope.orthogonal", exact ? tol::rope_pair(d.dtype) : tol::rope_pair_dtype_trig(d.dtype),
               exact ? "" : "the dtype-trig contract");
  for (std::size_t t = 0; t < d.tokens(); ++t) rec.count_token(d.positions[t]);
  for (std::size_t base = 0; base < d.x.size(); base += D) {
    const std::size_t t = base / D / static_cast<std::size_t>(d.heads);
    for (int p = 0; p < s.rotary_dim / 2; ++p) {
      const auto [ia, ib] = ref::rope_pair(s, p);
      const std::size_t a = base + static_cast<std::size_t>(ia), b = base + static_cast<std::size_t>(ib);
      const double nx = pair_norm(d.x[a], d.x[b]), ny = pair_norm(d.y[a], d.y[b]);
      rec.offer(d.positions[t],
                std::max(std::fabs(ny - g * nx) - gen::flushed_pair_slack(), 0.0) /
                    (u * g * std::max(nx, min_normal(d.dtype))),
                std::fabs(ny - g * nx), [&, ia = ia, ib = ib] {
                  return fmt::format("position {} (token {}), dims ({},{}): |x| = {:.9g}, |y| = {:.9g}{}",
                                     d.positions[t], t, ia, ib, nx, ny,
                                     g != 1 ? fmt::format(" (expected {:.9g} |x|)", g) : "");
                });
    }
  }
  return rec.finish(g != 1 ? fmt::format("norm scaling (each pair's length times {:.6g})", g)
                           : "norm preservation (a rotation keeps each pair's length)");
}

Measurement sinusoidal_agreement(const Dump& d, const SinusoidalSpec& s) {
  const std::size_t W = static_cast<std::size_t>(d.width);
  const double u = unit_roundoff(d.dtype);
  Recorder rec("sinusoidal.agrees_with_reference", tol::sinusoidal_entry(d.dtype));
  for (std::size_t t = 0; t < d.tokens(); ++t) {
    const std::int64_t pos = d.positions[t];
    rec.count_token(pos);
    const std::vector<Real> row = ref::sinusoidal_row<Real>(s, pos);
    for (std::size_t k = 0; k < W; ++k) {
      const double exact = ref::to_double(row[k]), diff = std::fabs(d.y[t * W + k] - exact);
      rec.offer(pos, diff / u, diff, [&] {
        return fmt::format("position {}, dim {}: {:.9g}, exact {:.9g}", pos, k, d.y[t * W + k], exact);
      });
    }
  }
  return rec.finish("agreement with the reference");
}

Measurement sinusoidal_bounds(const Dump& d, const SinusoidalSpec& s) {
  const std::size_t W = static_cast<std::size_t>(d.width);
  const double u = unit_roundoff(d.dtype);
  Recorder rec("sinusoidal.bounds", tol::sinusoidal_norm(d.dtype, d.width));
  for (std::size_t t = 0; t < d.tokens(); ++t) {
    const std::int64_t pos = d.positions[t];
    rec.count_token(pos);
    if (s.is_padding(pos)) continue;
    double norm2 = 0;
    for (std::size_t k = 0; k < W; ++k) {
      const double v = d.y[t * W + k];
      norm2 += v * v;
      if (!(std::fabs(v) <= 1))
        rec.offer(pos, std::numeric_limits<double>::infinity(), std::fabs(v) - 1,
                  [&] { return fmt::format("position {}, dim {}: |PE| = {:.9g} > 1", pos, k, std::fabs(v)); });
    }
    const double err = std::fabs(norm2 - double(W) / 2);
    rec.offer(pos, err / u, err,
              [&] { return fmt::format("position {}: |PE|^2 = {:.9g}, d/2 = {}", pos, norm2, W / 2); });
  }
  return rec.finish("|PE| <= 1 and |PE|^2 = d/2");
}

Measurement learned_agreement(const Dump& d) {
  const std::size_t W = static_cast<std::size_t>(d.width);
  const double u = unit_roundoff(d.dtype);
  Recorder rec("learned.agrees_with_reference", tol::learned_add(d.dtype));
  for (std::size_t t = 0; t < d.tokens(); ++t) {
    const std::int64_t pos = d.positions[t];
    rec.count_token(pos);
    if (pos >= d.max_len) {  // the encoder produced this row: it read past its table (or wrapped)
      rec.offer(pos, std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity(),
                [&] { return fmt::format("position {} outside [0, {}) was accepted (token {})", pos, d.max_len, t); });
      continue;
    }
    for (std::size_t k = 0; k < W; ++k) {
      const double exact = round_to(d.dtype, d.x[t * W + k] + d.table[static_cast<std::size_t>(pos) * W + k]);
      const double diff = std::fabs(d.y[t * W + k] - exact);
      const double beyond = std::max(diff - gen::flushed_value_slack(), 0.0);  // a stated FTZ's flushed sum
      rec.offer(pos, beyond / (u * std::max(std::fabs(exact), min_normal(d.dtype))), diff, [&] {
        return fmt::format("position {}, dim {}: {:.9g}, x + E[pos] rounded once {:.9g}", pos, k, d.y[t * W + k],
                           exact);
      });
    }
  }
  Measurement m = rec.finish("y = x + E[pos]");
  if (!d.refused_past_table)
    m.summary += fmt::format("; the dump does not show what happens at positions >= max_len = {}", d.max_len);
  else if (*d.refused_past_table)
    m.summary += fmt::format(
        "; positions >= max_len = {} fail{}: the table has no rows to extrapolate to, and refusing them is what "
        "this property requires",
        d.max_len, d.refusal.empty() ? "" : fmt::format(" ({})", d.refusal));
  else {
    m.max_u = m.max_ratio = std::numeric_limits<double>::infinity();
    m.where = fmt::format("positions >= max_len = {} were accepted", d.max_len);
    m.summary += fmt::format(
        "; but positions >= max_len = {} were accepted without an error (a wrap or a read "
        "past the table)",
        d.max_len);
  }
  return m;
}

}  // namespace pecheck::dumpcheck
