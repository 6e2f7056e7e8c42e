// An encoder that forwards every operation to the scalar backend: the base of the mutants, each
// of which overrides one operation to plant one real bug.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <utility>

#include "impl/scalar/scalar_encoder.hpp"
#include "interface/encoder.hpp"

namespace pecheck::mutants {

/// Forwards every operation to the scalar backend.
class Forwarding : public HandledBy<Forwarding> {
 public:
  explicit Forwarding(std::string name) : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  Support supports(Op op, DType dt) const override { return inner_->supports(op, dt); }
  template <class Call>
  void handle(const Call& call) {
    inner_->run(call);
  }

 protected:
  std::unique_ptr<Encoder> inner_ = make_scalar_encoder();
  std::string name_;
};

/// A mutant that calls the correct RoPE kernel with a wrong spec: `rewrite` plants the bug (a
/// base, a layout, a scaling rule ignored or misread) and everything else is the scalar backend.
class RewritesRopeSpec : public Forwarding {
 public:
  using Forwarding::Forwarding;
  using Forwarding::run;
  void run(const RopeApply& c) override { inner_->run(RopeApply{rewrite(c.spec), c.dtype, c.heads, c.positions, c.x}); }

 protected:
  /// The spec the kernel is called with instead of `s`.
  virtual RopeSpec rewrite(RopeSpec s) = 0;
};

/// A mutant that calls the correct attention kernel with a wrong spec: `rewrite` plants the bug (the
/// scale, the PE, the window, RoPE's rule or rotary_dim dropped or misread).
class RewritesAttentionSpec : public Forwarding {
 public:
  using Forwarding::Forwarding;
  using Forwarding::run;
  void run(const Attention& c) override {
    inner_->run(Attention{rewrite(c.spec), c.dtype, c.positions, c.q, c.k, c.v, c.pe_table, c.out});
  }

 protected:
  /// The spec the kernel is called with instead of `s`.
  virtual AttentionSpec rewrite(AttentionSpec s) = 0;
};

/// The factory every catalogue entry stores.
template <class M>
std::unique_ptr<Encoder> make_mutant() {
  return std::make_unique<M>();
}

/// RoPE whose (cos, sin) for pair p at position pos come from `sc(pos, p)`, with the pairs laid
/// out by `layout` (which a mutant may get wrong); rotation in double, rounded once.
template <class SinCos>
void rope_with(const RopeSpec& s, RopeLayout layout, DType dt, int heads, std::span<const std::int64_t> positions,
               std::span<float> x, SinCos sc) {
  RopeApply{s, dt, heads, positions, x}.check();
  const std::size_t hd = static_cast<std::size_t>(s.head_dim), pairs = static_cast<std::size_t>(s.rotary_dim / 2);
  for (std::size_t t = 0; t < positions.size(); ++t)
    for (std::size_t h = 0; h < static_cast<std::size_t>(heads); ++h) {
      float* head = x.data() + (t * static_cast<std::size_t>(heads) + h) * hd;
      for (std::size_t p = 0; p < pairs; ++p) {
        const auto [c, sn] = sc(positions[t], static_cast<int>(p));
        const std::size_t i = layout == RopeLayout::interleaved ? 2 * p : p;
        const std::size_t j = layout == RopeLayout::interleaved ? 2 * p + 1 : p + pairs;
        const double x1 = head[i], x2 = head[j];
        head[i] = round_to(dt, x1 * c - x2 * sn);
        head[j] = round_to(dt, x2 * c + x1 * sn);
      }
    }
}

}  // namespace pecheck::mutants
