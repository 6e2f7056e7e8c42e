#include "impl/scalar/scalar_encoder.hpp"

#include "impl/rope2d_by_halves.hpp"
#include "impl/scalar/kernels.hpp"

namespace pecheck {

namespace {

class ScalarEncoder final : public Encoder {
 public:
  std::string name() const override { return "scalar"; }
  Support supports(Op, DType) const override { return {}; }

  void run(const SinusoidalTable& c) override {
    const auto& [s, dt, pos, out] = c;
    scalar::sinusoidal_table(s, dt, pos, out);
  }
  void run(const LearnedAdd& c) override {
    const auto& [s, dt, table, pos, x] = c;
    scalar::learned_add(s, dt, table, pos, x);
  }
  void run(const RopeApply& c) override {
    const auto& [s, dt, heads, pos, x] = c;
    scalar::rope_apply(s, dt, heads, pos, x);
  }
  void run(const AlibiBias& c) override {
    const auto& [s, dt, pos, out] = c;
    scalar::alibi_bias(s, dt, pos, out);
  }
  void run(const ShawScores& c) override {
    const auto& [s, dt, q, k, table, pos, out] = c;
    scalar::shaw_scores(s, dt, q, k, table, pos, out);
  }
  void run(const T5Bias& c) override {
    const auto& [s, dt, table, pos, out] = c;
    scalar::t5_bias(s, dt, table, pos, out);
  }
  void run(const RelativeBias2d& c) override {
    const auto& [s, dt, table, rows, cols, out] = c;
    scalar::relative_bias_2d(s, dt, table, rows, cols, out);
  }
  void run(const Sinusoidal2dTable& c) override {
    const auto& [s, dt, rows, cols, out] = c;
    scalar::sinusoidal2d_table(s, dt, rows, cols, out);
  }
  void run(const Rope2dApply& c) override {
    rope2d_by_halves(c, [&](const Rope2dSpec& s, std::span<float> x) {
      scalar::rope2d_apply(s, c.dtype, c.heads, c.rows, c.cols, x);
    });
  }
  void run(const MropeApply& c) override {
    scalar::mrope_apply(c.spec, c.dtype, c.heads, c.temporal, c.height, c.width, c.x);
  }
  void run(const Attention& c) override {
    const auto& [s, dt, pos, q, k, v, table, out] = c;
    scalar::attention(s, dt, pos, q, k, v, table, out);
  }
};

}  // namespace

std::unique_ptr<Encoder> make_scalar_encoder() { return std::make_unique<ScalarEncoder>(); }

}  // namespace pecheck
