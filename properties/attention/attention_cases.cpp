#include "properties/attention/attention_cases.hpp"

#include <algorithm>
#include <cmath>
#include <span>
#include <tuple>

#include "harness/rope_measure.hpp"
#include "reference/alibi.hpp"
#include "reference/attention.hpp"
#include "reference/t5.hpp"

namespace pecheck::props {

std::string_view logit_shape_name(LogitShape s) {
  switch (s) {
    case LogitShape::unit:
      return "unit logits";
    case LogitShape::rising:
      return "rising by tile";
    case LogitShape::spike_past_edge:
      return "spike past the first edge";
    case LogitShape::spike_last_key:
      return "spike on the last key";
  }
  return "?";
}

namespace {

/// The logit each key j adds to every query row, for a shaped case (LogitShape).
double shaped_logit(const AttentionCase& c, std::size_t j) {
  const std::size_t tile = static_cast<std::size_t>(c.tile), n = c.n();
  switch (c.shape) {
    case LogitShape::unit:
      return 0;
    case LogitShape::rising:
      return 1.5 * static_cast<double>(j / tile);
    case LogitShape::spike_past_edge:
      return j == std::min(tile, n - 1) ? 6 : 0;
    case LogitShape::spike_last_key:
      return j == n - 1 ? 6 : 0;
  }
  return 0;
}

/// The dim the common direction lies on: for RoPE the first of its slowest pair, which turns by
/// base^(-(d-2)/d) radians a token (~1e-4 at the bases drawn), so the shape survives the rotation
/// across the few hundred tokens of a case; any dim for the encodings that leave Q and K alone.
std::size_t shaping_dim(const AttentionSpec& s) {
  const std::size_t d = static_cast<std::size_t>(s.head_dim);
  if (s.pe != AttentionPE::rope) return d - 1;
  return s.rope_layout == RopeLayout::interleaved ? d - 2 : d / 2 - 1;
}

/// Adds the shape to Q and K (every head): `lift` to each query row's shaping dim, and to key j's
/// the amount that makes scale * lift * k_j equal shaped_logit(j); rounded to the dtype.
void shape_logits(const AttentionCase& c, DType dt, AttentionData& x) {
  const AttentionSpec& s = c.spec;
  const double lift = 2, per_logit = 1 / (s.effective_scale() * lift);
  const std::size_t d = static_cast<std::size_t>(s.head_dim), at = shaping_dim(s);
  for (std::size_t r = 0; r < x.q.size() / d; ++r) x.q[r * d + at] = round_to(dt, x.q[r * d + at] + lift);
  const std::size_t kv = static_cast<std::size_t>(s.kv_count());
  for (std::size_t j = 0; j < c.n(); ++j)
    for (std::size_t g = 0; g < kv; ++g) {
      float& e = x.k[(j * kv + g) * d + at];
      e = round_to(dt, e + shaped_logit(c, j) * per_logit);
    }
}

}  // namespace

AttentionData attention_data(const AttentionCase& c, DType dt) {
  AttentionData x{gen::values(c.data, 1, c.size(), dt, c.qk_scale), gen::values(c.data, 2, c.kv_size(), dt, c.qk_scale),
                  gen::values(c.data, 3, c.kv_size(), dt), gen::values(c.data, 4, c.table_size(), dt)};
  if (c.tile > 0) shape_logits(c, dt, x);
  return x;
}

std::vector<double> errors_from_exact(const AttentionCase& c, const AttentionData& x, const std::vector<float>& out,
                                      std::vector<double>& expected) {
  std::vector<double> err(out.size());
  if (c.n() <= kOracleMinN) {
    const auto exact =
        ref::attention<Real>(c.spec, c.positions, {to_real(x.q), to_real(x.k), to_real(x.v)}, to_real(x.table));
    for (std::size_t i = 0; i < out.size(); ++i) {
      err[i] = ref::to_double(Real(out[i]) - exact[i]);
      expected.push_back(ref::to_double(exact[i]));
    }
  } else {
    const auto widen = [](const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); };
    expected = ref::attention<double>(c.spec, c.positions, {widen(x.q), widen(x.k), widen(x.v)}, widen(x.table));
    for (std::size_t i = 0; i < out.size(); ++i) err[i] = double{out[i]} - expected[i];
  }
  accept_t5_edges(c, x, out, expected, err);
  return err;
}

void draw_t5(AttentionSpec& s, int buckets, int max_distance_over, bool bidirectional, std::size_t n) {
  s.t5_buckets = buckets;
  s.t5_bidirectional = bidirectional;
  s.t5_max_distance = s.t5().max_exact() + max_distance_over;
  const auto tied = [&] {
    for (std::size_t dist = 1; dist < n; ++dist)
      for (const std::int64_t rel : {static_cast<std::int64_t>(dist), -static_cast<std::int64_t>(dist)})
        if (ref::t5_bucket<double>(s.t5(), rel, tol::kT5TieWindow).alternative) return true;
    return false;
  };
  while (tied()) ++s.t5_max_distance;
}

rc::Gen<std::tuple<int, int, bool>> t5_bucketing() {
  return rc::gen::tuple(rc::gen::element(4, 8, 16, 32), rc::gen::inRange(1, 128), rc::gen::arbitrary<bool>());
}

rc::Gen<AttentionCase> attention_case_gen(DType dt, std::vector<AttentionPE> pes, bool allow_causal, int min_n) {
  return rc::gen::mapcat(rc::gen::elementOf(pes), [dt, allow_causal, min_n](AttentionPE pe) {
    // RoPE and the sinusoid need even widths; the others take any head_dim.
    const bool even = pe == AttentionPE::rope || pe == AttentionPE::sinusoidal;
    // Those two transform Q and K; rounded to bf16 or f16 the transform moves large logits by
    // more than the softmax can absorb (see the header).
    const bool large_logits = dt == DType::f32 || !even;
    return rc::gen::apply(
        [pe, allow_causal](int heads, int d, bool causal, std::vector<std::int64_t> pos_n, double base,
                           RopeLayout layout, int K, std::uint32_t data, std::uint32_t perm, double qk_scale,
                           std::tuple<int, int, bool> t5) {
          AttentionSpec s;
          s.heads = heads;
          s.head_dim = d;
          s.causal = allow_causal && causal;
          s.pe = pe;
          s.pe_base = base;
          s.rope_layout = layout;
          s.shaw_max_distance = K;
          std::vector<std::int64_t> positions(static_cast<std::size_t>(pos_n[1]));
          for (std::size_t i = 0; i < positions.size(); ++i) positions[i] = pos_n[0] + static_cast<std::int64_t>(i);
          if (pe == AttentionPE::t5) draw_t5(s, std::get<0>(t5), std::get<1>(t5), std::get<2>(t5), positions.size());
          return AttentionCase{s, positions, data, perm, qk_scale};
        },
        rc::gen::inRange(1, 4), even ? gen::even_dim(32) : rc::gen::inRange(1, 33), rc::gen::arbitrary<bool>(),
        rc::gen::mapcat(rc::gen::inRange(min_n, 11),
                        [](int n) {
                          return rc::gen::map(gen::position_below(tol::kMaxPosition - n), [n](std::int64_t start) {
                            return std::vector<std::int64_t>{start, n};
                          });
                        }),
        gen::base(), gen::rope_layout(), rc::gen::inRange(0, 5), gen::data_seed(), gen::data_seed(),
        large_logits ? rc::gen::weightedOneOf<double>({{6, rc::gen::just(1.0)}, {1, rc::gen::element(4.0, 16.0, 64.0)}})
                     : rc::gen::just(1.0),
        pe == AttentionPE::t5 ? t5_bucketing() : rc::gen::just(std::tuple<int, int, bool>{32, 120, true}));
  });
}

rc::Gen<AttentionCase> attention_long_case_gen(DType dt) {
  // Tile edges 2^k - 1, 2^k, 2^k + 1, weighted down as n^2 grows: a 2048-token case costs 1000
  // times a 64-token one, in the encoder and in the oracle alike; from 512 tokens on, one head of
  // 64 dims (what a tile bug needs is the length, not the width).
  const auto n = rc::gen::mapcat(rc::gen::weightedOneOf<int>({{8, rc::gen::just(64)},
                                                              {8, rc::gen::just(128)},
                                                              {6, rc::gen::just(256)},
                                                              {3, rc::gen::just(512)},
                                                              {2, rc::gen::just(1024)},
                                                              {1, rc::gen::just(2048)}}),
                                 [](int edge) { return rc::gen::element(edge - 1, edge, edge + 1); });
  const auto shape = rc::gen::mapcat(n, [](int tokens) {
    const bool wide = tokens < 500;
    return rc::gen::tuple(
        rc::gen::just(tokens), wide ? rc::gen::inRange(1, 3) : rc::gen::just(1),
        wide ? rc::gen::weightedOneOf<int>({{3, rc::gen::just(64)}, {2, rc::gen::just(128)}, {1, rc::gen::just(256)}})
             : rc::gen::just(64));
  });
  return rc::gen::apply(
      [dt](AttentionPE pe, std::tuple<int, int, int> nhd, bool causal, std::int64_t start, double base,
           RopeLayout layout, int K, std::uint32_t data, bool mqa, std::tuple<int, int, bool> t5) {
        const auto [n, heads, d] = nhd;
        AttentionSpec s;
        s.heads = heads;
        // Two query heads over one K/V head (MQA) in half the two-head cases; not with the sinusoid.
        s.kv_heads = heads == 2 && mqa && pe != AttentionPE::sinusoidal ? 1 : 0;
        s.head_dim = d;
        s.causal = causal;
        s.pe = pe;
        s.pe_base = base;
        s.rope_layout = layout;
        s.shaw_max_distance = K;
        std::vector<std::int64_t> positions(static_cast<std::size_t>(n));
        for (std::size_t i = 0; i < positions.size(); ++i) positions[i] = start + static_cast<std::int64_t>(i);
        if (pe == AttentionPE::t5) draw_t5(s, std::get<0>(t5), std::get<1>(t5), std::get<2>(t5), positions.size());
        // In bf16 and f16 the sinusoid added to Q and K and rounded moves logits by more than the
        // softmax absorbs at head_dim 256, and at 128 under a doubled stated scale (the bound passes
        // 2/u: 514 u at seed 1): 64 at most.
        if (dt != DType::f32 && pe == AttentionPE::sinusoidal) s.head_dim = std::min(s.head_dim, 64);
        return AttentionCase{s, positions, data, 0, 1.0};
      },
      rc::gen::elementOf(all_attention_pes()), shape, rc::gen::arbitrary<bool>(),
      gen::position_below(tol::kMaxPosition - 2050), gen::base(), gen::rope_layout(), rc::gen::inRange(0, 5),
      gen::data_seed(), rc::gen::arbitrary<bool>(), t5_bucketing());
}

rc::Gen<AttentionCase> with_grouped_queries(rc::Gen<AttentionCase> cases) {
  return rc::gen::mapcat(std::move(cases), [](AttentionCase c) {
    if (c.spec.pe == AttentionPE::sinusoidal) return rc::gen::just(c);
    return rc::gen::map(
        rc::gen::weightedOneOf<int>({{3, rc::gen::just(1)}, {1, rc::gen::just(2)}, {1, rc::gen::just(4)}}),
        [c](int group) {
          AttentionCase g = c;
          if (group > 1) g.spec.kv_heads = c.spec.heads, g.spec.heads = c.spec.heads * group;
          return g;
        });
  });
}

rc::Gen<AttentionCase> with_windows(rc::Gen<AttentionCase> cases) {
  return rc::gen::mapcat(std::move(cases), [](AttentionCase c) {
    if (!c.spec.causal) return rc::gen::just(c);
    const int n = static_cast<int>(c.n());
    return rc::gen::map(rc::gen::weightedOneOf<int>({{3, rc::gen::just(0)},
                                                     {1, rc::gen::just(1)},
                                                     {2, rc::gen::inRange(2, n + 2)},
                                                     {1, rc::gen::inRange(2, 2 * n + 2)}}),
                        [c](int window) {
                          AttentionCase w = c;
                          w.spec.window = window;
                          return w;
                        });
  });
}

rc::Gen<AttentionCase> with_queries(rc::Gen<AttentionCase> cases) {
  return rc::gen::mapcat(std::move(cases), [](AttentionCase c) {
    const int n = static_cast<int>(c.n());
    if (n < 2) return rc::gen::just(c);
    return rc::gen::map(
        rc::gen::weightedOneOf<int>({{6, rc::gen::just(0)}, {1, rc::gen::just(1)}, {1, rc::gen::inRange(1, n)}}),
        [c](int queries) {
          AttentionCase w = c;
          w.spec.queries = queries;
          return w;
        });
  });
}

rc::Gen<AttentionCase> with_scales(rc::Gen<AttentionCase> cases) {
  return rc::gen::mapcat(std::move(cases), [](AttentionCase c) {
    const double d = c.spec.head_dim, standard = 1 / std::sqrt(d);
    return rc::gen::map(rc::gen::weightedOneOf<double>({{6, rc::gen::just(0.0)},
                                                        {1, rc::gen::just(1 / d)},
                                                        {1, rc::gen::just(standard / 2)},
                                                        {1, rc::gen::just(2 * standard)}}),
                        [c](double scale) {
                          AttentionCase s = c;
                          if (scale > 0) s.spec.scale = scale;
                          return s;
                        });
  });
}

namespace {
/// Positions `stride` apart from the first, moved down as a whole if the last would pass the
/// largest position drawn (2^24 - 1).
void spread(std::vector<std::int64_t>& positions, std::int64_t stride) {
  const std::int64_t n = static_cast<std::int64_t>(positions.size()), span = (n - 1) * stride;
  const std::int64_t first = std::min(positions.front(), tol::kMaxPosition - span);
  for (std::int64_t i = 0; i < n; ++i) positions[static_cast<std::size_t>(i)] = first + i * stride;
}
}  // namespace

rc::Gen<AttentionCase> with_rope_rules(rc::Gen<AttentionCase> cases) {
  return rc::gen::mapcat(std::move(cases), [](AttentionCase c) {
    if (c.spec.pe != AttentionPE::rope) return rc::gen::just(c);
    const int d = c.spec.head_dim;
    const auto rotary = rc::gen::weightedOneOf<int>(
        {{1, rc::gen::just(d)}, {2, rc::gen::map(rc::gen::inRange(1, d / 2 + 1), [](int p) { return 2 * p; })}});
    return rc::gen::mapcat(rotary, [c](int rot) {
      // Tokens 997 positions apart in half the cases: over a few consecutive positions RoPE's slow
      // pairs barely turn, so a kernel that ignores rotary_dim or the scaling rule moves the logits
      // by less than bf16's bound; 997 apart they turn by radians.
      return rc::gen::map(rc::gen::pair(gen::rope_scaling(rot), rc::gen::arbitrary<bool>()),
                          [c, rot](std::pair<RopeScaling, bool> rs) {
                            AttentionCase e = c;
                            e.spec.rotary_dim = rot;
                            e.spec.rope_scaling = rs.first;
                            if (rs.second) spread(e.positions, 997);
                            return e;
                          });
    });
  });
}

rc::Gen<AttentionCase> causal_case_gen(DType dt) {
  const auto causal = [](AttentionCase c) {
    c.spec.causal = true;
    return c;
  };
  return with_windows(rc::gen::weightedOneOf<AttentionCase>(
      {{3, rc::gen::map(with_rope_rules(with_grouped_queries(attention_case_gen(dt, all_attention_pes(), false, 2))),
                        causal)},
       {1, rc::gen::map(attention_long_case_gen(dt), causal)}}));
}

namespace {
/// Rows [first, first + count) of a (rows, width) tensor.
std::vector<float> row_slice(const std::vector<float>& x, std::size_t first, std::size_t count, std::size_t width) {
  const auto from = x.begin() + static_cast<std::ptrdiff_t>(first * width);
  return {from, from + static_cast<std::ptrdiff_t>(count * width)};
}
}  // namespace

std::vector<float> encoder_attention(Encoder& enc, DType dt, const AttentionCase& c, const AttentionData& x,
                                     const std::vector<std::int64_t>& positions, std::string& failure) {
  auto out = poisoned(c.size());
  enc.run(Attention{c.spec, dt, positions, x.q, x.k, x.v, x.table, out});
  if (failure.empty()) failure = classify_outputs(dt, out, "o");
  return out;
}

std::vector<float> encoder_attention_prefix(Encoder& enc, DType dt, const AttentionCase& c, const AttentionData& x,
                                            std::size_t tokens, int queries, std::string& failure) {
  AttentionCase call = c;
  call.positions.resize(tokens);
  call.spec.queries = queries;
  const std::size_t w = static_cast<std::size_t>(c.spec.width()), kw = static_cast<std::size_t>(c.spec.kv_width()),
                    rows = call.spec.query_count(tokens);
  const AttentionData cx{row_slice(x.q, tokens - rows, rows, w), row_slice(x.k, 0, tokens, kw),
                         row_slice(x.v, 0, tokens, kw), x.table};
  return encoder_attention(enc, dt, call, cx, call.positions, failure);
}

namespace {
/// |x_(t,h)| for every token t and head h of a (seq, heads, head_dim) tensor, row t * heads + h.
std::vector<double> head_norms(const std::vector<double>& x, const AttentionSpec& s) {
  const std::size_t d = static_cast<std::size_t>(s.head_dim);
  std::vector<double> norms(x.size() / d);
  for (std::size_t r = 0; r < norms.size(); ++r) {
    double acc = 0;
    for (std::size_t c = 0; c < d; ++c) acc += x[r * d + c] * x[r * d + c];
    norms[r] = std::sqrt(acc);
  }
  return norms;
}

/// RoPE's error budget per pair of every (token, head) row of a (seq, heads, head_dim) tensor:
/// `norm[r][p]` = |x'_p|, the transformed pair's norm, and `error[r][p]` = e_p rho max(|x'_p|, |x_p|)
/// in u32, pair p of the token at positions[first + r / heads] within e_p u of its input (section 6,
/// T). Pass-through dims are copies, exact by RoPE's contract: they enter T with no error.
struct PairBudget {
  std::vector<std::vector<double>> norm, error;
};

PairBudget rope_pair_budget(const RopeSpec& r, int heads, int head_dim, const std::vector<double>& in,
                            const std::vector<double>& out, std::span<const double> contract_of_token, double rho) {
  const std::size_t d = static_cast<std::size_t>(head_dim), rows = in.size() / d, H = static_cast<std::size_t>(heads);
  PairBudget b{std::vector<std::vector<double>>(rows), std::vector<std::vector<double>>(rows)};
  for (std::size_t row = 0; row < rows; ++row)
    for (int p = 0; p < r.rotary_dim / 2; ++p) {
      const auto [i, j] = ref::rope_pair(r, p);
      const std::size_t a = row * d + static_cast<std::size_t>(i), c = row * d + static_cast<std::size_t>(j);
      const double turned = std::hypot(out[a], out[c]), given = std::hypot(in[a], in[c]);
      b.norm[row].push_back(turned);
      b.error[row].push_back(
          contract_of_token[(row / H) * static_cast<std::size_t>(r.rotary_dim / 2) + static_cast<std::size_t>(p)] *
          rho * std::max(turned, given));
    }
  return b;
}
}  // namespace

AttentionBound attention_bound(const AttentionCase& c, DType dt, const AttentionData& x, tol::Contract contract) {
  const AttentionSpec& s = c.spec;
  const std::size_t n = c.n(), H = static_cast<std::size_t>(s.heads), d = static_cast<std::size_t>(s.head_dim),
                    KV = static_cast<std::size_t>(s.kv_count()), off = s.query_offset(n);
  ref::AttentionInputs<double> in{{x.q.begin(), x.q.end()}, {x.k.begin(), x.k.end()}, {x.v.begin(), x.v.end()}};
  const auto t = ref::attention_transform_inputs<double>(s, c.positions, in);
  const std::vector<double> qn = head_norms(t.q, s), kn = head_norms(t.k, s);
  const double E = tol::kPositionContract, rho = unit_roundoff(dt) / 0x1p-24;
  // RoPE's contract is per pair, e_p u |x_p| against the input pair (the input's norm too, for a
  // rule whose cos/sin factor is below 1: an explicit LongRoPE attention_factor < 1): e_p is the
  // contract's bound on pair p at the token's position (E under exact and rounded-p). T sums it pair
  // by pair over each logit (section 6), so a pair whose angle errs most (fp32-angles' fastest)
  // weighs only its own share of q'.k'.
  PairBudget q_pairs, k_pairs;
  if (s.pe == AttentionPE::rope) {
    const RopeSpec r = s.rope();
    const std::size_t pairs = static_cast<std::size_t>(r.rotary_dim / 2);
    const measure::ContractBounds bounds(dt, r);
    std::vector<double> e(n * pairs);
    for (std::size_t tok = 0; tok < n; ++tok)
      for (std::size_t p = 0; p < pairs; ++p)
        e[tok * pairs + p] = bounds.at(contract, static_cast<int>(p), c.positions[tok]);
    q_pairs = rope_pair_budget(r, s.heads, s.head_dim, in.q, t.q, std::span<const double>(e).subspan(off * pairs), rho);
    k_pairs = rope_pair_budget(r, s.kv_count(), s.head_dim, in.k, t.k, e, rho);
  }
  tol::AttentionMagnitudes b{.dtype = dt,
                             .n = static_cast<int>(n),
                             .dot_length = s.head_dim * (s.pe == AttentionPE::shaw ? 2 : 1),
                             .head_dim = s.head_dim,
                             .scale = s.effective_scale()};
  // The double oracle's transform, in u64 (docs/error-model.md, attention.oracle_f64): each angle
  // within |theta| (ln base + 3) u64 (the frequency from pow, the product with the position),
  // cos and sin within 2 u64, the rotation's two products and sum within (1 + sqrt 2) u64.
  double max_pos = 0;
  for (const auto p : c.positions) max_pos = std::max(max_pos, std::fabs(static_cast<double>(p)));
  const double angle64 = max_pos * (std::fabs(std::log(s.pe_base)) + 3) + 2;
  tol::AttentionMagnitudes b64 = b;
  const auto slopes = ref::alibi_slopes<double>(s.heads);
  // T5's bias at a distance: at a bucket edge the other bucket's too, which the judge accepts
  // (accept_t5_edges).
  T5BucketsByDistance t5_bucket(s.t5());
  const auto t5_bias = [&](std::int64_t rel, std::size_t h) {
    const ref::T5Bucket& b = t5_bucket(rel);
    const auto entry = [&](int bucket) { return std::fabs(double{x.table[static_cast<std::size_t>(bucket) * H + h]}); };
    return std::max(entry(b.bucket), b.alternative ? entry(*b.alternative) : 0.0);
  };
  // Query row r is token i = off + r (its position, its mask, its biases).
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t i = off; i < n; ++i)
      for (std::size_t j = s.first_key(i); j < (s.causal ? i + 1 : n); ++j) {
        const double q = qn[(i - off) * H + h],
                     k = kn[j * KV + static_cast<std::size_t>(s.kv_head_of(static_cast<int>(h)))];
        double w = q * k;
        if (s.pe == AttentionPE::shaw) {
          const std::size_t r = ref::shaw_row(s.shaw(), c.positions[i], c.positions[j]) * d;
          double rn = 0;
          for (std::size_t e = 0; e < d; ++e) rn += double{x.table[r + e]} * x.table[r + e];
          w += q * std::sqrt(rn);
        }
        b.max_weighted = std::max(b.max_weighted, w);
        // Transform errors in u32: RoPE pair by pair, |q^_p - q'_p| <= dq_p, so the logit within
        // sum_p dq_p |k'_p| + |q'_p| dk_p + dq_p dk_p; the sinusoid normwise, within u_s |x'| (the
        // add, rounded to storage) + E u_s sqrt(d) (the PE itself).
        double dq = 0, dk = 0, dq64 = 0, dk64 = 0, transform = 0;
        if (s.pe == AttentionPE::rope) {
          const std::size_t g = static_cast<std::size_t>(s.kv_head_of(static_cast<int>(h)));
          const std::size_t qr = (i - off) * H + h, kr = j * KV + g;
          for (std::size_t p = 0; p < q_pairs.norm[qr].size(); ++p) {
            const double eq = q_pairs.error[qr][p], ek = k_pairs.error[kr][p];
            transform += eq * k_pairs.norm[kr][p] + q_pairs.norm[qr][p] * ek + eq * ek * 0x1p-24;
          }
          dq64 = (angle64 + 3) * q, dk64 = (angle64 + 3) * k;
        }
        if (s.pe == AttentionPE::sinusoidal) {
          dq = rho * (q + E * std::sqrt(double(d))), dk = rho * (k + E * std::sqrt(double(d)));
          transform = dq * k + q * dk + dq * dk * 0x1p-24;
          dq64 = q + angle64 * std::sqrt(double(d)), dk64 = k + angle64 * std::sqrt(double(d));
        }
        b.max_transform = std::max(b.max_transform, transform);
        b64.max_transform = std::max(b64.max_transform, dq64 * k + q * dk64 + dq64 * dk64 * 0x1p-53);
        if (s.pe == AttentionPE::alibi)
          b.max_bias =
              std::max(b.max_bias,
                       std::fabs(*ref::alibi_bias<double>(s.alibi(), slopes[h], i, j, c.positions[i], c.positions[j])));
        if (s.pe == AttentionPE::t5) b.max_bias = std::max(b.max_bias, t5_bias(c.positions[j] - c.positions[i], h));
      }
  double max_v = 0;
  for (double v : t.v) max_v = std::max(max_v, std::fabs(v));
  b.max_v = std::max(max_v, min_normal(dt));
  if (s.pe == AttentionPE::sinusoidal) b.v_transform = rho * (max_v + E), b64.v_transform = max_v + angle64;
  b64.max_weighted = b.max_weighted, b64.max_bias = b.max_bias, b64.max_v = b.max_v;
  // Every contract below exact on attention's ladder lets P be rounded to the storage dtype where it
  // meets V (the rounded-P contract; dtype-trig and fp32-angles add the RoPE's own, above).
  const double output =
      contract == tol::Contract::exact ? tol::attention_output(b) : tol::attention_output_rounded_p(b, dt);
  return {output, b.max_v, tol::attention_oracle_f64(b64) * 0x1p-53 / unit_roundoff(dt)};
}

Outcome agreement_with_exact(Encoder& enc, DType dt, const AttentionCase& c, const RunParams& params) {
  const AttentionData x = attention_data(c, dt);
  const AttentionBound b = attention_bound(c, dt, x, params.contract);
  const bool oracle = c.n() > kOracleMinN;
  const double bound = b.bound_u + (oracle ? b.oracle_u : 0.0);
  Outcome o{.bound_u = bound, .trivial = admits_any_output(bound, dt)};
  const auto out = encoder_attention(enc, dt, c, x, c.positions, o.failure);
  if (!o.failure.empty()) return o;
  std::vector<double> expected;
  const std::vector<double> err = errors_from_exact(c, x, out, expected);
  WorstOf worst;
  const std::size_t d = static_cast<std::size_t>(c.spec.head_dim), H = static_cast<std::size_t>(c.spec.heads),
                    off = c.spec.query_offset(c.n());
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::size_t token = off + i / d / H;
    worst.offer(std::fabs(err[i]) / (unit_roundoff(dt) * b.max_v), [&] {
      // For a tiled case, how many key tiles the query's visible keys span: what a tiling bug reaches.
      const std::size_t last = c.spec.causal ? token : c.n() - 1;
      const std::string tiles = c.tile > 0 ? fmt::format(", its keys over {} tiles of {}",
                                                         last / static_cast<std::size_t>(c.tile) + 1, c.tile)
                                           : "";
      return fmt::format("token {} head {} dim {}{} (got {}, {} {:.9g}; max|V'| = {:.4g})", token, i / d % H, i % d,
                         tiles, out[i], oracle ? "double oracle" : "exact", expected[i], b.max_v);
    });
  }
  return worst.store(o);
}

std::vector<std::size_t> permutation(std::size_t n, std::uint32_t seed) {
  std::vector<std::size_t> p(n);
  for (std::size_t i = 0; i < n; ++i) p[i] = i;
  std::uint64_t state = seed;
  for (std::size_t i = n; i > 1; --i) {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    std::swap(p[i - 1], p[z % i]);
  }
  return p;
}

std::vector<float> permute_rows(const std::vector<float>& x, const std::vector<std::size_t>& perm, std::size_t width) {
  std::vector<float> y(x.size());
  for (std::size_t i = 0; i < perm.size(); ++i)
    std::copy_n(x.begin() + static_cast<std::ptrdiff_t>(perm[i] * width), width,
                y.begin() + static_cast<std::ptrdiff_t>(i * width));
  return y;
}

double max_abs_diff_u(const std::vector<float>& a, const std::vector<float>& b, DType dt, double scale,
                      std::string* where) {
  double worst = 0;
  std::size_t at = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = std::fabs(double{a[i]} - b[i]);
    if (d > worst || std::isnan(d)) worst = d, at = i;
  }
  if (where) *where = fmt::format("element {} ({} vs {})", at, a.empty() ? 0.f : a[at], b.empty() ? 0.f : b[at]);
  return worst / (unit_roundoff(dt) * scale);
}

}  // namespace pecheck::props

namespace pecheck {
// The case type erased once for every theorem file (see erased() in harness/runner.hpp).
template rc::Gen<AnyCase> erased(rc::Gen<props::AttentionCase>);
}  // namespace pecheck
