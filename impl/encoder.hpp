// The one "encoder under test" interface: pecheck's own backends, the reference instantiated
// with double, plugins and dumps are all checked through it.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "spec/conventions.hpp"
#include "spec/conventions_2d.hpp"
#include "spec/dtype.hpp"

namespace pecheck {

/// The operations an encoder may offer.
enum class Op {
  sinusoidal_table,
  learned_add,
  rope_apply,
  alibi_bias,
  shaw_scores,
  t5_bias,
  attention,
  sinusoidal2d_table,
  rope2d_apply,
};

std::string_view op_name(Op op);

/// Whether an encoder offers an operation in a dtype; the reason when it does not.
struct Support {
  bool ok = true;
  std::string reason;
};

/// Thrown by an operation the encoder does not offer: a skip, never a failure.
struct Unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// An encoder under test. Tensors are dense row-major float buffers whose values belong to the
/// storage dtype (a bf16 value is carried exactly by a float); outputs must be values of the
/// dtype too. Shapes follow from the spec and positions.size(); a wrong size or invalid spec
/// throws std::invalid_argument, a learned position outside the table std::out_of_range.
class Encoder {
 public:
  virtual ~Encoder() = default;
  virtual std::string name() const = 0;
  virtual Support supports(Op op, DType dtype) const = 0;

  /// out (positions, d_model) = PE(positions).
  virtual void sinusoidal_table(const SinusoidalSpec&, DType, std::span<const std::int64_t> positions,
                                std::span<float> out);
  /// x (positions, d_model) += table[positions] with table (max_len, d_model).
  virtual void learned_add(const LearnedSpec&, DType, std::span<const float> table,
                           std::span<const std::int64_t> positions, std::span<float> x);
  /// x (positions, heads, head_dim) rotated in place, token t to positions[t].
  virtual void rope_apply(const RopeSpec&, DType, int heads, std::span<const std::int64_t> positions,
                          std::span<float> x);
  /// out (heads, n, n) = ALiBi bias for positions (n), -inf where causally masked.
  virtual void alibi_bias(const AlibiSpec&, DType, std::span<const std::int64_t> positions, std::span<float> out);
  /// out (n, n) = q_i.k_j + q_i.r[clamp(p_j-p_i)]; q, k (n, head_dim), table (2K+1, head_dim).
  virtual void shaw_scores(const ShawSpec&, DType, std::span<const float> q, std::span<const float> k,
                           std::span<const float> table, std::span<const std::int64_t> positions, std::span<float> out);
  /// out (heads, n, n) = table[bucket(p_j - p_i), h] with table (num_buckets, heads).
  virtual void t5_bias(const T5Spec&, DType, std::span<const float> table, std::span<const std::int64_t> positions,
                       std::span<float> out);
  /// out (n, d_model) = PE2d(rows[t], cols[t]); rows and cols of equal length n.
  virtual void sinusoidal2d_table(const Sinusoidal2dSpec&, DType, std::span<const std::int64_t> rows,
                                  std::span<const std::int64_t> cols, std::span<float> out);
  /// x (n, heads, head_dim) rotated in place by axial RoPE, token t to (rows[t], cols[t]).
  virtual void rope2d_apply(const AxialRopeSpec&, DType, int heads, std::span<const std::int64_t> rows,
                            std::span<const std::int64_t> cols, std::span<float> x);
  /// out = attention(q, k, v) with its PE; all (n, heads, head_dim); shaw_table (2K+1, head_dim)
  /// is read only when spec.pe == shaw.
  virtual void attention(const AttentionSpec&, DType, std::span<const std::int64_t> positions, std::span<const float> q,
                         std::span<const float> k, std::span<const float> v, std::span<const float> shaw_table,
                         std::span<float> out);
};

/// Throws std::invalid_argument naming the tensor when its size is not the expected one.
void require_size(std::string_view tensor, std::size_t got, std::size_t expected);

/// Checks every shape of a call against its spec (shared by all backends).
namespace shapes {
void sinusoidal(const SinusoidalSpec&, std::size_t n, std::size_t out);
void learned(const LearnedSpec&, std::size_t table, std::size_t n, std::size_t x);
void rope(const RopeSpec&, int heads, std::size_t n, std::size_t x);
void alibi(const AlibiSpec&, std::size_t n, std::size_t out);
void sinusoidal2d(const Sinusoidal2dSpec&, std::size_t rows, std::size_t cols, std::size_t out);
void rope2d(const AxialRopeSpec&, int heads, std::size_t rows, std::size_t cols, std::size_t x);
void t5(const T5Spec&, std::size_t table, std::size_t n, std::size_t out);
void shaw(const ShawSpec&, std::size_t q, std::size_t k, std::size_t table, std::size_t n, std::size_t out);
void attention(const AttentionSpec&, std::size_t n, std::size_t q, std::size_t k, std::size_t v, std::size_t table,
               std::size_t out);
}  // namespace shapes

}  // namespace pecheck
