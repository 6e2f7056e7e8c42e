#include "dumpcheck/alibi_dump.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <limits>

#include "dumpcheck/recorder.hpp"
#include "harness/tolerance.hpp"
#include "reference/alibi.hpp"

namespace pecheck::dumpcheck {

using namespace read;

void load_alibi(const Json& m, ArrayReader& r, Dump& d) {
  const std::string where = r.manifest();
  const Json arrays = field<Json>(m, "arrays", where);
  const bool key = arrays.contains("key_bias");
  if (key == arrays.contains("bias"))
    throw FormatError(
        fmt::format("{}: an ALiBi dump has \"bias\" (heads, n, n) or \"key_bias\" (heads, n), one", where));
  const tensorfiles::Array a =
      r.read(key ? "key_bias" : "bias", field<std::string>(arrays, key ? "key_bias" : "bias", where));
  auto shape = a.shape;
  if (!key && shape.size() == 4 && shape[0] == 1) shape.erase(shape.begin());     // a batch of one
  if (key && shape.size() == 3 && shape[1] == 1) shape.erase(shape.begin() + 1);  // BLOOM's (b h, 1, n)
  const bool ok = key ? shape.size() == 2 : shape.size() == 3 && shape[1] == shape[2];
  if (!ok || shape[0] < 1 || shape.back() < 1)
    throw FormatError(fmt::format(
        "{}: {} must be {}", a.name, key ? "key_bias" : "bias",
        key ? "(heads, n), (heads, 1, n) or (batch x heads, 1, n) with batch 1" : "(heads, n, n) or (1, heads, n, n)"));
  d.key_bias = key;
  d.heads = static_cast<int>(shape[0]);
  d.bias = floats(a, key ? "key_bias" : "bias");
  for (std::size_t i = 0; i < d.bias.size(); ++i)  // -inf marks a masked entry; nothing else may be non-finite
    if (std::isnan(d.bias[i]) || d.bias[i] == std::numeric_limits<double>::infinity())
      throw FormatError(
          fmt::format("{}: element {} is {}: only -inf (a masked entry) may be non-finite", a.name, i, d.bias[i]));
  require_representable(d.bias, d.dtype, a.name);
  const std::size_t n = static_cast<std::size_t>(shape.back());
  d.positions = positions_of(r.read("positions", field<std::string>(arrays, "positions", where)), n);
  d.width = static_cast<int>(n);
  if (m.contains("convention"))
    throw FormatError(fmt::format("{}: an ALiBi dump states no convention: the slopes are read from the data", where));
}

namespace {

/// The distance whose multiple an entry holds, and whether it is masked: key form, m p_j; bias
/// form, -m |p_i - p_j|, with -inf above the diagonal when causal.
struct Entry {
  double value, distance;
  bool masked;
  std::int64_t at;  ///< the position the report files it under: the distance
};

template <class Visit>
void for_each_entry(const Dump& d, Visit visit) {
  const std::size_t n = d.positions.size();
  for (std::size_t h = 0; h < static_cast<std::size_t>(d.heads); ++h) {
    if (d.key_bias) {
      for (std::size_t j = 0; j < n; ++j)
        visit(h, 0, j, Entry{d.bias[h * n + j], double(d.positions[j]), false, d.positions[j]});
      continue;
    }
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        const double v = d.bias[(h * n + i) * n + j];
        const std::int64_t dist = std::abs(d.positions[i] - d.positions[j]);
        visit(h, i, j, Entry{-v, double(dist), j > i && v == -std::numeric_limits<double>::infinity(), dist});
      }
  }
}

}  // namespace

std::vector<double> read_alibi_slopes(const Dump& d) {
  std::vector<double> num(static_cast<std::size_t>(d.heads)), den(num.size());
  for_each_entry(d, [&](std::size_t h, std::size_t, std::size_t, const Entry& e) {
    if (e.masked || !std::isfinite(e.value)) return;
    num[h] += e.value * e.distance, den[h] += e.distance * e.distance;
  });
  std::vector<double> slopes;
  for (std::size_t h = 0; h < num.size(); ++h) slopes.push_back(den[h] > 0 ? num[h] / den[h] : 0.0);
  return slopes;
}

Measurement alibi_agreement(const Dump& d) {
  const auto slopes = ref::alibi_slopes<long double>(d.heads);
  const double u = unit_roundoff(d.dtype);
  Recorder rec("alibi.agrees_with_reference", tol::alibi_bias(d.dtype), "", d.key_bias ? "key position" : "distance");
  for_each_entry(d, [&](std::size_t h, std::size_t i, std::size_t j, const Entry& e) {
    // Filed by distance (key position in BLOOM's form): each entry of one head counts there, so
    // every octave an error lands in is one the table shows.
    if (h == 0) rec.count_token(e.at);
    if (e.masked) return;  // -inf above the diagonal: causal, as the catalogue's form allows
    const double exact = static_cast<double>(slopes[h] * static_cast<long double>(e.distance));
    const double got = e.value, diff = std::fabs(got - exact);
    rec.offer(e.at, diff / (u * std::max(std::fabs(exact), min_normal(d.dtype))), diff, [&] {
      return d.key_bias ? fmt::format("head {}, key {} at position {}: {:.9g}, slope x position {:.9g}", h, j,
                                      d.positions[j], got, exact)
                        : fmt::format("head {}, query {} key {} (distance {}): {:.9g}, -slope x distance {:.9g}", h, i,
                                      j, e.distance, -got, -exact);
    });
  });
  return rec.finish(d.key_bias ? "slope x key position (BLOOM's form)" : "-slope x |p_i - p_j|");
}

Measurement alibi_slopes_check(const Dump& d, const std::vector<double>& read) {
  const auto rule = ref::alibi_slopes<long double>(d.heads);
  const double u = unit_roundoff(d.dtype);
  Measurement m{.property = "alibi.slopes", .bound_u = tol::alibi_bias(d.dtype)};
  m.bound_text = fmt::format("{:.4g} u", m.bound_u);
  std::vector<std::string> wrong;
  for (std::size_t h = 0; h < read.size(); ++h) {
    const double want = static_cast<double>(rule[h]), err = std::fabs(read[h] - want) / (u * want);
    if (err > m.max_u || h == 0) {
      m.max_u = err;
      m.where = fmt::format("head {}: slope {:.9g}, the rule's {:.9g}", h, read[h], want);
    }
    if (err > m.bound_u) wrong.push_back(fmt::format("head {} reads {:.6g}, the rule gives {:.6g}", h, read[h], want));
  }
  m.max_ratio = m.max_u / m.bound_u;
  m.summary = wrong.empty()
                  ? fmt::format("the {} slopes are the paper's for {} heads (2^(-8k/P), then the odd 2^(-4k/P))",
                                read.size(), d.heads)
                  : fmt::format("{} of {} slopes are not the paper's for {} heads: {}", wrong.size(), read.size(),
                                d.heads, fmt::join(wrong, "; "));
  return m;
}

}  // namespace pecheck::dumpcheck
