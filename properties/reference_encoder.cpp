#include "properties/reference_encoder.hpp"

#include <cmath>
#include <limits>
#include <vector>

#include "reference/alibi.hpp"
#include "reference/attention.hpp"
#include "reference/axial.hpp"
#include "reference/learned.hpp"
#include "reference/relative.hpp"
#include "reference/rope.hpp"
#include "reference/sinusoidal.hpp"
#include "reference/t5.hpp"

namespace pecheck {

namespace {

std::vector<double> widen(std::span<const float> x) { return {x.begin(), x.end()}; }

void narrow(DType dt, const std::vector<double>& from, std::span<float> to) {
  for (std::size_t i = 0; i < from.size(); ++i) to[i] = round_to(dt, from[i]);
}

class ReferenceDoubleEncoder final : public Encoder {
 public:
  std::string name() const override { return "reference-double"; }
  Support supports(Op, DType) const override { return {}; }

  void sinusoidal_table(const SinusoidalSpec& s, DType dt, std::span<const std::int64_t> pos,
                        std::span<float> out) override {
    shapes::sinusoidal(s, pos.size(), out.size());
    const std::size_t d = static_cast<std::size_t>(s.d_model);
    for (std::size_t t = 0; t < pos.size(); ++t)
      narrow(dt, ref::sinusoidal_row<double>(s, pos[t]), out.subspan(t * d, d));
  }
  void learned_add(const LearnedSpec& s, DType dt, std::span<const float> table, std::span<const std::int64_t> pos,
                   std::span<float> x) override {
    shapes::learned(s, table.size(), pos.size(), x.size());
    const auto t = widen(table), xd = widen(x);
    narrow(dt, ref::learned_add<double>(s, t, pos, xd), x);
  }
  void rope_apply(const RopeSpec& s, DType dt, int heads, std::span<const std::int64_t> pos,
                  std::span<float> x) override {
    shapes::rope(s, heads, pos.size(), x.size());
    auto xd = widen(x);
    ref::rope_apply<double>(s, heads, pos, std::span<double>(xd));
    narrow(dt, xd, x);
  }
  void alibi_bias(const AlibiSpec& s, DType dt, std::span<const std::int64_t> pos, std::span<float> out) override {
    shapes::alibi(s, pos.size(), out.size());
    narrow(dt, ref::alibi_bias_tensor<double>(s, pos), out);
  }
  void shaw_scores(const ShawSpec& s, DType dt, std::span<const float> q, std::span<const float> k,
                   std::span<const float> table, std::span<const std::int64_t> pos, std::span<float> out) override {
    shapes::shaw(s, q.size(), k.size(), table.size(), pos.size(), out.size());
    const auto qd = widen(q), kd = widen(k), td = widen(table);
    narrow(dt, ref::shaw_scores<double>(s, qd, kd, td, pos), out);
  }
  void t5_bias(const T5Spec& s, DType dt, std::span<const float> table, std::span<const std::int64_t> pos,
               std::span<float> out) override {
    shapes::t5(s, table.size(), pos.size(), out.size());
    const auto td = widen(table);
    narrow(dt, ref::t5_bias_tensor<double>(s, td, pos), out);
  }
  void sinusoidal2d_table(const Sinusoidal2dSpec& s, DType dt, std::span<const std::int64_t> rows,
                          std::span<const std::int64_t> cols, std::span<float> out) override {
    shapes::sinusoidal2d(s, rows.size(), cols.size(), out.size());
    const std::size_t d = static_cast<std::size_t>(s.d_model);
    for (std::size_t t = 0; t < rows.size(); ++t)
      narrow(dt, ref::sinusoidal2d_row<double>(s, rows[t], cols[t]), out.subspan(t * d, d));
  }
  void rope2d_apply(const AxialRopeSpec& s, DType dt, int heads, std::span<const std::int64_t> rows,
                    std::span<const std::int64_t> cols, std::span<float> x) override {
    shapes::rope2d(s, heads, rows.size(), cols.size(), x.size());
    auto xd = widen(x);
    ref::rope2d_apply<double>(s, heads, rows, cols, std::span<double>(xd));
    narrow(dt, xd, x);
  }
  void attention(const AttentionSpec& s, DType dt, std::span<const std::int64_t> pos, std::span<const float> q,
                 std::span<const float> k, std::span<const float> v, std::span<const float> table,
                 std::span<float> out) override {
    shapes::attention(s, pos.size(), q.size(), k.size(), v.size(), table.size(), out.size());
    const auto td = widen(table);
    narrow(dt, ref::attention<double>(s, pos, {widen(q), widen(k), widen(v)}, td), out);
  }
};

}  // namespace

std::unique_ptr<Encoder> make_reference_double_encoder() { return std::make_unique<ReferenceDoubleEncoder>(); }

}  // namespace pecheck
