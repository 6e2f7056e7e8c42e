// Theorem: the two RoPE layouts are conjugate by a fixed permutation: half_split(x) =
// P interleaved(P^T x), with P taking dims (2p, 2p+1) to (p, p + rotary_dim/2).
// Doc: docs/properties/rope.layout_conjugacy.md
#include "harness/runner.hpp"
#include "harness/tolerance.hpp"
#include "properties/catalogue.hpp"
#include "properties/rope/rope_cases.hpp"

namespace pecheck::props {

namespace rope_layout_conjugacy_detail {
namespace {

rc::Gen<RopeCase> cases(DType) {
  return rc::gen::map(rope_case_gen(gen::positions(2)), [](RopeCase c) {
    c.spec.layout = RopeLayout::half_split;
    return c;
  });
}

/// Dim of the interleaved layout that holds half-split dim k (pass-through dims stay put).
std::size_t interleaved_dim(const RopeSpec& s, std::size_t k) {
  const std::size_t half = static_cast<std::size_t>(s.rotary_dim / 2);
  if (k >= 2 * half) return k;
  return k < half ? 2 * k : 2 * (k - half) + 1;
}

Outcome check(Encoder& enc, DType dt, const RopeCase& c) {
  Outcome o{.bound_u = tol::two_results(dt)};
  const auto x = gen::values(c.data, 1, c.size(), dt);
  const std::size_t hd = static_cast<std::size_t>(c.spec.head_dim);
  std::vector<float> xi(x.size());  // P^T x: the same pairs, laid out interleaved
  for (std::size_t base = 0; base < x.size(); base += hd)
    for (std::size_t k = 0; k < hd; ++k) xi[base + interleaved_dim(c.spec, k)] = x[base + k];
  RopeCase inter = c;
  inter.spec.layout = RopeLayout::interleaved;
  const auto yh = encoder_rope(enc, dt, c, x, c.positions, o.failure);
  const auto yi = encoder_rope(enc, dt, inter, xi, c.positions, o.failure);
  if (!o.failure.empty()) return o;
  std::vector<double> back(x.size());  // P yi, in the half-split layout
  for (std::size_t base = 0; base < x.size(); base += hd)
    for (std::size_t k = 0; k < hd; ++k) back[base + k] = yi[base + interleaved_dim(c.spec, k)];
  return worst_pair_error(c, dt, x, as_double(yh), back, c.spec.magnitude()).store(o);
}

}  // namespace
}  // namespace rope_layout_conjugacy_detail

Property rope_layout_conjugacy() {
  using namespace rope_layout_conjugacy_detail;
  return make_property<RopeCase>(
      {.id = "rope.layout_conjugacy",
       .statement = "half_split(x) = P interleaved(P^T x) for the fixed permutation P of the pairs' dims.",
       .family = Family::rope,
       .op = Op::rope_apply},
      cases, check);
}

}  // namespace pecheck::props
