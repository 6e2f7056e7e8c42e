#include "my_rope.hpp"

#include <cmath>

namespace my {

void rope(float* x, const std::int64_t* pos, std::size_t tokens, const RopeArgs& a) {
  const int pairs = a.rotary_dim / 2;
  for (std::size_t t = 0; t < tokens; ++t)
    for (int h = 0; h < a.heads; ++h) {
      float* v = x + (t * static_cast<std::size_t>(a.heads) + static_cast<std::size_t>(h)) *
                         static_cast<std::size_t>(a.head_dim);
      for (int p = 0; p < pairs; ++p) {
#ifdef MY_ROPE_FP32_ANGLES  // the tutorials' float angle: thousands of ulps wrong past position 4096
        const double angle = static_cast<float>(pos[t]) * static_cast<float>(a.inv_freq[p]);
#else
        const double angle = static_cast<double>(pos[t]) * a.inv_freq[p];
#endif
        const double c = a.magnitude * std::cos(angle), s = a.magnitude * std::sin(angle);
        float& x1 = v[a.neox ? p : 2 * p];
        float& x2 = v[a.neox ? p + pairs : 2 * p + 1];
        const double y1 = x1 * c - x2 * s, y2 = x2 * c + x1 * s;
        x1 = static_cast<float>(y1);
        x2 = static_cast<float>(y2);
      }
    }
}

}  // namespace my
