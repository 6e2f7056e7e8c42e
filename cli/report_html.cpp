// `pecheck report --html FILE`: one self-contained page (inline SVG and CSS, no scripts, nothing
// fetched) for people who would rather look than read: the property x encoder x dtype verdict
// matrix of a run, RoPE error against position (log axes) for every backend and dtype beside the
// naive fp32-angle computation, the sinusoidal table and its Toeplitz Gram matrix, and the RoPE
// score against m - n for three absolute positions (the curves coincide: only the offset matters).
// With --plugin LIB the page draws a plugin instead (its verdicts and its profile,
// cli/plugin_profile.cpp); with --dump DIR, the dumps validate --dump reads.
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <map>
#include <random>

#include "cli/commands.hpp"
#include "cli/dump_report.hpp"
#include "cli/plugin_profile.hpp"
#include "cli/svg.hpp"
#include "harness/encoders.hpp"
#include "harness/rope_measure.hpp"
#include "impl/backend_table.hpp"
#include "impl/fp32_angle_rope.hpp"
#include "plugin/plugin_host.hpp"
#include "reference/real.hpp"
#include "reference/rope.hpp"
#include "reference/sinusoidal.hpp"

namespace pecheck::cli {

namespace {

using Real = ref::Mpfr50;
const char* const kColors[] = {"#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"};

/// Positions 2^(k-1), 1.5 2^(k-1) and 2^k - 1 for k = 1..24: every octave below 2^24.
std::vector<std::int64_t> octave_positions() {
  std::vector<std::int64_t> p;
  for (int k = 1; k <= 24; ++k) {
    const std::int64_t lo = std::int64_t{1} << (k - 1);
    p.insert(p.end(), {lo, lo + lo / 2, 2 * lo - 1});
  }
  return p;
}

/// Max over pairs and over each octave of |y - y_exact| / (u |x_pair|) (harness/rope_measure.hpp):
/// the curve of one encoder (or of the fp32-angle baseline, impl/fp32_angle_rope.hpp, when enc is
/// null) in one dtype; x = the octave's top position.
svg::Series rope_error_curve(Encoder* enc, DType dt, const std::string& label, const std::string& color,
                             const RopeSpec& s = {64, 64, 500000.0, RopeLayout::half_split}) {
  const auto pos = octave_positions();
  const std::size_t D = static_cast<std::size_t>(s.head_dim);
  std::mt19937 rng(7);
  std::normal_distribution<double> normal;
  std::vector<float> x(pos.size() * D);
  for (float& v : x) v = round_to(dt, normal(rng));
  std::vector<float> y = x;
  if (enc)
    enc->run(RopeApply{s, dt, 1, pos, y});
  else
    baseline::fp32_angle_rope(s, dt, 1, pos, y);
  std::vector<double> exact(x.size());
  for (std::size_t t = 0; t < pos.size(); ++t) {
    std::vector<Real> r(x.begin() + static_cast<std::ptrdiff_t>(t * D),
                        x.begin() + static_cast<std::ptrdiff_t>((t + 1) * D));
    ref::rope_rotate<Real>(s, pos[t], r);
    for (std::size_t k = 0; k < D; ++k) exact[t * D + k] = ref::to_double(r[k]);
  }
  measure::OctaveMax worst;
  const std::vector<double> got(y.begin(), y.end());
  measure::rope_errors(
      s, 1, dt, x, got, exact, 1.0, [&](const measure::PairError& e) { worst.offer(pos[e.token], e.error_u); },
      [](const measure::ChangedPassThrough&) {});
  svg::Series out{label, color, {}, {}, enc == nullptr};
  for (int k = 1; k < static_cast<int>(worst.values().size()); ++k) {
    out.x.push_back(static_cast<double>(measure::octave_hi(k)));
    out.y.push_back(worst.values()[static_cast<std::size_t>(k)]);
  }
  return out;
}

std::string accuracy_charts() {
  std::string html;
  for (const DType dt : kAllDTypes) {
    svg::Chart c{fmt::format("RoPE {} (base 5e5, head_dim 64): worst pair error per octave", dtype_name(dt)),
                 {"position (top of the octave)", true},
                 {"error (u of the dtype)", true},
                 {}};
    int color = 0;
    for (const Backend& b : encoders_under_test()) {
      if (!b.probe().available) continue;
      const auto enc = b.make();
      c.series.push_back(rope_error_curve(enc.get(), dt, b.name, kColors[color++ % 6]));
    }
    c.series.push_back(rope_error_curve(nullptr, dt, "naive fp32 angle", "#d62728"));
    html += svg::line_chart(c);
  }
  return html;
}

/// A RoPE agreement measured elsewhere (a plugin's profile, a dump): its octave maxima.
struct MeasuredCurve {
  DType dtype;
  std::string label;
  RopeSpec spec;  ///< what it was measured under: the fp32-angle baseline is drawn at the same
  const dumpcheck::Measurement* m;
};

/// One chart per dtype that has curves: each curve's worst error per octave, beside the naive
/// fp32-angle computation of the first curve's spec.
std::string measured_charts(const std::vector<MeasuredCurve>& curves) {
  std::string html;
  for (const DType dt : kAllDTypes) {
    svg::Chart c{fmt::format("RoPE {}: worst pair error per octave", dtype_name(dt)),
                 {"position (top of the octave)", true},
                 {"error (u of the dtype)", true},
                 {}};
    int color = 0;
    const RopeSpec* spec = nullptr;
    for (const MeasuredCurve& m : curves) {
      if (m.dtype != dt) continue;
      svg::Series s{m.label, kColors[color++ % 6], {}, {}, false};
      for (const auto& o : m.m->octaves) s.x.push_back(double(o.hi)), s.y.push_back(o.max_u);
      c.series.push_back(s);
      if (!spec) spec = &m.spec;
    }
    if (!spec) continue;
    c.series.push_back(rope_error_curve(nullptr, dt, "naive fp32 angle", "#d62728", *spec));
    html += svg::line_chart(c);
  }
  return html;
}

std::string sinusoid_pictures() {
  const SinusoidalSpec s{64, 10000.0, SinusoidalLayout::interleaved};
  std::vector<std::vector<double>> table(64), gram(64, std::vector<double>(64));
  for (std::int64_t p = 0; p < 64; ++p) table[static_cast<std::size_t>(p)] = ref::sinusoidal_row<double>(s, p);
  for (std::size_t p = 0; p < 64; ++p)
    for (std::size_t q = 0; q < 64; ++q)
      for (std::size_t i = 0; i < 64; ++i) gram[p][q] += table[p][i] * table[q][i];
  return svg::heatmap("PE: positions 0..63 x dims 0..63", table, -1, 1, "position", "dimension", 6) +
         svg::heatmap("Gram PE(p).PE(q): Toeplitz", gram, -32, 32, "p", "q", 6);
}

/// <R_m q, R_n k> against m - n for n = 0, 1000, 100000 through the first available backend.
std::string rope_offset_chart() {
  const RopeSpec s{64, 64, 10000.0, RopeLayout::half_split};
  std::mt19937 rng(3);
  std::normal_distribution<double> normal;
  std::vector<float> q(64), k(64);
  for (float& v : q) v = static_cast<float>(normal(rng));
  for (float& v : k) v = static_cast<float>(normal(rng));
  const Backend& b = *std::find_if(backend_table().begin(), backend_table().end(),
                                   [](const Backend& x) { return x.probe().available; });
  const auto enc = b.make();
  svg::Chart c{fmt::format("RoPE score <R_m q, R_n k> against m - n ({} backend)", b.name),
               {"offset m - n", false},
               {"score", false},
               {}};
  int color = 0;
  for (const std::int64_t n : {0, 1000, 100000}) {
    svg::Series series{fmt::format("n = {}", n), kColors[color++], {}, {}, color > 1};
    for (std::int64_t d = -48; d <= 48; ++d) {
      std::vector<float> rq = q, rk = k;
      const std::int64_t m = n + d;
      enc->run(RopeApply{s, DType::f32, 1, std::span(&m, 1), rq});
      enc->run(RopeApply{s, DType::f32, 1, std::span(&n, 1), rk});
      double dot = 0;
      for (std::size_t i = 0; i < 64; ++i) dot += double{rq[i]} * rk[i];
      series.x.push_back(static_cast<double>(d));
      series.y.push_back(dot);
    }
    c.series.push_back(series);
  }
  return svg::line_chart(c);
}

std::string verdict_matrix(const VerifyRun& run) {
  std::vector<std::string> columns, rows;
  std::map<std::pair<std::string, std::string>, const PropertyResult*> cell;
  for (const auto& r : run.results) {
    const std::string col = r.encoder + " " + std::string(dtype_name(r.dtype));
    if (std::find(columns.begin(), columns.end(), col) == columns.end()) columns.push_back(col);
    if (std::find(rows.begin(), rows.end(), r.property) == rows.end()) rows.push_back(r.property);
    cell[{r.property, col}] = &r;
  }
  std::string html = "<table class=\"matrix\"><tr><th>property</th>";
  for (const auto& c : columns) html += "<th>" + svg::escape(c) + "</th>";
  html += "</tr>";
  for (const auto& p : rows) {
    html += "<tr><td class=\"prop\">" + svg::escape(p) + "</td>";
    for (const auto& c : columns) {
      const auto it = cell.find({p, c});
      if (it == cell.end()) {
        html += "<td class=\"na\"></td>";
        continue;
      }
      const PropertyResult& r = *it->second;
      const std::string v(verdict_name(r.verdict));
      const std::string text = r.verdict == Verdict::skip ? "skip" : fmt::format("{:.3g}", r.max_error_u);
      html += fmt::format(
          R"x(<td class="{}" title="{}">{}</td>)x", v,
          svg::escape(fmt::format("{}: max {:.4g} u, bound {:.4g} u. {}", v, r.max_error_u, r.bound_u, r.message)),
          svg::escape(text));
    }
    html += "</tr>";
  }
  return html + "</table>";
}

constexpr const char* kStyle = R"x(
body { font-family: sans-serif; margin: 24px; color: #222; max-width: 1400px; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 32px; }
table.matrix { border-collapse: collapse; font-size: 12px; }
table.matrix th, table.matrix td { border: 1px solid #ccc; padding: 2px 6px; text-align: right; }
table.matrix td.prop { text-align: left; font-family: monospace; }
td.pass { background: #d8f0d8; } td.fail { background: #f4b6b6; } td.crash { background: #f49b4a; }
td.skip { background: #eee; color: #888; } td.na { background: #fafafa; }
svg { margin: 8px 16px 8px 0; background: #fff; }
svg .title { font-size: 13px; font-weight: bold; } svg .tick, svg .legend { font-size: 11px; }
svg .label { font-size: 12px; } svg .grid { stroke: #e4e4e4; } svg .frame { fill: none; stroke: #888; }
)x";

}  // namespace

int report_html(VerifyOptions o, const std::string& path) {
  check_common_options(o);
  check_writable(path, "--html");
  const auto backends = select_backends(o.backend);
  const auto properties = select_properties(o.property);
  const auto dtypes = select_dtypes(o.dtype);
  // A plugin is probed before the run starts: a platform convention it declares is the run's.
  std::optional<plugin::Declaration> probed;
  if (!o.plugin.empty() && !(probed = probe_plugin(o))) return 3;
  VerifyRun run = start_run(o, "report");
  // What is drawn: pecheck's own backends, a plugin (its catalogue run and its profile), or dumps.
  std::vector<Profile> profiles;
  DumpSetReading dumps;
  std::vector<MeasuredCurve> curves;
  std::string subject = "pecheck's backends";
  if (probed) {
    const plugin::Declaration& d = *probed;
    const Backend b = plugin::as_backend(d);
    run.total = count_units({&b}, properties, dtypes, o);
    run_catalogue(b, properties, dtypes, o, run,
                  [&](const Property& p, DType dt) { return plugin_skip_reason(d, p, dt); });
    profiles = plugin_profiles(d, b, dtypes, o.timeout_s);
    for (const Profile& p : profiles)
      if (p.checked && p.op == Op::rope_apply)
        curves.push_back({p.dtype, d.name, kProfileRope, &p.checked->measurements.front()});
    subject = svg::escape(describe_plugin(d));
  } else if (!o.dump.empty()) {
    dumps = read_dump_set(o.dump, tol::Contract::exact);
    for (const auto& [dir, why] : dumps.unreadable) std::cerr << "pecheck: " << why << "\n";
    for (const Checked& c : dumps.checked) {
      for (const auto& m : c.measurements) run.results.push_back(as_result(c, m));
      if (c.dump.kind == dumpcheck::Kind::rope && c.spec)
        curves.push_back({c.dump.dtype, c.dump.dir, *c.spec, &c.measurements.front()});
    }
    subject = svg::escape(fmt::format("the dumps in {}", o.dump));
  } else {
    run.total = count_units(backends, properties, dtypes, o);
    for (const Backend* b : backends) run_catalogue(*b, properties, dtypes, o, run);
  }
  int failed = 0, crashed = 0;
  for (const auto& r : run.results) {
    failed += r.verdict == Verdict::fail || r.verdict == Verdict::crash;
    crashed += r.verdict == Verdict::crash;
  }

  std::string html =
      "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>pecheck report</title><style>";
  html += kStyle;
  html += "</style></head><body>";
  html += fmt::format(
      "<h1>pecheck report</h1><p>{}: seed {}, {} cases per property x encoder x dtype; {} results, {} "
      "failed or crashed. Cells show the worst measured error in units of the dtype's roundoff "
      "(hover for the bound).</p>",
      subject, run.seed, run.cases, run.results.size(), failed);
  html += "<h2>Verdicts</h2>" + verdict_matrix(run);
  html +=
      "<h2>RoPE error against position</h2><p>Worst pair error per octave of position against the 50-digit "
      "reference, every dtype; dashed: angles formed in fp32, as in the PyTorch tutorials.</p>";
  html += o.plugin.empty() && o.dump.empty() ? accuracy_charts() : measured_charts(curves);
  html += "<h2>The sinusoidal table and its Gram matrix</h2>" + sinusoid_pictures();
  html += "<h2>RoPE: only the offset matters</h2>" + rope_offset_chart();
  html += "</body></html>\n";

  write_file_atomically(path, html, "--html");
  std::cout << fmt::format("wrote {} ({} results, {} failed or crashed)\n", path, run.results.size(), failed);
  if (crashed) return 3;
  return failed ? 1 : 0;
}

}  // namespace pecheck::cli
