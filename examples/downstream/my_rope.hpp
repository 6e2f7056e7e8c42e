// The project's own kernel: rotary position embedding in place on x[tokens][heads][head_dim]
// (fp32), token t at position pos[t], pair p turned by pos * inv_freq[p] (inv_freq computed by the
// caller, as model code does for every scaling rule), scaled by `magnitude` (YaRN). Interleaved
// pairs (2p, 2p+1) or NeoX halves (p, p + rotary_dim/2); dims past rotary_dim stay as they are.
// Knows nothing of pecheck.
#pragma once

#include <cstddef>
#include <cstdint>

namespace my {

struct RopeArgs {
  int heads = 1, head_dim = 64, rotary_dim = 64;
  bool neox = false;
  const double* inv_freq = nullptr;  // rotary_dim / 2 entries
  double magnitude = 1;
};

void rope(float* x, const std::int64_t* pos, std::size_t tokens, const RopeArgs& a);

}  // namespace my
