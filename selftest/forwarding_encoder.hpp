// An encoder that forwards every operation to the scalar backend: the base of the mutants, each
// of which overrides one operation to plant one real bug.
#pragma once

#include <memory>
#include <string>

#include "impl/encoder.hpp"
#include "impl/scalar/scalar_encoder.hpp"

namespace pecheck::selftest {

/// Forwards every operation to the scalar backend.
class Forwarding : public Encoder {
 public:
  explicit Forwarding(std::string name) : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  Support supports(Op op, DType dt) const override { return inner_->supports(op, dt); }
  void sinusoidal_table(const SinusoidalSpec& s, DType dt, std::span<const std::int64_t> p,
                        std::span<float> o) override {
    inner_->sinusoidal_table(s, dt, p, o);
  }
  void learned_add(const LearnedSpec& s, DType dt, std::span<const float> t, std::span<const std::int64_t> p,
                   std::span<float> x) override {
    inner_->learned_add(s, dt, t, p, x);
  }
  void rope_apply(const RopeSpec& s, DType dt, int h, std::span<const std::int64_t> p, std::span<float> x) override {
    inner_->rope_apply(s, dt, h, p, x);
  }
  void alibi_bias(const AlibiSpec& s, DType dt, std::span<const std::int64_t> p, std::span<float> o) override {
    inner_->alibi_bias(s, dt, p, o);
  }
  void shaw_scores(const ShawSpec& s, DType dt, std::span<const float> q, std::span<const float> k,
                   std::span<const float> t, std::span<const std::int64_t> p, std::span<float> o) override {
    inner_->shaw_scores(s, dt, q, k, t, p, o);
  }
  void attention(const AttentionSpec& s, DType dt, std::span<const std::int64_t> p, std::span<const float> q,
                 std::span<const float> k, std::span<const float> v, std::span<const float> t,
                 std::span<float> o) override {
    inner_->attention(s, dt, p, q, k, v, t, o);
  }

 protected:
  std::unique_ptr<Encoder> inner_ = make_scalar_encoder();
  std::string name_;
};

}  // namespace pecheck::selftest
