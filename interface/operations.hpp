// The operation table: every operation an encoder under test may offer, each one call type that
// carries its spec, its dtype and its tensors. `Operations` lists them; the Encoder interface
// (interface/encoder.hpp) has one pure virtual run() per entry, so an operation added here makes
// every encoder that neither implements nor explicitly declines it fail to compile.
//
// Tensors are dense row-major float buffers whose values belong to the storage dtype (a bf16 value
// is carried exactly by a float); outputs must be values of the dtype too. Each call type
// declares its tensors once, in tensors(): name, role (input, output, in place) and shape from the
// spec and the positions. check() holds the call to that declaration and the Python bridge and the
// plugin host marshal by it, so no layer restates a call's shape. check() throws
// std::invalid_argument naming the tensor or spec field that is wrong. A learned position outside
// the table is std::out_of_range.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "spec/conventions.hpp"
#include "spec/conventions_2d.hpp"
#include "spec/dtype.hpp"
#include "spec/mrope.hpp"

namespace pecheck {

/// The operations, in the order of `Operations` below (static_asserts keep the two in step).
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
  mrope_apply,
  relative_bias_2d,
};

/// How a call uses one of its tensors.
enum class Role { input, output, in_place };

/// One tensor of a call as its operation declares it: the name every layer gives it (the Python
/// keyword of docs/python.md, the plugin's buffer, the error message), how the call uses it, its
/// shape (outermost first) and its data. tensors() lists them in the order docs/python.md's
/// fn(...) takes them. A positions tensor holds int64s; every other one floats
/// of the call's dtype.
struct TensorArg {
  std::string_view name;
  Role role = Role::input;
  std::vector<std::size_t> shape;
  std::span<const float> values;            ///< an input's values, or an in-place tensor's before the call
  std::span<float> result;                  ///< where an output's or an in-place tensor's values go
  std::span<const std::int64_t> positions;  ///< a positions tensor's (then values and result are empty)
  bool holds_positions = false;

  std::size_t elements() const;  ///< the product of the shape
  std::size_t given() const;     ///< the elements the call's span holds
};

/// The tensor of `tensors` named `name`; std::logic_error when the declaration has none.
const TensorArg& tensor_named(const std::vector<TensorArg>& tensors, std::string_view name);

/// out (positions, d_model) = PE(positions).
struct SinusoidalTable {
  static constexpr Op op = Op::sinusoidal_table;
  SinusoidalSpec spec;
  DType dtype;
  std::span<const std::int64_t> positions;
  std::span<float> out;
  void check() const;
  std::vector<TensorArg> tensors() const;
};

/// x (positions, d_model) += table[positions] with table (max_len, d_model).
struct LearnedAdd {
  static constexpr Op op = Op::learned_add;
  LearnedSpec spec;
  DType dtype;
  std::span<const float> table;
  std::span<const std::int64_t> positions;
  std::span<float> x;
  void check() const;
  std::vector<TensorArg> tensors() const;
};

/// x (positions, heads, head_dim) rotated in place, token t to positions[t].
struct RopeApply {
  static constexpr Op op = Op::rope_apply;
  RopeSpec spec;
  DType dtype;
  int heads;
  std::span<const std::int64_t> positions;
  std::span<float> x;
  void check() const;
  std::vector<TensorArg> tensors() const;
};

/// out (heads, n, n) = ALiBi bias for positions (n), -inf where causally masked.
struct AlibiBias {
  static constexpr Op op = Op::alibi_bias;
  AlibiSpec spec;
  DType dtype;
  std::span<const std::int64_t> positions;
  std::span<float> out;
  void check() const;
  std::vector<TensorArg> tensors() const;
};

/// out (n, n) = q_i.k_j + q_i.r[clamp(p_j-p_i)]; q, k (n, head_dim), table (2K+1, head_dim).
struct ShawScores {
  static constexpr Op op = Op::shaw_scores;
  ShawSpec spec;
  DType dtype;
  std::span<const float> q, k, table;
  std::span<const std::int64_t> positions;
  std::span<float> out;
  void check() const;
  std::vector<TensorArg> tensors() const;
};

/// out (heads, n, n) = table[bucket(p_j - p_i), h] with table (num_buckets, heads).
struct T5Bias {
  static constexpr Op op = Op::t5_bias;
  T5Spec spec;
  DType dtype;
  std::span<const float> table;
  std::span<const std::int64_t> positions;
  std::span<float> out;
  void check() const;
  std::vector<TensorArg> tensors() const;
};

/// out = attention(q, k, v) with its PE; k, v (n, kv_heads, head_dim) for the n positions; q and
/// out (spec.query_count(n), heads, head_dim), the last tokens; pe_table is Shaw's (2K+1,
/// head_dim) when spec.pe == shaw, T5's (num_buckets, heads) when spec.pe == t5, else unread.
struct Attention {
  static constexpr Op op = Op::attention;
  AttentionSpec spec;
  DType dtype;
  std::span<const std::int64_t> positions;
  std::span<const float> q, k, v, pe_table;
  std::span<float> out;
  void check() const;
  std::vector<TensorArg> tensors() const;
};

/// out (n, d_model) = PE2d(rows[t], cols[t]); rows and cols of equal length n.
struct Sinusoidal2dTable {
  static constexpr Op op = Op::sinusoidal2d_table;
  Sinusoidal2dSpec spec;
  DType dtype;
  std::span<const std::int64_t> rows, cols;
  std::span<float> out;
  void check() const;
  std::vector<TensorArg> tensors() const;
};

/// x (n, heads, head_dim) rotated in place by 2-D RoPE, token t to (rows[t], cols[t]).
struct Rope2dApply {
  static constexpr Op op = Op::rope2d_apply;
  Rope2dSpec spec;
  DType dtype;
  int heads;
  std::span<const std::int64_t> rows, cols;
  std::span<float> x;
  void check() const;
  std::vector<TensorArg> tensors() const;
};

/// x (n, heads, head_dim) rotated in place by multimodal RoPE, token t to (temporal[t],
/// height[t], width[t]); each rotary pair turns by the position of its axis (spec/mrope.hpp).
struct MropeApply {
  static constexpr Op op = Op::mrope_apply;
  MropeSpec spec;
  DType dtype;
  int heads;
  std::span<const std::int64_t> temporal, height, width;
  std::span<float> x;
  void check() const;
  std::vector<TensorArg> tensors() const;
};

/// out (heads, n, n) = table[row(i, j), h] with table (spec.table_rows(), heads): the 2-D relative
/// bias of query patch i at (rows[i], cols[i]) against key patch j (spec/conventions_2d.hpp). The
/// patches' rows, and their columns, must each span less than the window; under class_token
/// token 0 is the class token and its position is not read.
struct RelativeBias2d {
  static constexpr Op op = Op::relative_bias_2d;
  RelativeBias2dSpec spec;
  DType dtype;
  std::span<const float> table;
  std::span<const std::int64_t> rows, cols;
  std::span<float> out;
  void check() const;
  std::vector<TensorArg> tensors() const;
};

template <class... Calls>
struct OperationList {
  static constexpr std::size_t size = sizeof...(Calls);
};

/// The one table of operations.
using Operations = OperationList<SinusoidalTable, LearnedAdd, RopeApply, AlibiBias, ShawScores, T5Bias, Attention,
                                 Sinusoidal2dTable, Rope2dApply, MropeApply, RelativeBias2d>;

inline constexpr std::size_t kOperationCount = Operations::size;

namespace detail {
template <class... Calls>
constexpr bool ops_in_table_order(OperationList<Calls...>) {
  std::size_t i = 0;
  return ((static_cast<std::size_t>(Calls::op) == i++) && ...);
}
}  // namespace detail
static_assert(detail::ops_in_table_order(Operations{}), "Op and Operations must list the operations in one order");
static_assert(static_cast<std::size_t>(Op::relative_bias_2d) + 1 == kOperationCount, "an Op without a call type");

std::string_view op_name(Op op);

/// Throws std::invalid_argument naming the tensor when its size is not the expected one.
void require_size(std::string_view tensor, std::size_t got, std::size_t expected);

}  // namespace pecheck
