#include "interface/operations.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "interface/encoder.hpp"

namespace pecheck {

std::string_view op_name(Op op) {
  switch (op) {
    case Op::sinusoidal_table:
      return "sinusoidal_table";
    case Op::learned_add:
      return "learned_add";
    case Op::rope_apply:
      return "rope_apply";
    case Op::alibi_bias:
      return "alibi_bias";
    case Op::shaw_scores:
      return "shaw_scores";
    case Op::t5_bias:
      return "t5_bias";
    case Op::attention:
      return "attention";
    case Op::sinusoidal2d_table:
      return "sinusoidal2d_table";
    case Op::rope2d_apply:
      return "rope2d_apply";
    case Op::mrope_apply:
      return "mrope_apply";
    case Op::relative_bias_2d:
      return "relative_bias_2d";
  }
  return "?";
}

void decline(const Encoder& encoder, Op op) {
  throw Unsupported(fmt::format("{} does not implement {}", encoder.name(), op_name(op)));
}

void require_size(std::string_view tensor, std::size_t got, std::size_t expected) {
  if (got != expected)
    throw std::invalid_argument(fmt::format("{} has {} elements, expected {}", tensor, got, expected));
}

std::size_t TensorArg::elements() const {
  std::size_t n = 1;
  for (std::size_t e : shape) n *= e;
  return n;
}

std::size_t TensorArg::given() const {
  if (holds_positions) return positions.size();
  return role == Role::output ? result.size() : values.size();
}

const TensorArg& tensor_named(const std::vector<TensorArg>& tensors, std::string_view name) {
  for (const TensorArg& t : tensors)
    if (t.name == name) return t;
  throw std::logic_error(fmt::format("no tensor named {} in the call's declaration", name));
}

namespace {

std::size_t z(int v) { return static_cast<std::size_t>(v); }

/// One position per token: n of them (a second stream of positions must match the first's length).
TensorArg positions_arg(std::string_view name, std::span<const std::int64_t> p, std::size_t n) {
  TensorArg t;
  t.name = name, t.shape = {n}, t.positions = p, t.holds_positions = true;
  return t;
}
TensorArg positions_arg(std::string_view name, std::span<const std::int64_t> p) {
  return positions_arg(name, p, p.size());
}
TensorArg input(std::string_view name, std::span<const float> v, std::vector<std::size_t> shape) {
  TensorArg t;
  t.name = name, t.shape = std::move(shape), t.values = v;
  return t;
}
TensorArg output(std::string_view name, std::span<float> v, std::vector<std::size_t> shape) {
  TensorArg t;
  t.name = name, t.role = Role::output, t.shape = std::move(shape), t.result = v;
  return t;
}
TensorArg in_place(std::string_view name, std::span<float> v, std::vector<std::size_t> shape) {
  TensorArg t;
  t.name = name, t.role = Role::in_place, t.shape = std::move(shape), t.values = v, t.result = v;
  return t;
}

void positive_heads(std::string_view what, int heads) {
  if (heads <= 0) throw std::invalid_argument(fmt::format("{} needs heads > 0, got {}", what, heads));
}

/// The spec, then every tensor of the call against its declared shape (shapes read the spec).
template <class Call>
void check_call(const Call& c) {
  c.spec.validate();
  for (const TensorArg& t : c.tensors())
    require_size(fmt::format("{} {}", op_name(Call::op), t.name), t.given(), t.elements());
}

}  // namespace

std::vector<TensorArg> SinusoidalTable::tensors() const {
  return {positions_arg("positions", positions), output("out", out, {positions.size(), z(spec.d_model)})};
}
std::vector<TensorArg> LearnedAdd::tensors() const {
  const std::size_t d = z(spec.d_model);
  return {in_place("x", x, {positions.size(), d}), input("table", table, {z(spec.max_len), d}),
          positions_arg("positions", positions)};
}
std::vector<TensorArg> RopeApply::tensors() const {
  return {in_place("x", x, {positions.size(), z(heads), z(spec.head_dim)}), positions_arg("positions", positions)};
}
std::vector<TensorArg> AlibiBias::tensors() const {
  const std::size_t n = positions.size();
  return {positions_arg("positions", positions), output("out", out, {z(spec.heads), n, n})};
}
std::vector<TensorArg> ShawScores::tensors() const {
  const std::size_t n = positions.size(), d = z(spec.head_dim);
  return {input("q", q, {n, d}), input("k", k, {n, d}), input("table", table, {z(spec.table_rows()), d}),
          positions_arg("positions", positions), output("out", out, {n, n})};
}
std::vector<TensorArg> T5Bias::tensors() const {
  const std::size_t n = positions.size();
  return {input("table", table, {z(spec.num_buckets), z(spec.heads)}), positions_arg("positions", positions),
          output("out", out, {z(spec.heads), n, n})};
}
std::vector<TensorArg> Attention::tensors() const {
  const std::size_t n = positions.size(), d = z(spec.head_dim);
  const std::vector<std::size_t> q_shape{spec.query_count(n), z(spec.heads), d}, kv_shape{n, z(spec.kv_count()), d};
  std::vector<TensorArg> t{input("q", q, q_shape), input("k", k, kv_shape), input("v", v, kv_shape),
                           positions_arg("positions", positions)};
  if (spec.pe == AttentionPE::shaw) t.push_back(input("shaw_table", pe_table, {z(spec.shaw().table_rows()), d}));
  if (spec.pe == AttentionPE::t5) t.push_back(input("t5_table", pe_table, {z(spec.t5_buckets), z(spec.heads)}));
  t.push_back(output("out", out, q_shape));
  return t;
}
std::vector<TensorArg> Sinusoidal2dTable::tensors() const {
  return {positions_arg("rows", rows), positions_arg("cols", cols, rows.size()),
          output("out", out, {rows.size(), z(spec.d_model)})};
}
std::vector<TensorArg> Rope2dApply::tensors() const {
  return {in_place("x", x, {rows.size(), z(heads), z(spec.head_dim)}), positions_arg("rows", rows),
          positions_arg("cols", cols, rows.size())};
}
std::vector<TensorArg> MropeApply::tensors() const {
  const std::size_t n = temporal.size();
  return {in_place("x", x, {n, z(heads), z(spec.head_dim)}), positions_arg("temporal", temporal),
          positions_arg("height", height, n), positions_arg("width", width, n)};
}

std::vector<TensorArg> RelativeBias2d::tensors() const {
  const std::size_t n = rows.size();
  return {input("table", table, {z(spec.table_rows()), z(spec.heads)}), positions_arg("rows", rows),
          positions_arg("cols", cols, n), output("out", out, {z(spec.heads), n, n})};
}

void SinusoidalTable::check() const { check_call(*this); }
void LearnedAdd::check() const { check_call(*this); }
void RopeApply::check() const {
  positive_heads("RoPE", heads);
  check_call(*this);
}
void AlibiBias::check() const { check_call(*this); }
void ShawScores::check() const { check_call(*this); }
void T5Bias::check() const { check_call(*this); }
void Attention::check() const {
  spec.validate();  // queries read below
  if (static_cast<std::size_t>(spec.queries) > positions.size())
    throw std::invalid_argument(
        fmt::format("attention queries ({}) exceed the tokens given ({})", spec.queries, positions.size()));
  check_call(*this);
}
void Sinusoidal2dTable::check() const { check_call(*this); }
void Rope2dApply::check() const {
  positive_heads("2-D RoPE", heads);
  check_call(*this);
}
void MropeApply::check() const {
  positive_heads("M-RoPE", heads);
  check_call(*this);
}

void RelativeBias2d::check() const {
  check_call(*this);
  // Every offset between two patches must have its row in the table: the patches' rows (and
  // columns) span less than the window. The class token's position is not read.
  const std::size_t first = spec.class_token ? 1 : 0;
  const auto within = [&](std::span<const std::int64_t> p, int window, std::string_view axis) {
    if (p.size() <= first) return;
    const auto [lo, hi] = std::minmax_element(p.begin() + static_cast<std::ptrdiff_t>(first), p.end());
    // Unsigned, so no difference of two int64s overflows (hi >= lo: it is the true span).
    if (static_cast<std::uint64_t>(*hi) - static_cast<std::uint64_t>(*lo) >= static_cast<std::uint64_t>(window))
      throw std::invalid_argument(
          fmt::format("relative_bias_2d {} span {} to {}, beyond a window of {} {}", axis, *lo, *hi, window, axis));
  };
  within(rows, spec.window_rows, "rows");
  within(cols, spec.window_cols, "cols");
}

}  // namespace pecheck
