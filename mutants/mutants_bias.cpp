// Mutants of position tables and score biases: positions carried in fp16, T5's buckets.
#include <algorithm>
#include <cmath>
#include <vector>

#include "mutants/forwarding_encoder.hpp"
#include "mutants/mutants.hpp"

namespace pecheck::mutants {

namespace {

/// candle PR 1312: the log-spaced bucket max_exact + log(n/max_exact)/log(max_distance/max_exact)
/// * (half - max_exact) without HF's min(..., half - 1), so distances past max_distance run into
/// the other direction's buckets (or past the table, read here as its last row).
struct T5NoClamp : Forwarding {
  using Forwarding::run;
  T5NoClamp() : Forwarding("mutant-t5-no-clamp") {}
  void run(const T5Bias& c) override {
    const auto& [s, dt, table, positions, out] = c;
    const std::size_t n = positions.size(), H = static_cast<std::size_t>(s.heads);
    c.check();
    const int half = s.half(), me = s.max_exact();
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        const std::int64_t rel = positions[j] - positions[i];
        const int offset = s.bidirectional && rel > 0 ? half : 0;
        const std::int64_t dist = s.bidirectional ? std::abs(rel) : std::max<std::int64_t>(-rel, 0);
        int b = offset + static_cast<int>(dist);
        if (dist >= me)
          b = offset + me +
              static_cast<int>(std::floor((half - me) * std::log(static_cast<double>(dist) / me) /
                                          std::log(static_cast<double>(s.max_distance) / me)));
        const auto row = static_cast<std::size_t>(std::min(b, s.num_buckets - 1));
        for (std::size_t h = 0; h < H; ++h) out[(h * n + i) * n + j] = round_to(dt, table[row * H + h]);
      }
  }
};

/// Megatron-LM issue 535: the position ids become fp16 with the model (seq.type_as(inv_freq)), so
/// above 2048 neighbouring positions round to the same value and their rows collide.
struct SinusoidalFp16Positions : Forwarding {
  SinusoidalFp16Positions() : Forwarding("mutant-sinusoidal-fp16-positions") {}
  void run(const SinusoidalTable& c) override {
    const auto& [s, dt, p, o] = c;
    std::vector<std::int64_t> rounded(p.begin(), p.end());
    for (auto& q : rounded) q = static_cast<std::int64_t>(round_to(DType::f16, static_cast<double>(q)));
    inner_->run(SinusoidalTable{s, dt, rounded, o});
  }
};

}  // namespace

std::vector<Mutant> bias_mutants() {
  return {
      {"sinusoid of positions rounded to fp16",
       "Megatron-LM issue 535: positions cast to fp16 with the model; rows above 2048 collide",
       "sinusoidal.injectivity", make_mutant<SinusoidalFp16Positions>},
      {"T5 bucket without the clamp", "candle PR 1312: no min(..., num_buckets - 1) on the log-spaced bucket",
       "t5.bucket_laws", make_mutant<T5NoClamp>},
  };
}

}  // namespace pecheck::mutants
