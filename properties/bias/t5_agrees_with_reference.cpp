// Theorem: every T5 bias entry is exactly the table entry of the bucket of p_j - p_i (HF's
// _relative_position_bucket evaluated exactly), or of the neighbouring bucket where the exact
// log coordinate lies within 2^-12 of an integer.
// Doc: docs/properties/t5.agrees_with_reference.md
#include "harness/runner.hpp"
#include "properties/catalogue.hpp"
#include "properties/bias/t5_cases.hpp"
#include "reference/t5.hpp"

namespace pecheck::props {

namespace t5_agrees_with_reference_detail {
namespace {

rc::Gen<T5Case> cases(DType) { return t5_case_gen(); }

Outcome check(Encoder& enc, DType dt, const T5Case& c) {
  Outcome o;
  const std::size_t H = static_cast<std::size_t>(c.spec.heads), n = c.positions.size();
  const auto table = gen::values(c.data, 1, static_cast<std::size_t>(c.spec.num_buckets) * H, dt);
  const auto out = encoder_t5(enc, dt, c, table, o.failure);
  if (!o.failure.empty()) return o;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const std::int64_t rel = c.positions[j] - c.positions[i];
      const ref::T5Bucket b = ref::t5_bucket<Real>(c.spec, rel, tol::kT5TieWindow);
      for (std::size_t h = 0; h < H; ++h) {
        const float got = out[(h * n + i) * n + j];
        const auto entry = [&](int bucket) { return table[static_cast<std::size_t>(bucket) * H + h]; };
        if (got == entry(b.bucket) || (b.alternative && got == entry(*b.alternative))) continue;
        o.failure = fmt::format("head {} query {} key {} (p_j - p_i = {}): bias {:.9g}, expected table[{}] = {:.9g}{}",
                                h, i, j, rel, got, b.bucket, entry(b.bucket),
                                b.alternative ? fmt::format(" (or table[{}] at this near-tie)", *b.alternative) : "");
        return o;
      }
    }
  return o;
}

}  // namespace
}  // namespace t5_agrees_with_reference_detail

Property t5_agrees_with_reference() {
  using namespace t5_agrees_with_reference_detail;
  return make_property<T5Case>({.id = "t5.agrees_with_reference",
                                .statement = "Each T5 bias entry is the table entry of the exact bucket of p_j - p_i.",
                                .family = Family::t5,
                                .op = Op::t5_bias,
                                .pinnable = true},
                               cases, check);
}

}  // namespace pecheck::props
