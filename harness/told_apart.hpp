// Two measurements printed side by side (an error and its bound): at the fewest significant digits,
// four at least, that tell them apart, so that an excess four digits would round away reads
// "error 2.00002 u exceeds the bound 2 u", not "2 u exceeds the bound 2 u".
#pragma once

#include <fmt/format.h>

#include <string>
#include <utility>

namespace pecheck {

inline std::pair<std::string, std::string> told_apart(double a, double b) {
  for (int digits = 4; digits < 17; ++digits) {
    std::string sa = fmt::format("{:.{}g}", a, digits), sb = fmt::format("{:.{}g}", b, digits);
    if (sa != sb) return {sa, sb};
  }
  return {fmt::format("{:.17g}", a), fmt::format("{:.17g}", b)};
}

}  // namespace pecheck
