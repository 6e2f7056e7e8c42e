// Our own RapidCheck generators, aimed at the edges on purpose: position 0 and positions up to
// 2^24 - 1, tiny and odd sizes, head dims that are not multiples of 8 or 16, the bases real
// models use. Tensor contents come from a 32-bit data seed, so a counterexample shrinks its
// meaningful parts (sizes, positions, base) and still names its data exactly.
#pragma once

#include <rapidcheck.h>

#include <cstdint>
#include <string>
#include <vector>

#include "harness/flush_to_zero.hpp"
#include "spec/conventions.hpp"
#include "spec/dtype.hpp"

namespace pecheck::gen {

/// 0, or uniform below 64, 8192, 2^20 or 2^24, or exactly 2^24 - 1: fp32 angles break past
/// ~4096, so most draws lie beyond it. While a PositionCeiling lives, every band is cut at half
/// the ceiling instead (so a sum of two drawn positions stays within it).
rc::Gen<std::int64_t> position();

/// The largest position an encoder takes now: 2^24 - 1, or a PositionCeiling's while it lives. A
/// check that forms a far position of its own (rope.stateless's other calls) stays within it.
std::int64_t position_ceiling();

/// Lowers the positions position() draws, for an encoder that takes no position above `max` (a
/// Python function that builds a table of max + 1 rows): while it lives on this thread, each
/// drawn position lies below (max + 1) / 2. Generators built and run within its scope see it.
class PositionCeiling {
 public:
  explicit PositionCeiling(std::int64_t max);
  ~PositionCeiling();
  PositionCeiling(const PositionCeiling&) = delete;
  PositionCeiling& operator=(const PositionCeiling&) = delete;

 private:
  std::int64_t saved_;
};

/// While a FlushSubnormals (harness/flush_to_zero.hpp) lives on this thread, values() and
/// edge_values() draw no value below fp32's least normal (FLT_MIN): each becomes a zero of its
/// sign, as such a platform reads it. Above FLT_MIN nothing changes, so f16's subnormals (normal
/// in the fp32 such a platform computes in) are still drawn, and every law is judged as before.

/// A drawn position clamped to at most `limit` (so that p + headroom stays below 2^24).
rc::Gen<std::int64_t> position_below(std::int64_t limit);
/// A shift t != 0 that keeps every one of `shifted` within [0, 2^24 - 1] after adding it: the
/// drawn t clamped to [1, room above the largest]; where there is no room, -t clamped to [1, the
/// smallest] (a shift down). Positions that span the whole range (0 and 2^24 - 1) leave neither,
/// so the largest of them is first moved down by one. A shift of 0 would compare a call with
/// itself: a case that cannot fail.
std::int64_t nonzero_shift(std::vector<std::int64_t*> shifted, std::int64_t t);
/// n positions, each drawn by position() (compiled once: a container generator's shrinking
/// instantiates much of RapidCheck).
rc::Gen<std::vector<std::int64_t>> positions(std::size_t n);
/// 1e4, 5e5, 1e6 mostly; sometimes any base in [2, 1e7].
rc::Gen<double> base();
/// An even dimension in [2, max]: tiny (2..6), typical (64, 128, 256), or 2 x odd (not a
/// multiple of 4, so never of 8 or 16), or any even value.
rc::Gen<int> even_dim(int max);
rc::Gen<SinusoidalLayout> sinusoidal_layout();
rc::Gen<RopeLayout> rope_layout();
/// A scaling rule for a rotary_dim: none half the time, else linear, NTK, dynamic NTK, YaRN or
/// Llama 3 with factors 1..64, the original contexts real models use or any, HF's default betas and
/// frequency factors mostly; dynamic NTK's seq_len below, at and past the original context.
rc::Gen<RopeScaling> rope_scaling(int rotary_dim);
/// Fills LongRoPE's short and long per-pair factors (rotary_dim / 2 each) from `seed`, shaped
/// like Phi-3's: short ones near 1, long ones from about 1 on the fast pairs to about 2 s.
void longrope_lists(RopeScaling& s, int rotary_dim, std::uint32_t seed);
/// A RoPE spec: head_dim even <= max_dim, rotary_dim = head_dim, half of it, or any even value;
/// scaled (rope_scaling) unless `scaled` is false.
rc::Gen<RopeSpec> rope_spec(int max_dim, bool scaled = true);
rc::Gen<std::uint32_t> data_seed();

/// n values in [-scale, scale], rounded to the dtype, from a data seed (salt separates tensors
/// of one case). Never all zero.
std::vector<float> values(std::uint32_t seed, std::uint32_t salt, std::size_t n, DType dt, double scale = 1.0);
/// As values(), but half the tensors (by the seed) carry what real activations do: zeros, -0.0,
/// subnormals of the dtype and magnitudes down to 2^-24 among the values, and, when `row` > 0 and
/// the tensor holds two rows or more, one row of `row` values (a padding token or head vector)
/// all zero. Within [-1, 1]: values near the dtype's largest finite are not drawn (a rotation
/// or a sum of them may overflow, which the bounds do not cover). Never all zero.
std::vector<float> edge_values(std::uint32_t seed, std::uint32_t salt, std::size_t n, DType dt, std::size_t row = 0);

/// Tags for RC_TAG: which edge region a position falls in.
std::string position_class(std::int64_t pos);
/// "d%8!=0" style tag for a dimension.
std::string dim_class(int d);

}  // namespace pecheck::gen
