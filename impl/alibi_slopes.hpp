// ALiBi head slopes in double (shared by every backend): 2^(-8k/P) for the first P heads, P the
// largest power of two <= H, then the odd powers 2^(-4k/P), k = 1, 3, 5, ... (the paper's rule).
#pragma once

#include <cmath>

namespace pecheck::alibi {

inline double slope(int head, int heads) {
  int p = 1;
  while (2 * p <= heads) p *= 2;
  if (head < p) return std::exp2(-8.0 * (head + 1) / p);
  return std::exp2(-4.0 * (2 * (head - p) + 1) / p);
}

}  // namespace pecheck::alibi
