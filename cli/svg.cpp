#include "cli/svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace pecheck::svg {

namespace {

constexpr int kLeft = 70, kRight = 170, kTop = 30, kBottom = 45;  // margins; the legend sits right

struct Scale {
  double lo, hi;
  bool log;
  int from, to;  // pixels
  double operator()(double v) const {
    const double a = log ? std::log10(lo) : lo, b = log ? std::log10(hi) : hi, t = log ? std::log10(v) : v;
    return from + (t - a) / (b - a) * (to - from);
  }
};

bool usable(double v, bool log) { return std::isfinite(v) && (!log || v > 0); }

/// The data range of one axis, widened to whole decades (log) or padded by 5% (linear).
std::pair<double, double> range(const Chart& c, bool is_x) {
  const bool log = is_x ? c.x.log : c.y.log;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const Series& s : c.series)
    for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if (!usable(s.x[i], c.x.log) || !usable(s.y[i], c.y.log)) continue;
      const double v = is_x ? s.x[i] : s.y[i];
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  if (!(lo <= hi)) return {log ? 1.0 : 0.0, log ? 10.0 : 1.0};
  if (log) return {std::pow(10, std::floor(std::log10(lo))), std::pow(10, std::ceil(std::log10(hi) + 1e-12))};
  const double pad = hi > lo ? 0.05 * (hi - lo) : 1;
  return {lo - pad, hi + pad};
}

std::vector<double> ticks(double lo, double hi, bool log) {
  std::vector<double> t;
  if (log) {
    const int step = std::max(1, static_cast<int>(std::ceil((std::log10(hi) - std::log10(lo)) / 8)));
    for (double e = std::log10(lo); e <= std::log10(hi) + 1e-9; e += step) t.push_back(std::pow(10, e));
    return t;
  }
  const double raw = (hi - lo) / 6, mag = std::pow(10, std::floor(std::log10(raw)));
  const double step = raw / mag < 2 ? 2 * mag : raw / mag < 5 ? 5 * mag : 10 * mag;
  for (double v = std::ceil(lo / step) * step; v <= hi; v += step) t.push_back(std::abs(v) < 1e-12 * step ? 0 : v);
  return t;
}

std::string tick_label(double v, bool log) {
  if (log) return fmt::format("1e{}", static_cast<int>(std::lround(std::log10(v))));
  return fmt::format("{:g}", v);
}

}  // namespace

std::string escape(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

std::string line_chart(const Chart& c) {
  const auto [x_lo, x_hi] = range(c, true);
  const auto [y_lo, y_hi] = range(c, false);
  const Scale sx{x_lo, x_hi, c.x.log, kLeft, c.width - kRight}, sy{y_lo, y_hi, c.y.log, c.height - kBottom, kTop};
  std::string out =
      fmt::format(R"x(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" class="chart" role="img">)x"
                  R"x(<text x="{}" y="18" class="title">{}</text>)x",
                  c.width, c.height, kLeft, escape(c.title));
  for (const double t : ticks(x_lo, x_hi, c.x.log))
    out += fmt::format(R"x(<line x1="{0:.1f}" x2="{0:.1f}" y1="{1}" y2="{2}" class="grid"/>)x"
                       R"x(<text x="{0:.1f}" y="{3}" class="tick" text-anchor="middle">{4}</text>)x",
                       sx(t), kTop, c.height - kBottom, c.height - kBottom + 15, tick_label(t, c.x.log));
  for (const double t : ticks(y_lo, y_hi, c.y.log))
    out += fmt::format(R"x(<line x1="{0}" x2="{1}" y1="{2:.1f}" y2="{2:.1f}" class="grid"/>)x"
                       R"x(<text x="{3}" y="{4:.1f}" class="tick" text-anchor="end">{5}</text>)x",
                       kLeft, c.width - kRight, sy(t), kLeft - 5, sy(t) + 4, tick_label(t, c.y.log));
  out += fmt::format(R"x(<rect x="{}" y="{}" width="{}" height="{}" class="frame"/>)x", kLeft, kTop,
                     c.width - kLeft - kRight, c.height - kTop - kBottom);
  out += fmt::format(R"x(<text x="{}" y="{}" class="label" text-anchor="middle">{}</text>)x",
                     (kLeft + c.width - kRight) / 2, c.height - 8, escape(c.x.label));
  out +=
      fmt::format(R"x(<text x="14" y="{}" class="label" text-anchor="middle" transform="rotate(-90 14 {})">{}</text>)x",
                  (kTop + c.height - kBottom) / 2, (kTop + c.height - kBottom) / 2, escape(c.y.label));
  int row = 0;
  for (const Series& s : c.series) {
    std::string points;
    for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i)
      if (usable(s.x[i], c.x.log) && usable(s.y[i], c.y.log))
        points += fmt::format("{:.1f},{:.1f} ", sx(s.x[i]), sy(s.y[i]));
    out += fmt::format(R"x(<polyline points="{}" fill="none" stroke="{}" stroke-width="2"{}/>)x", points, s.color,
                       s.dashed ? R"x( stroke-dasharray="6 4")x" : "");
    const int ly = kTop + 10 + 18 * row++;
    out += fmt::format(R"x(<line x1="{}" x2="{}" y1="{}" y2="{}" stroke="{}" stroke-width="2"{}/>)x"
                       R"x(<text x="{}" y="{}" class="legend">{}</text>)x",
                       c.width - kRight + 10, c.width - kRight + 30, ly, ly, s.color,
                       s.dashed ? R"x( stroke-dasharray="6 4")x" : "", c.width - kRight + 35, ly + 4, escape(s.label));
  }
  return out + "</svg>";
}

std::string heatmap(const std::string& title, const std::vector<std::vector<double>>& values, double lo, double hi,
                    const std::string& row_label, const std::string& col_label, int cell) {
  const int rows = static_cast<int>(values.size()), cols = rows ? static_cast<int>(values[0].size()) : 0;
  const int left = 40, top = 30, w = left + cols * cell + 10, h = top + rows * cell + 30;
  std::string out =
      fmt::format(R"x(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" class="heatmap" role="img">)x"
                  R"x(<text x="{}" y="18" class="title">{}</text>)x",
                  w, h, left, escape(title));
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const double t =
          std::clamp((values[static_cast<std::size_t>(r)][static_cast<std::size_t>(c)] - lo) / (hi - lo), 0.0, 1.0);
      // blue (t = 0) - white (0.5) - red (1)
      const int red = t < 0.5 ? static_cast<int>(255 * 2 * t) : 255,
                blue = t > 0.5 ? static_cast<int>(255 * 2 * (1 - t)) : 255;
      const int green = t < 0.5 ? static_cast<int>(255 * 2 * t) : static_cast<int>(255 * 2 * (1 - t));
      out += fmt::format(R"x(<rect x="{}" y="{}" width="{}" height="{}" fill="rgb({},{},{})"/>)x", left + c * cell,
                         top + r * cell, cell, cell, red, green, blue);
    }
  out += fmt::format(R"x(<text x="{}" y="{}" class="label" text-anchor="middle">{}</text>)x", left + cols * cell / 2,
                     top + rows * cell + 18, escape(col_label));
  out += fmt::format(
      R"x(<text x="14" y="{0}" class="label" text-anchor="middle" transform="rotate(-90 14 {0})">{1}</text>)x",
      top + rows * cell / 2, escape(row_label));
  return out + "</svg>";
}

}  // namespace pecheck::svg
