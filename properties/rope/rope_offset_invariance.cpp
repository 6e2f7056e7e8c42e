// Theorem: rotating a whole sequence at an offset t (left padding, a KV cache) leaves every
// score <R_{p_i+t} q_i, R_{p_j+t} k_j> unchanged, head by head, with per-token positions.
// Doc: docs/properties/rope.offset_invariance.md
#include "harness/runner.hpp"
#include "harness/tolerance.hpp"
#include "properties/catalogue.hpp"
#include "properties/rope/rope_cases.hpp"
#include "properties/rope/rope_contract_laws.hpp"

namespace pecheck::props {

namespace rope_offset_invariance_detail {
namespace {

/// n tokens at arbitrary positions, then the offset t != 0 as the last entry (all sums in [0, 2^24)).
rc::Gen<RopeCase> cases(DType) {
  return rc::gen::mapcat(rc::gen::inRange(2, 7), [](int n) {
    return rc::gen::map(rope_case_gen(gen::positions(static_cast<std::size_t>(n) + 1)), [](RopeCase c) {
      std::vector<std::int64_t*> tokens;
      for (auto it = c.positions.begin(); it + 1 != c.positions.end(); ++it) tokens.push_back(&*it);
      c.positions.back() = gen::nonzero_shift(tokens, c.positions.back());
      return c;
    });
  });
}

double dot(const float* a, const float* b, std::size_t d) {
  double acc = 0;
  for (std::size_t i = 0; i < d; ++i) acc += double{a[i]} * b[i];
  return acc;
}

Outcome check(Encoder& enc, DType dt, const RopeCase& c, const RunParams& params) {
  // t = 0 compares each call with itself.
  Outcome o{.bound_u = tol::rope_relative(dt, c.spec.head_dim), .trivial = c.positions.back() == 0};
  RopeCase seq = c;
  seq.positions.pop_back();
  const std::int64_t t = c.positions.back();
  std::vector<std::int64_t> shifted(seq.positions);
  for (auto& p : shifted) p += t;
  const auto q = gen::values(c.data, 1, seq.size(), dt), k = gen::values(c.data, 2, seq.size(), dt);
  const auto q0 = encoder_rope(enc, dt, seq, q, seq.positions, o.failure);
  const auto k0 = encoder_rope(enc, dt, seq, k, seq.positions, o.failure);
  const auto qt = encoder_rope(enc, dt, seq, q, shifted, o.failure);
  const auto kt = encoder_rope(enc, dt, seq, k, shifted, o.failure);
  if (!o.failure.empty()) return o;
  const std::size_t d = static_cast<std::size_t>(c.spec.head_dim), H = static_cast<std::size_t>(c.heads);
  const double m = c.spec.magnitude();  // YaRN scales each rotated vector by m
  const bool exact = params.contract == tol::Contract::exact;
  const measure::ContractBounds bounds(dt, c.spec);
  // Exact: one bound for every score. Under a weaker contract each score pair has its own (the
  // four calls' bounds at their positions): the case reports the score closest to its bound.
  WorstOf worst;  // of error / bound
  double error = 0, bound = o.bound_u, least = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < seq.positions.size(); ++i)
    for (std::size_t j = 0; j < seq.positions.size(); ++j)
      for (std::size_t h = 0; h < H; ++h) {
        const std::size_t a = (i * H + h) * d, b = (j * H + h) * d;
        const double s0 = dot(&q0[a], &k0[b], d), st = dot(&qt[a], &kt[b], d);
        const double scale = m * m * std::sqrt(dot(&q[a], &q[a], d) * dot(&k[b], &k[b], d));
        const double e = std::fabs(s0 - st) / (unit_roundoff(dt) * scale);
        const double bd = exact ? o.bound_u
                                : two_scores_contract_bound(params.contract, dt, c.spec, bounds, &q[a], &k[b],
                                                            seq.positions[i], seq.positions[j], shifted[i], shifted[j]);
        least = std::min(least, bd);
        worst.offer(e / bd, [&] {
          error = e, bound = bd;
          return fmt::format("head {} score({}, {}) = {:.9g} at offset 0, {:.9g} at offset {}", h, i, j, s0, st, t);
        });
      }
  o.error_u = error, o.bound_u = bound, o.where = worst.where;
  // Where every score's bound is past any two unit scores' distance, nothing could have failed.
  o.trivial = o.trivial || (!exact && least >= 2 / unit_roundoff(dt));
  return o;
}

}  // namespace
}  // namespace rope_offset_invariance_detail

Property rope_offset_invariance() {
  using namespace rope_offset_invariance_detail;
  return make_property<RopeCase>(
      {.id = "rope.offset_invariance",
       .statement =
           "Rotating a whole sequence at an offset t (padding, a KV cache) leaves every q_i.k_j score unchanged.",
       .family = Family::rope,
       .op = Op::rope_apply,
       .convention_free = true,
       .pinnable = true},
      cases, check);
}

}  // namespace pecheck::props
