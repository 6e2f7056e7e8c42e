#include "impl/scalar/scalar_encoder.hpp"

#include "impl/scalar/kernels.hpp"

namespace pecheck {

namespace {

class ScalarEncoder final : public Encoder {
 public:
  std::string name() const override { return "scalar"; }
  Support supports(Op, DType) const override { return {}; }

  void sinusoidal_table(const SinusoidalSpec& s, DType dt, std::span<const std::int64_t> pos,
                        std::span<float> out) override {
    scalar::sinusoidal_table(s, dt, pos, out);
  }
  void learned_add(const LearnedSpec& s, DType dt, std::span<const float> table, std::span<const std::int64_t> pos,
                   std::span<float> x) override {
    scalar::learned_add(s, dt, table, pos, x);
  }
  void rope_apply(const RopeSpec& s, DType dt, int heads, std::span<const std::int64_t> pos,
                  std::span<float> x) override {
    scalar::rope_apply(s, dt, heads, pos, x);
  }
  void alibi_bias(const AlibiSpec& s, DType dt, std::span<const std::int64_t> pos, std::span<float> out) override {
    scalar::alibi_bias(s, dt, pos, out);
  }
  void shaw_scores(const ShawSpec& s, DType dt, std::span<const float> q, std::span<const float> k,
                   std::span<const float> table, std::span<const std::int64_t> pos, std::span<float> out) override {
    scalar::shaw_scores(s, dt, q, k, table, pos, out);
  }
  void t5_bias(const T5Spec& s, DType dt, std::span<const float> table, std::span<const std::int64_t> pos,
               std::span<float> out) override {
    scalar::t5_bias(s, dt, table, pos, out);
  }
  void sinusoidal2d_table(const Sinusoidal2dSpec& s, DType dt, std::span<const std::int64_t> rows,
                          std::span<const std::int64_t> cols, std::span<float> out) override {
    scalar::sinusoidal2d_table(s, dt, rows, cols, out);
  }
  void rope2d_apply(const AxialRopeSpec& s, DType dt, int heads, std::span<const std::int64_t> rows,
                    std::span<const std::int64_t> cols, std::span<float> x) override {
    scalar::rope2d_apply(s, dt, heads, rows, cols, x);
  }
  void attention(const AttentionSpec& s, DType dt, std::span<const std::int64_t> pos, std::span<const float> q,
                 std::span<const float> k, std::span<const float> v, std::span<const float> table,
                 std::span<float> out) override {
    scalar::attention(s, dt, pos, q, k, v, table, out);
  }
};

}  // namespace

std::unique_ptr<Encoder> make_scalar_encoder() { return std::make_unique<ScalarEncoder>(); }

}  // namespace pecheck
