#include "dumpcheck/rope2d_dump.hpp"

#include <fmt/format.h>

#include <span>

#include "dumpcheck/convention_fit.hpp"
#include "dumpcheck/rope_manifest.hpp"

namespace pecheck::dumpcheck {

using namespace read;

namespace {

/// (n) shared by the batch, or (b, n): one position per token of every sequence.
std::vector<std::int64_t> axis_positions(const tensorfiles::Array& a, std::int64_t batch, std::int64_t n) {
  const bool shared = a.shape.size() == 1;
  if (!shared && !(a.shape.size() == 2 && a.shape[0] == batch))
    throw FormatError(fmt::format("{}: must be (n) or (batch, n)", a.name));
  const auto p = positions_of(a, static_cast<std::size_t>(shared ? n : batch * n));
  std::vector<std::int64_t> out;
  for (std::int64_t b = 0; b < batch; ++b)
    out.insert(out.end(), p.begin() + (shared ? 0 : b * n), p.begin() + (shared ? n : (b + 1) * n));
  return out;
}

/// The dump as half-heads, a RoPE dump of width d/2: token t's row half at rows[t] (its column
/// half with `swapped`), then its column half; whole_head's middle quarters exchanged first.
Dump halves_of(const Dump& d, Rope2dPairing pairing, bool swapped) {
  Dump h;
  h.dir = d.dir, h.encoder = d.encoder, h.kind = Kind::rope, h.dtype = d.dtype, h.ftz = d.ftz;
  h.heads = d.heads;
  h.width = d.width / 2;
  std::vector<double> x = d.x, y = d.y;
  if (pairing == Rope2dPairing::whole_head) {
    exchange_middle_quarters(std::span(x), d.width);
    exchange_middle_quarters(std::span(y), d.width);
  }
  const std::size_t D = static_cast<std::size_t>(d.width), H = static_cast<std::size_t>(d.heads), half = D / 2;
  for (std::size_t t = 0; t < d.tokens(); ++t)
    for (std::size_t a = 0; a < 2; ++a) {
      h.positions.push_back(d.axes[a ^ (swapped ? 1 : 0)][t]);
      for (std::size_t head = 0; head < H; ++head) {
        const std::size_t at = (t * H + head) * D + a * half;
        h.x.insert(h.x.end(), x.begin() + static_cast<std::ptrdiff_t>(at),
                   x.begin() + static_cast<std::ptrdiff_t>(at + half));
        h.y.insert(h.y.end(), y.begin() + static_cast<std::ptrdiff_t>(at),
                   y.begin() + static_cast<std::ptrdiff_t>(at + half));
      }
    }
  h.rope.layout = d.rope.layout;
  h.rope.base = d.rope.base;
  h.rope.rotary_dim = h.width;  // each half is turned whole
  h.rope.rule = RopeScalingKind::none;
  return h;
}

/// The row halves of halves_of's dump (its even tokens): RoPE of width d/2 at the rows, whose
/// frequencies split and shared 2-D RoPE have alike.
Dump row_halves(const Dump& halves) {
  Dump r = halves;
  r.positions.clear(), r.x.clear(), r.y.clear();
  const std::size_t per = static_cast<std::size_t>(halves.heads * halves.width);
  for (std::size_t t = 0; t < halves.tokens(); t += 2) {
    r.positions.push_back(halves.positions[t]);
    r.x.insert(r.x.end(), halves.x.begin() + static_cast<std::ptrdiff_t>(t * per),
               halves.x.begin() + static_cast<std::ptrdiff_t>((t + 1) * per));
    r.y.insert(r.y.end(), halves.y.begin() + static_cast<std::ptrdiff_t>(t * per),
               halves.y.begin() + static_cast<std::ptrdiff_t>((t + 1) * per));
  }
  return r;
}

/// The dims of pair slot i of a RoPE of width D in the layout.
std::pair<std::size_t, std::size_t> pair_dims(RopeLayout layout, std::size_t D, std::size_t i) {
  return layout == RopeLayout::interleaved ? std::pair{2 * i, 2 * i + 1} : std::pair{i, i + D / 2};
}

/// Split frequencies read as one RoPE of width d at the base (Pixtral's own construction): each
/// head's pairs reordered so that slot 2k holds the row's k-th pair and 2k + 1 the column's, whose
/// frequencies are then base^(-2i/d) in order; axes[0] the rows, axes[1] the columns (exchanged
/// with `swapped`), and the exact output with each pair turned by its axis.
SplitReading read_split(const Dump& d, Rope2dPairing pairing, bool swapped, double base, RopeLayout layout) {
  SplitReading r;
  r.whole = d;
  r.whole.kind = Kind::rope;
  r.whole.axes = {d.axes[swapped ? 1 : 0], d.axes[swapped ? 0 : 1], {}};
  r.whole.positions = r.whole.axes[0];
  std::vector<double> x = d.x, y = d.y;
  // per_half's quarters exchanged: the row's pair k at slot k, the column's at slot d/4 + k, as
  // whole_head has them (interleaved pairs are the same under either pairing).
  if (pairing == Rope2dPairing::per_half && layout == RopeLayout::half_split) {
    exchange_middle_quarters(std::span(x), d.width);
    exchange_middle_quarters(std::span(y), d.width);
  }
  const std::size_t D = static_cast<std::size_t>(d.width), quarter = D / 4;
  for (std::size_t head = 0; head < x.size(); head += D)
    for (std::size_t s = 0; s < D / 2; ++s) {
      const auto [fa, fb] = pair_dims(layout, D, s);
      const auto [ta, tb] = pair_dims(layout, D, s < quarter ? 2 * s : 2 * (s - quarter) + 1);
      r.whole.x[head + ta] = x[head + fa], r.whole.x[head + tb] = x[head + fb];
      r.whole.y[head + ta] = y[head + fa], r.whole.y[head + tb] = y[head + fb];
    }
  r.rope = RopeSpec{d.width, d.width, base, layout};
  r.whole.rope.layout = layout;
  r.whole.rope.base = base;
  const std::vector<double> by_row = rope_exact(r.whole, r.rope, r.whole.axes[0]);
  r.exact = rope_exact(r.whole, r.rope, r.whole.axes[1]);
  for (std::size_t head = 0; head < r.exact.size(); head += D)
    for (std::size_t i = 0; i < D / 2; i += 2) {
      const auto [a, b] = pair_dims(layout, D, i);
      r.exact[head + a] = by_row[head + a], r.exact[head + b] = by_row[head + b];
    }
  return r;
}

Measurement split_agreement(const SplitReading& r, tol::Contract judged) {
  return rotation_agreement(
      r.whole, r.rope, r.exact,
      [&](std::size_t token, int pair) { return r.whole.axes[static_cast<std::size_t>(pair % 2)][token]; }, judged);
}

/// The split reading of the dump under a pairing, its base and layout fitted on the row halves
/// (which shared and split frequencies turn alike); nullopt when the rows fit no RoPE, or the
/// whole dump read so meets no contract, and `text` then says which.
std::optional<SplitReading> fit_split(const Dump& d, Rope2dPairing pairing, bool swapped, std::string& text) {
  RopeFit rows;
  try {
    rows = fit_rope(row_halves(halves_of(d, pairing, swapped)));
  } catch (const FitError& e) {
    text = fmt::format("the row halves fit no RoPE: {}", e.what());
    return std::nullopt;
  }
  if (rows.spec.scaling.kind != RopeScalingKind::none) {
    text = fmt::format("the row halves read {}, with a scaling rule", rows.text);
    return std::nullopt;
  }
  SplitReading r = read_split(d, pairing, swapped, rows.spec.base, rows.spec.layout);
  if (const Measurement m = split_agreement(r, tol::Contract::fp32_angles); !m.contracts->met) {
    text = fmt::format("read with split frequencies at the rows' base {}, the pairs meet no contract ({:.3g} u at {})",
                       short_number(rows.spec.base), m.max_u, m.where);
    return std::nullopt;
  }
  text = fmt::format(
      "2-D RoPE {}, pairing {}, head_dim {}, frequencies split (Pixtral's: one RoPE of width {} dealt out, the row "
      "turned by the even-indexed frequencies, the column by the odd), the row's axis {}",
      layout_name(rows.spec.layout), pairing_name(pairing), d.width, d.width, rows.text);
  return r;
}

}  // namespace

void load_rope2d(const Json& m, ArrayReader& r, Dump& d) {
  const std::string where = r.manifest();
  const Json arrays = field<Json>(m, "arrays", where);
  Rotation rot = read_rotation(m, r, d.dtype, 4);
  d.x = std::move(rot.x), d.y = std::move(rot.y);
  const std::int64_t batch = rot.batch, n = rot.tokens;
  d.heads = static_cast<int>(rot.heads);
  d.width = static_cast<int>(rot.head_dim);
  d.axes[0] = axis_positions(r.read("rows", field<std::string>(arrays, "rows", where)), batch, n);
  d.axes[1] = axis_positions(r.read("cols", field<std::string>(arrays, "cols", where)), batch, n);
  d.positions = d.axes[0];
  if (!m.contains("convention")) return;
  const Json& c = m.at("convention");
  const std::string at = where + ": convention";
  if (!c.is_object()) throw FormatError(fmt::format("{}: must be a JSON object", at));
  Json rope = Json::object();
  for (const auto& item : c.items()) {
    if (item.key() == "pairing") {
      if (item.value() != "per_half" && item.value() != "whole_head")
        throw FormatError(fmt::format("{}: pairing must be per_half or whole_head, got {}", at, item.value().dump()));
      d.rope2d_pairing = item.value() == "per_half" ? Rope2dPairing::per_half : Rope2dPairing::whole_head;
    } else if (item.key() == "frequencies") {
      if (item.value() != "shared" && item.value() != "split")
        throw FormatError(fmt::format("{}: frequencies must be shared or split, got {}", at, item.value().dump()));
      d.rope2d_frequencies = item.value() == "shared" ? Rope2dFrequencies::shared : Rope2dFrequencies::split;
    } else if (item.key() == "layout" || item.key() == "base" || item.key() == "rope_theta") {
      rope[item.key()] = item.value();
    } else {
      throw FormatError(fmt::format(
          "{}: unknown key \"{}\" (a 2-D RoPE convention takes layout, base or rope_theta, pairing, frequencies)", at,
          item.key()));
    }
  }
  const StatedRope s = read_rope_convention(rope, d.width / 2, at);
  d.rope.layout = s.layout;
  d.rope.base = s.base;
}

Rope2dFit fit_rope2d(const Dump& d) {
  std::vector<Rope2dPairing> pairings = {Rope2dPairing::per_half, Rope2dPairing::whole_head};
  if (d.rope2d_pairing) pairings = {*d.rope2d_pairing};
  // Interleaved pairs (2p, 2p + 1) are the same under either pairing.
  if (d.rope.layout == RopeLayout::interleaved) pairings.resize(1);
  const bool shared = d.rope2d_frequencies != Rope2dFrequencies::split;
  const bool split = d.rope2d_frequencies != Rope2dFrequencies::shared;
  std::string why, swapped;
  /// Shared frequencies: the dump as half-heads, each a RoPE of width d/2; nullopt if none fits.
  const auto fit_shared = [&](Rope2dPairing pairing, bool swap) -> std::optional<Rope2dFit> {
    Dump halves = halves_of(d, pairing, swap);
    try {
      const RopeFit f = fit_rope(halves);
      const Rope2dSpec spec{.head_dim = d.width, .base = f.spec.base, .layout = f.spec.layout, .pairing = pairing};
      return Rope2dFit{spec, std::move(halves), f.spec,
                       fmt::format("2-D RoPE {}, pairing {}, head_dim {}, each axis {}", layout_name(spec.layout),
                                   pairing_name(pairing), d.width, f.text),
                       std::nullopt};
    } catch (const FitError& e) {
      if (!swap && why.empty()) why = e.what();
      return std::nullopt;
    }
  };
  for (const bool swap : {false, true})
    for (const Rope2dPairing pairing : pairings) {
      if (shared)
        if (std::optional<Rope2dFit> f = fit_shared(pairing, swap)) {
          if (!swap) return std::move(*f);
          if (swapped.empty()) swapped = f->text;
        }
      if (!split) continue;
      std::string text;
      if (std::optional<SplitReading> r = fit_split(d, pairing, swap, text)) {
        const Rope2dSpec spec{.head_dim = d.width,
                              .base = r->rope.base,
                              .layout = r->rope.layout,
                              .pairing = pairing,
                              .frequencies = Rope2dFrequencies::split};
        if (!swap) return {spec, Dump{}, r->rope, text, std::move(r)};
        if (swapped.empty()) swapped = text;
      } else if (!shared && !swap && why.empty()) {
        why = text;
      }
    }
  if (!swapped.empty())
    throw FitError(
        fmt::format("no 2-D RoPE fits with the head's first half turned by the row; with rows and columns "
                    "exchanged it reads {}: the axes are swapped",
                    swapped));
  // Frequencies stated: would the other kind explain the pairs?
  for (const Rope2dPairing pairing : pairings) {
    std::string text;
    if (!split && fit_split(d, pairing, false, text))
      throw FitError(fmt::format(
          "the frequencies are split: read so it is {}; with shared frequencies, as stated, no 2-D RoPE fits ({})",
          text, why));
    if (!shared)
      if (const std::optional<Rope2dFit> f = fit_shared(pairing, false))
        throw FitError(fmt::format(
            "the frequencies are shared: read so it is {}; with split frequencies, as stated, no 2-D RoPE fits ({})",
            f->text, why));
  }
  throw FitError(fmt::format("no 2-D RoPE fits ({})", why));
}

std::vector<Measurement> rope2d_measurements(const Rope2dFit& f, tol::Contract judged) {
  if (f.split) {
    Measurement agreement = split_agreement(*f.split, judged);
    agreement.property = "rope2d.agrees_with_reference";
    constexpr const char* kWhole =
        " (read as one RoPE of width d: pair 2k the row's k-th, 2k + 1 the column's, each turned by its axis)";
    agreement.summary += kWhole;
    Measurement norms = rope_norms(f.split->whole, f.split->rope, judged);
    norms.summary += kWhole;
    return {agreement, norms};
  }
  Measurement agreement = rope_agreement(f.halves, f.axis, judged);
  agreement.property = "rope2d.agrees_with_reference";
  constexpr const char* kHalves = " (read as half-heads: token 2t is token t's row half, 2t + 1 its column half)";
  agreement.summary += kHalves;
  Measurement norms = rope_norms(f.halves, f.axis, judged);
  norms.summary += kHalves;
  return {agreement, norms};
}

}  // namespace pecheck::dumpcheck
