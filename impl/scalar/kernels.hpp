// The portable scalar kernels: fp32 arithmetic for the data, accurate double angles, results
// rounded once to the storage dtype. The baseline every optimized backend is measured against.
#pragma once

#include <cstdint>
#include <span>

#include "spec/conventions.hpp"
#include "spec/conventions_2d.hpp"
#include "spec/dtype.hpp"
#include "spec/mrope.hpp"

namespace pecheck::scalar {

void sinusoidal_table(const SinusoidalSpec&, DType, std::span<const std::int64_t> positions, std::span<float> out);
void learned_add(const LearnedSpec&, DType, std::span<const float> table, std::span<const std::int64_t> positions,
                 std::span<float> x);
void rope_apply(const RopeSpec&, DType, int heads, std::span<const std::int64_t> positions, std::span<float> x);
/// M-RoPE: pair p of token t turned by the position of p's axis (spec/mrope.hpp).
void mrope_apply(const MropeSpec&, DType, int heads, std::span<const std::int64_t> temporal,
                 std::span<const std::int64_t> height, std::span<const std::int64_t> width, std::span<float> x);
void alibi_bias(const AlibiSpec&, DType, std::span<const std::int64_t> positions, std::span<float> out);
void shaw_scores(const ShawSpec&, DType, std::span<const float> q, std::span<const float> k,
                 std::span<const float> table, std::span<const std::int64_t> positions, std::span<float> out);
void t5_bias(const T5Spec&, DType, std::span<const float> table, std::span<const std::int64_t> positions,
             std::span<float> out);
/// The 2-D relative bias (Swin, BEiT): a read of the table at each pair of patches' offset.
void relative_bias_2d(const RelativeBias2dSpec&, DType, std::span<const float> table,
                      std::span<const std::int64_t> rows, std::span<const std::int64_t> cols, std::span<float> out);
void sinusoidal2d_table(const Sinusoidal2dSpec&, DType, std::span<const std::int64_t> rows,
                        std::span<const std::int64_t> cols, std::span<float> out);
void rope2d_apply(const Rope2dSpec&, DType, int heads, std::span<const std::int64_t> rows,
                  std::span<const std::int64_t> cols, std::span<float> x);
void attention(const AttentionSpec&, DType, std::span<const std::int64_t> positions, std::span<const float> q,
               std::span<const float> k, std::span<const float> v, std::span<const float> pe_table,
               std::span<float> out);

}  // namespace pecheck::scalar
