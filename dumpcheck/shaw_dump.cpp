#include "dumpcheck/shaw_dump.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "dumpcheck/recorder.hpp"
#include "harness/tolerance.hpp"
#include "reference/real.hpp"
#include "reference/shaw.hpp"

namespace pecheck::dumpcheck {

using namespace read;

namespace {

/// (n, w) or (1, n, w): the rows of a per-token array with one sequence.
std::int64_t rows_of(const tensorfiles::Array& a, std::int64_t width, const char* what) {
  const auto& s = a.shape;
  if (!((s.size() == 2 || (s.size() == 3 && s[0] == 1)) && s.back() == width && s[s.size() - 2] >= 1))
    throw FormatError(fmt::format("{}: {} must be (n, {}) or (1, n, {})", a.name, what, width, width));
  return s[s.size() - 2];
}

}  // namespace

void load_shaw(const Json& m, ArrayReader& r, Dump& d) {
  const std::string where = r.manifest();
  const Json arrays = field<Json>(m, "arrays", where);
  const tensorfiles::Array ta = r.read("table", field<std::string>(arrays, "table", where));
  if (ta.shape.size() != 2 || ta.shape[0] < 1 || ta.shape[0] % 2 == 0 || ta.shape[1] < 1)
    throw FormatError(fmt::format("{}: the relative table must be (2K + 1, head_dim): an odd row count", ta.name));
  const std::int64_t width = ta.shape[1];
  const tensorfiles::Array qa = r.read("q", field<std::string>(arrays, "q", where));
  const tensorfiles::Array ka = r.read("k", field<std::string>(arrays, "k", where));
  const tensorfiles::Array sa = r.read("scores", field<std::string>(arrays, "scores", where));
  const std::int64_t n = rows_of(qa, width, "q");
  if (rows_of(ka, width, "k") != n) throw FormatError(fmt::format("{}: q and k differ in tokens", where));
  if (rows_of(sa, n, "the scores") != n)
    throw FormatError(fmt::format("{}: the scores must be (n, n) for the {} tokens of q", sa.name, n));
  d.x = clean_floats(qa, "q", d.dtype);
  d.y = clean_floats(ka, "k", d.dtype);
  d.table = clean_floats(ta, "table", d.dtype);
  d.bias = floats(sa, "scores");  // an output may be non-finite: the check says so
  require_representable(d.bias, d.dtype, sa.name);
  d.width = static_cast<int>(width);
  d.max_len = static_cast<int>(ta.shape[0]);
  d.positions =
      positions_of(r.read("positions", field<std::string>(arrays, "positions", where)), static_cast<std::size_t>(n));
  if (m.contains("convention")) {
    const Json& c = m.at("convention");
    if (!c.is_object()) throw FormatError(fmt::format("{}: convention must be a JSON object", where));
    for (const auto& [key, value] : c.items())
      if (key != "scale") throw FormatError(fmt::format("{}: convention: unknown key \"{}\" (scale)", where, key));
    if (c.contains("scale")) {
      if (!c.at("scale").is_number() || !(c.at("scale").get<double>() > 0) ||
          !std::isfinite(c.at("scale").get<double>()))
        throw FormatError(fmt::format("{}: convention: scale must be a finite number > 0", where));
      d.shaw_scale = c.at("scale").get<double>();
    }
  }
}

Measurement shaw_agreement(const Dump& d, bool reversed) {
  const std::size_t n = d.tokens(), w = static_cast<std::size_t>(d.width);
  const ShawSpec s{.max_distance = (d.max_len - 1) / 2, .head_dim = d.width};
  const double u = unit_roundoff(d.dtype);
  Recorder rec("shaw.agrees_with_reference", tol::shaw_score(d.dtype, d.width), "", "distance");
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const std::int64_t rel = d.positions[j] - d.positions[i];
      const std::size_t row = (reversed ? ref::shaw_row(s, d.positions[j], d.positions[i])
                                        : ref::shaw_row(s, d.positions[i], d.positions[j])) *
                              w;
      ref::DefaultReal exact = 0;
      double scale = 0;  // sum_c |q_c| (|k_c| + |r_c|): the natural size of a dot-product error
      for (std::size_t c = 0; c < w; ++c) {
        const double q = d.x[i * w + c], k = d.y[j * w + c], r = d.table[row + c];
        exact += ref::DefaultReal(q) * (ref::DefaultReal(k) + ref::DefaultReal(r));
        scale += std::fabs(q) * (std::fabs(k) + std::fabs(r));
      }
      exact *= ref::DefaultReal(d.shaw_scale);
      scale *= d.shaw_scale;
      const double want = ref::to_double(exact), got = d.bias[i * n + j], diff = std::fabs(got - want);
      rec.count_token(std::abs(rel));  // filed by distance |p_j - p_i|: the count is of query-key pairs
      rec.offer(std::abs(rel), diff / (u * std::max(scale, min_normal(d.dtype))), diff, [&] {
        return fmt::format("query {} key {} (relative {}, table row {}): {:.9g}, exact {:.9g}", i, j, rel, row / w, got,
                           want);
      });
    }
  return rec.finish(reversed ? "scores with the table read at p_i - p_j" : "s_ij = q_i.k_j + q_i.r[clamp(p_j - p_i)]");
}

}  // namespace pecheck::dumpcheck
