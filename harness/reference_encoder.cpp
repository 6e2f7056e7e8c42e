#include "harness/reference_encoder.hpp"

#include <cmath>
#include <limits>
#include <vector>

#include "reference/alibi.hpp"
#include "reference/attention.hpp"
#include "reference/encodings_2d.hpp"
#include "reference/learned.hpp"
#include "reference/mrope.hpp"
#include "reference/relative_bias_2d.hpp"
#include "reference/rope.hpp"
#include "reference/shaw.hpp"
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

  void run(const SinusoidalTable& c) override {
    const auto& [s, dt, pos, out] = c;
    c.check();
    const std::size_t d = static_cast<std::size_t>(s.d_model);
    for (std::size_t t = 0; t < pos.size(); ++t)
      narrow(dt, ref::sinusoidal_row<double>(s, pos[t]), out.subspan(t * d, d));
  }
  void run(const LearnedAdd& c) override {
    const auto& [s, dt, table, pos, x] = c;
    c.check();
    const auto t = widen(table), xd = widen(x);
    narrow(dt, ref::learned_add<double>(s, t, pos, xd), x);
  }
  void run(const RopeApply& c) override {
    const auto& [s, dt, heads, pos, x] = c;
    c.check();
    auto xd = widen(x);
    ref::rope_apply<double>(s, heads, pos, std::span<double>(xd));
    narrow(dt, xd, x);
  }
  void run(const AlibiBias& c) override {
    const auto& [s, dt, pos, out] = c;
    c.check();
    narrow(dt, ref::alibi_bias_tensor<double>(s, pos), out);
  }
  void run(const ShawScores& c) override {
    const auto& [s, dt, q, k, table, pos, out] = c;
    c.check();
    const auto qd = widen(q), kd = widen(k), td = widen(table);
    narrow(dt, ref::shaw_scores<double>(s, qd, kd, td, pos), out);
  }
  void run(const T5Bias& c) override {
    const auto& [s, dt, table, pos, out] = c;
    c.check();
    const auto td = widen(table);
    narrow(dt, ref::t5_bias_tensor<double>(s, td, pos), out);
  }
  void run(const Sinusoidal2dTable& c) override {
    const auto& [s, dt, rows, cols, out] = c;
    c.check();
    const std::size_t d = static_cast<std::size_t>(s.d_model);
    for (std::size_t t = 0; t < rows.size(); ++t)
      narrow(dt, ref::sinusoidal2d_row<double>(s, rows[t], cols[t]), out.subspan(t * d, d));
  }
  void run(const Rope2dApply& c) override {
    const auto& [s, dt, heads, rows, cols, x] = c;
    c.check();
    auto xd = widen(x);
    ref::rope2d_apply<double>(s, heads, rows, cols, std::span<double>(xd));
    narrow(dt, xd, x);
  }
  void run(const RelativeBias2d& c) override {
    const auto& [s, dt, table, rows, cols, out] = c;
    c.check();
    const auto td = widen(table);
    narrow(dt, ref::relative_bias_2d_tensor<double>(s, td, rows, cols), out);
  }
  void run(const MropeApply& c) override {
    c.check();
    auto xd = widen(c.x);
    ref::mrope_apply<double>(c.spec, c.heads, c.temporal, c.height, c.width, std::span<double>(xd));
    narrow(c.dtype, xd, c.x);
  }
  void run(const Attention& c) override {
    const auto& [s, dt, pos, q, k, v, table, out] = c;
    c.check();
    const auto td = widen(table);
    narrow(dt, ref::attention<double>(s, pos, {widen(q), widen(k), widen(v)}, td), out);
  }
};

}  // namespace

std::unique_ptr<Encoder> make_reference_double_encoder() { return std::make_unique<ReferenceDoubleEncoder>(); }

}  // namespace pecheck
