// Inline SVG for `pecheck report --html`: line charts on linear or log axes, and heatmaps. Plain
// strings, no scripts, no fonts or files from the network: the page must render offline.
#pragma once

#include <string>
#include <vector>

namespace pecheck::svg {

struct Series {
  std::string label;
  std::string color;         ///< any CSS color
  std::vector<double> x, y;  ///< points; non-finite or (on a log axis) non-positive ones are dropped
  bool dashed = false;
};

struct Axis {
  std::string label;
  bool log = false;
};

struct Chart {
  std::string title;
  Axis x, y;
  std::vector<Series> series;
  int width = 640, height = 360;
};

/// A line chart with ticks (decades on log axes), grid, axis labels and a legend.
std::string line_chart(const Chart& chart);

/// A heatmap of values[row][col] on a diverging blue-white-red scale over [lo, hi].
std::string heatmap(const std::string& title, const std::vector<std::vector<double>>& values, double lo, double hi,
                    const std::string& row_label, const std::string& col_label, int cell = 5);

/// Escapes text for HTML and SVG.
std::string escape(const std::string& text);

}  // namespace pecheck::svg
