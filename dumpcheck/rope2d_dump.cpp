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
    } else if (item.key() == "layout" || item.key() == "base" || item.key() == "rope_theta") {
      rope[item.key()] = item.value();
    } else {
      throw FormatError(fmt::format(
          "{}: unknown key \"{}\" (a 2-D RoPE convention takes layout, base or rope_theta, pairing)", at, item.key()));
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
  std::string why, swapped;
  for (const bool swap : {false, true})
    for (const Rope2dPairing pairing : pairings) {
      Dump halves = halves_of(d, pairing, swap);
      try {
        const RopeFit f = fit_rope(halves);
        const Rope2dSpec spec{.head_dim = d.width, .base = f.spec.base, .layout = f.spec.layout, .pairing = pairing};
        const std::string text = fmt::format("2-D RoPE {}, pairing {}, head_dim {}, each axis {}",
                                             layout_name(spec.layout), pairing_name(pairing), d.width, f.text);
        if (!swap) return {spec, std::move(halves), f.spec, text};
        if (swapped.empty()) swapped = text;
      } catch (const FitError& e) {
        if (!swap && why.empty()) why = e.what();
      }
    }
  if (!swapped.empty())
    throw FitError(
        fmt::format("no 2-D RoPE fits with the head's first half turned by the row; with rows and columns "
                    "exchanged it reads {}: the axes are swapped",
                    swapped));
  throw FitError(fmt::format("no 2-D RoPE fits ({})", why));
}

std::vector<Measurement> rope2d_measurements(const Rope2dFit& f, tol::Contract judged) {
  Measurement agreement = rope_agreement(f.halves, f.axis, judged);
  agreement.property = "rope2d.agrees_with_reference";
  constexpr const char* kHalves = " (read as half-heads: token 2t is token t's row half, 2t + 1 its column half)";
  agreement.summary += kHalves;
  Measurement norms = rope_norms(f.halves, f.axis, judged);
  norms.summary += kHalves;
  return {agreement, norms};
}

}  // namespace pecheck::dumpcheck
