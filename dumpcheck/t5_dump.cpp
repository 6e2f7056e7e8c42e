#include "dumpcheck/t5_dump.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <limits>

#include "dumpcheck/recorder.hpp"
#include "harness/tolerance.hpp"
#include "reference/t5.hpp"

namespace pecheck::dumpcheck {

using namespace read;

void load_t5(const Json& m, ArrayReader& r, Dump& d) {
  const std::string where = r.manifest();
  const Json arrays = field<Json>(m, "arrays", where);
  const tensorfiles::Array ta = r.read("table", field<std::string>(arrays, "table", where));
  const tensorfiles::Array ba = r.read("bias", field<std::string>(arrays, "bias", where));
  if (ta.shape.size() != 2 || ta.shape[0] < 2 || ta.shape[1] < 1)
    throw FormatError(fmt::format("{}: the table must be (num_buckets, heads)", ta.name));
  auto shape = ba.shape;
  if (shape.size() == 4 && shape[0] == 1) shape.erase(shape.begin());
  if (shape.size() != 3 || shape[0] != ta.shape[1] || shape[1] != shape[2] || shape[1] < 1)
    throw FormatError(fmt::format("{}: the bias must be (heads, n, n) or (1, heads, n, n) with the table's {} heads",
                                  ba.name, ta.shape[1]));
  d.table = clean_floats(ta, "table", d.dtype);
  d.bias = clean_floats(ba, "bias", d.dtype);
  d.max_len = static_cast<int>(ta.shape[0]);  // num_buckets
  d.heads = static_cast<int>(ta.shape[1]);
  d.positions = positions_of(r.read("positions", field<std::string>(arrays, "positions", where)),
                             static_cast<std::size_t>(shape[1]));
  d.width = static_cast<int>(shape[1]);
  if (m.contains("convention")) {
    const Json& c = m.at("convention");
    for (const auto& [key, value] : c.items())
      if (key != "bidirectional" && key != "max_distance")
        throw FormatError(fmt::format("{}: convention: unknown key \"{}\" (bidirectional, max_distance)", where, key));
    if (c.contains("bidirectional")) d.t5_bidirectional = field<bool>(c, "bidirectional", where);
    if (c.contains("max_distance")) d.t5_max_distance = field<int>(c, "max_distance", where);
  }
}

namespace {

/// Whether entry (h, i, j) is the table's value at the bucket of p_j - p_i (or the neighbour
/// fp32's log may give).
bool explained(const Dump& d, const T5Spec& s, std::size_t h, std::size_t i, std::size_t j) {
  const std::size_t n = d.positions.size(), H = static_cast<std::size_t>(d.heads);
  const auto b = ref::t5_bucket<long double>(s, d.positions[j] - d.positions[i], tol::kT5TieWindow);
  const double got = d.bias[(h * n + i) * n + j];
  return got == d.table[static_cast<std::size_t>(b.bucket) * H + h] ||
         (b.alternative && got == d.table[static_cast<std::size_t>(*b.alternative) * H + h]);
}

bool explains_all(const Dump& d, const T5Spec& s) {
  const std::size_t n = d.positions.size();
  for (std::size_t h = 0; h < static_cast<std::size_t>(d.heads); ++h)
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j)
        if (!explained(d, s, h, i, j)) return false;
  return true;
}

}  // namespace

T5Reading read_t5(const Dump& d) {
  std::vector<bool> directions = {true, false};
  if (d.t5_bidirectional) directions = {*d.t5_bidirectional};
  std::vector<int> distances = {128, 256, 64, 32, 20, 100, 512, 1024};  // T5, mT5, and what others ship
  if (d.t5_max_distance) distances = {*d.t5_max_distance};
  std::vector<T5Spec> fits;
  for (bool bidirectional : directions)
    for (int distance : distances) {
      const T5Spec s{
          .heads = d.heads, .num_buckets = d.max_len, .max_distance = distance, .bidirectional = bidirectional};
      try {
        s.validate();
      } catch (const std::invalid_argument&) {
        continue;
      }
      if (explains_all(d, s)) fits.push_back(s);
    }
  auto name = [](const T5Spec& s) {
    return fmt::format("T5 {}, {} buckets, max_distance {}", s.bidirectional ? "bidirectional" : "causal",
                       s.num_buckets, s.max_distance);
  };
  if (fits.empty())
    return {std::nullopt, fmt::format("no T5 bucketing explains every entry ({} x max_distance {} tried)",
                                      directions.size() == 2 ? "bidirectional and causal" : "the stated direction",
                                      fmt::join(distances, ", "))};
  // Distances the positions never reach cannot tell max_distance settings apart: the same buckets.
  if (fits.size() > 1 && fits.front().bidirectional != fits.back().bidirectional)
    return {fits.front(), fmt::format("ambiguous: {} or {} (the positions never tell them apart)", name(fits.front()),
                                      name(fits.back()))};
  std::string text = name(fits.front()) + (d.t5_max_distance ? " (stated)" : "");
  if (fits.size() > 1)
    text += fmt::format(" (or max_distance {}: the positions do not reach where they differ)", fits[1].max_distance);
  return {fits.front(), text};
}

Measurement t5_agreement(const Dump& d, const T5Spec& s) {
  const std::size_t n = d.positions.size();
  Recorder rec("t5.agrees_with_reference", 0, "bit-exact (a gather)", "distance");
  for (std::size_t h = 0; h < static_cast<std::size_t>(d.heads); ++h)
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        const std::int64_t rel = d.positions[j] - d.positions[i];
        if (h == 0) rec.count_token(std::abs(rel));  // filed by distance: one head's entries count there
        const bool ok = explained(d, s, h, i, j);
        const auto b = ref::t5_bucket<long double>(s, rel, tol::kT5TieWindow);
        const double want = d.table[static_cast<std::size_t>(b.bucket) * static_cast<std::size_t>(d.heads) + h];
        const double got = d.bias[(h * n + i) * n + j];
        rec.offer(
            std::abs(rel), ok ? 0.0 : std::numeric_limits<double>::infinity(), std::fabs(got - want),
            [&] {
              return fmt::format("head {}, query {} key {} (relative {}): {:.9g}, table[bucket {}] = {:.9g}", h, i, j,
                                 rel, got, b.bucket, want);
            },
            1.0);
      }
  return rec.finish("out[h,i,j] == table[bucket(p_j - p_i), h]");
}

}  // namespace pecheck::dumpcheck
