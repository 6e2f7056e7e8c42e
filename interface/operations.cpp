#include "interface/operations.hpp"

#include <fmt/format.h>

#include "interface/encoder.hpp"
#include "interface/shapes.hpp"

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

namespace shapes {
void sinusoidal(const SinusoidalSpec& s, std::size_t n, std::size_t out) {
  s.validate();
  require_size("sinusoidal output", out, n * static_cast<std::size_t>(s.d_model));
}
void learned(const LearnedSpec& s, std::size_t table, std::size_t n, std::size_t x) {
  s.validate();
  const std::size_t d = static_cast<std::size_t>(s.d_model);
  require_size("learned table", table, static_cast<std::size_t>(s.max_len) * d);
  require_size("learned input", x, n * d);
}
void rope(const RopeSpec& s, int heads, std::size_t n, std::size_t x) {
  s.validate();
  if (heads <= 0) throw std::invalid_argument(fmt::format("RoPE needs heads > 0, got {}", heads));
  require_size("RoPE input", x, n * static_cast<std::size_t>(heads) * static_cast<std::size_t>(s.head_dim));
}
void alibi(const AlibiSpec& s, std::size_t n, std::size_t out) {
  s.validate();
  require_size("ALiBi output", out, static_cast<std::size_t>(s.heads) * n * n);
}
void shaw(const ShawSpec& s, std::size_t q, std::size_t k, std::size_t table, std::size_t n, std::size_t out) {
  s.validate();
  const std::size_t d = static_cast<std::size_t>(s.head_dim);
  require_size("Shaw q", q, n * d);
  require_size("Shaw k", k, n * d);
  require_size("Shaw table", table, static_cast<std::size_t>(s.table_rows()) * d);
  require_size("Shaw output", out, n * n);
}
namespace {
void same_length(std::size_t rows, std::size_t cols) {
  if (rows != cols) throw std::invalid_argument(fmt::format("2-D positions: {} rows but {} columns", rows, cols));
}
}  // namespace
void sinusoidal2d(const Sinusoidal2dSpec& s, std::size_t rows, std::size_t cols, std::size_t out) {
  s.validate();
  same_length(rows, cols);
  require_size("2-D sinusoid output", out, rows * static_cast<std::size_t>(s.d_model));
}
void rope2d(const Rope2dSpec& s, int heads, std::size_t rows, std::size_t cols, std::size_t x) {
  s.validate();
  same_length(rows, cols);
  if (heads <= 0) throw std::invalid_argument(fmt::format("2-D RoPE needs heads > 0, got {}", heads));
  require_size("2-D RoPE input", x, rows * static_cast<std::size_t>(heads) * static_cast<std::size_t>(s.head_dim));
}
void mrope(const MropeSpec& s, int heads, std::size_t temporal, std::size_t height, std::size_t width, std::size_t x) {
  s.validate();
  if (height != temporal || width != temporal)
    throw std::invalid_argument(fmt::format("M-RoPE positions: {} temporal, {} height, {} width (one per token each)",
                                            temporal, height, width));
  if (heads <= 0) throw std::invalid_argument(fmt::format("M-RoPE needs heads > 0, got {}", heads));
  require_size("M-RoPE input", x, temporal * static_cast<std::size_t>(heads) * static_cast<std::size_t>(s.head_dim));
}
void t5(const T5Spec& s, std::size_t table, std::size_t n, std::size_t out) {
  s.validate();
  require_size("T5 table", table, static_cast<std::size_t>(s.num_buckets) * static_cast<std::size_t>(s.heads));
  require_size("T5 output", out, static_cast<std::size_t>(s.heads) * n * n);
}
void attention(const AttentionSpec& s, std::size_t n, std::size_t q, std::size_t k, std::size_t v, std::size_t table,
               std::size_t out) {
  s.validate();
  if (static_cast<std::size_t>(s.queries) > n)
    throw std::invalid_argument(fmt::format("attention queries ({}) exceed the tokens given ({})", s.queries, n));
  const std::size_t w = s.query_count(n) * static_cast<std::size_t>(s.width()),
                    kv = n * static_cast<std::size_t>(s.kv_width());
  require_size("attention q", q, w);
  require_size("attention k", k, kv);
  require_size("attention v", v, kv);
  require_size("attention output", out, w);
  if (s.pe == AttentionPE::shaw)
    require_size("attention Shaw table", table,
                 static_cast<std::size_t>(s.shaw().table_rows()) * static_cast<std::size_t>(s.head_dim));
}
}  // namespace shapes

void SinusoidalTable::check() const { shapes::sinusoidal(spec, positions.size(), out.size()); }
void LearnedAdd::check() const { shapes::learned(spec, table.size(), positions.size(), x.size()); }
void RopeApply::check() const { shapes::rope(spec, heads, positions.size(), x.size()); }
void AlibiBias::check() const { shapes::alibi(spec, positions.size(), out.size()); }
void ShawScores::check() const { shapes::shaw(spec, q.size(), k.size(), table.size(), positions.size(), out.size()); }
void T5Bias::check() const { shapes::t5(spec, table.size(), positions.size(), out.size()); }
void Attention::check() const {
  shapes::attention(spec, positions.size(), q.size(), k.size(), v.size(), shaw_table.size(), out.size());
}
void Sinusoidal2dTable::check() const { shapes::sinusoidal2d(spec, rows.size(), cols.size(), out.size()); }
void Rope2dApply::check() const { shapes::rope2d(spec, heads, rows.size(), cols.size(), x.size()); }

void MropeApply::check() const { shapes::mrope(spec, heads, temporal.size(), height.size(), width.size(), x.size()); }

}  // namespace pecheck
