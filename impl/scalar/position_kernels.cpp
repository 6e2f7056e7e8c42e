// Scalar sinusoidal table, learned add, RoPE and M-RoPE.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <stdexcept>

#include "impl/angles.hpp"
#include "impl/rope_frequencies.hpp"
#include "impl/scalar/kernels.hpp"
#include "interface/encoder.hpp"
#include "interface/operations.hpp"

namespace pecheck::scalar {

namespace {
std::size_t to_size(int x) { return static_cast<std::size_t>(x); }
}  // namespace

void sinusoidal_table(const SinusoidalSpec& s, DType dt, std::span<const std::int64_t> positions,
                      std::span<float> out) {
  SinusoidalTable{s, dt, positions, out}.check();
  const std::size_t d = to_size(s.d_model), half = d / 2;
  std::vector<angles::Frequency> freqs(half);  // base^(-2i/w), w = d (or d - 2 for fairseq)
  for (std::size_t i = 0; i < half; ++i) freqs[i] = angles::frequency(static_cast<int>(i), s.frequency_width(), s.base);
  for (std::size_t t = 0; t < positions.size(); ++t) {
    float* row = out.data() + t * d;
    if (s.is_padding(positions[t])) {
      std::fill(row, row + d, 0.0f);
      continue;
    }
    for (std::size_t i = 0; i < half; ++i) {
      const auto sc = angles::sincos(positions[t], freqs[i]);
      const bool inter = s.layout == SinusoidalLayout::interleaved;
      row[inter ? 2 * i : i] = round_to(dt, sc.s);
      row[inter ? 2 * i + 1 : half + i] = round_to(dt, sc.c);
    }
  }
}

void learned_add(const LearnedSpec& s, DType dt, std::span<const float> table, std::span<const std::int64_t> positions,
                 std::span<float> x) {
  LearnedAdd{s, dt, table, positions, x}.check();
  const std::size_t d = to_size(s.d_model);
  for (const std::int64_t p : positions)  // all checked before any write: nothing half-done on error
    if (p < 0 || p >= s.max_len)
      throw std::out_of_range(fmt::format("learned position {} is outside the table [0, {})", p, s.max_len));
  for (std::size_t t = 0; t < positions.size(); ++t) {
    const std::int64_t p = positions[t];
    const float* e = table.data() + static_cast<std::size_t>(p) * d;
    for (std::size_t c = 0; c < d; ++c) x[t * d + c] = round_to(dt, double{x[t * d + c]} + e[c]);
  }
}

namespace {
/// RoPE with pair p of token t turned by the position pos(t, p): 1-D RoPE has one position a
/// token, M-RoPE one an axis. The cos/sin of a token are computed once and shared by its heads.
template <class PositionOf>
void rotate_pairs(const RopeSpec& s, DType dt, int heads, std::size_t tokens, std::span<float> x, PositionOf pos) {
  const auto freqs = angles::rope_frequencies(s);
  const double m = s.magnitude();  // YaRN's attention factor, folded into cos and sin as in HF
  const std::size_t pairs = freqs.size(), hd = to_size(s.head_dim);
  std::vector<angles::SinCos> cache(pairs);
  for (std::size_t t = 0; t < tokens; ++t) {
    for (std::size_t p = 0; p < pairs; ++p) {
      const auto sc = angles::sincos(pos(t, p), freqs[p]);
      cache[p] = {m * sc.s, m * sc.c};
    }
    for (std::size_t h = 0; h < to_size(heads); ++h) {
      float* head = x.data() + (t * to_size(heads) + h) * hd;
      for (std::size_t p = 0; p < pairs; ++p) {
        const std::size_t a = s.layout == RopeLayout::interleaved ? 2 * p : p;
        const std::size_t b = s.layout == RopeLayout::interleaved ? 2 * p + 1 : p + pairs;
        const double x1 = head[a], x2 = head[b];
        head[a] = round_to(dt, x1 * cache[p].c - x2 * cache[p].s);
        head[b] = round_to(dt, x2 * cache[p].c + x1 * cache[p].s);
      }
    }
  }
}
}  // namespace

void rope_apply(const RopeSpec& s, DType dt, int heads, std::span<const std::int64_t> positions, std::span<float> x) {
  RopeApply{s, dt, heads, positions, x}.check();
  rotate_pairs(s, dt, heads, positions.size(), x, [&](std::size_t t, std::size_t) { return positions[t]; });
}

void mrope_apply(const MropeSpec& s, DType dt, int heads, std::span<const std::int64_t> temporal,
                 std::span<const std::int64_t> height, std::span<const std::int64_t> width, std::span<float> x) {
  MropeApply{s, dt, heads, temporal, height, width, x}.check();
  const std::array<std::span<const std::int64_t>, 3> axes{temporal, height, width};
  rotate_pairs(s.rope(), dt, heads, temporal.size(), x, [&](std::size_t t, std::size_t p) {
    return axes[static_cast<std::size_t>(mrope_axis(s, static_cast<int>(p)))][t];
  });
}

}  // namespace pecheck::scalar
