// Scalar 2-D encodings, from the 1-D kernels: a sinusoid per axis, 2-D RoPE per half-head.
#include <algorithm>
#include <vector>

#include "impl/rope2d_by_halves.hpp"
#include "impl/scalar/kernels.hpp"
#include "interface/encoder.hpp"
#include "interface/operations.hpp"

namespace pecheck::scalar {

void sinusoidal2d_table(const Sinusoidal2dSpec& s, DType dt, std::span<const std::int64_t> rows,
                        std::span<const std::int64_t> cols, std::span<float> out) {
  Sinusoidal2dTable{s, dt, rows, cols, out}.check();
  const std::size_t n = rows.size(), d = static_cast<std::size_t>(s.d_model), half = d / 2;
  std::vector<float> r(n * half), c(n * half);
  sinusoidal_table(s.axis(), dt, rows, r);
  sinusoidal_table(s.axis(), dt, cols, c);
  for (std::size_t t = 0; t < n; ++t) {
    std::copy_n(r.begin() + static_cast<std::ptrdiff_t>(t * half), half,
                out.begin() + static_cast<std::ptrdiff_t>(t * d));
    std::copy_n(c.begin() + static_cast<std::ptrdiff_t>(t * half), half,
                out.begin() + static_cast<std::ptrdiff_t>(t * d + half));
  }
}

void rope2d_apply(const Rope2dSpec& s, DType dt, int heads, std::span<const std::int64_t> rows,
                  std::span<const std::int64_t> cols, std::span<float> x) {
  Rope2dApply{s, dt, heads, rows, cols, x}.check();
  // Each half-head is a head of the 1-D RoPE of width d/2 at its axis's positions and frequencies.
  rope2d_as_two_ropes(s, dt, heads, rows, cols, x,
                      [](const RopeApply& c) { rope_apply(c.spec, c.dtype, c.heads, c.positions, c.x); });
}

}  // namespace pecheck::scalar
