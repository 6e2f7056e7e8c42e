// Theorem: attention over n keys is one softmax over all of them, however a kernel tiles them: with
// n at and across the key tiles kernels use (16 to 256, whole and ragged) and the row maximum in a
// later tile, the output is within the derived bound of the exact one.
// Doc: docs/properties/attention.tile_edges.md
#include "harness/runner.hpp"
#include "properties/attention/attention_cases.hpp"
#include "properties/catalogue.hpp"

namespace pecheck::props {

namespace attention_tile_edges_detail {
namespace {

/// One key tile B and the number of keys around it: one tile less a key (a lone ragged tile),
/// k B - 1, k B, k B + 1 (an edge crossed by one key) or a ragged k B + r (2 <= r <= B - 2), for
/// k up to 3 (2 at B = 256, so that a case stays below 800 keys).
rc::Gen<std::pair<int, int>> tile_and_keys() {
  const auto tile = rc::gen::weightedOneOf<int>({{2, rc::gen::just(16)},
                                                 {2, rc::gen::just(32)},
                                                 {2, rc::gen::just(64)},
                                                 {2, rc::gen::just(128)},
                                                 {1, rc::gen::just(256)}});
  return rc::gen::mapcat(tile, [](int b) {
    return rc::gen::map(rc::gen::tuple(rc::gen::inRange(1, b == 256 ? 3 : 4),
                                       rc::gen::weightedOneOf<int>({{1, rc::gen::just(-1)},
                                                                    {1, rc::gen::just(0)},
                                                                    {1, rc::gen::just(1)},
                                                                    {2, rc::gen::inRange(2, b - 1)}})),
                        [b](std::tuple<int, int> kr) {
                          const auto [k, r] = kr;
                          return std::pair{b, k * b + r};
                        });
  });
}

/// The query rows: one (a decode step: flash-decoding splits exactly these keys), a chunk of 2 to
/// 16 (the last tokens), or every token when n is at most 160 (a prefill; beyond, the n^2 cost).
rc::Gen<int> query_rows(int n) {
  if (n > 160) return rc::gen::weightedOneOf<int>({{2, rc::gen::just(1)}, {1, rc::gen::inRange(2, 17)}});
  return rc::gen::weightedOneOf<int>({{2, rc::gen::just(1)}, {1, rc::gen::inRange(2, 17)}, {2, rc::gen::just(0)}});
}

/// Cases: a tile and n from tile_and_keys, a LogitShape (rising and the two spikes put the
/// maximum in a later tile, three in four cases), no PE (weight 4), RoPE at a base of 1e4 or more
/// (its slowest pair carries the shape) or ALiBi (1 each), head_dim 32, 64 or 128, one or two
/// K/V heads with one or two query heads each, causal or not, a stated scale in one case in three.
rc::Gen<AttentionCase> cases(DType) {
  const auto spec = rc::gen::apply(
      [](AttentionPE pe, int kv, int group, int d, bool causal, double base, RopeLayout layout) {
        AttentionSpec s;
        s.heads = kv * group;
        s.kv_heads = group > 1 ? kv : 0;
        s.head_dim = d;
        s.causal = causal;
        s.pe = pe;
        s.pe_base = base;
        s.rope_layout = layout;
        return s;
      },
      rc::gen::weightedOneOf<AttentionPE>({{4, rc::gen::just(AttentionPE::none)},
                                           {1, rc::gen::just(AttentionPE::rope)},
                                           {1, rc::gen::just(AttentionPE::alibi)}}),
      rc::gen::inRange(1, 3), rc::gen::weightedOneOf<int>({{3, rc::gen::just(1)}, {1, rc::gen::just(2)}}),
      rc::gen::weightedOneOf<int>({{1, rc::gen::just(32)}, {3, rc::gen::just(64)}, {1, rc::gen::just(128)}}),
      rc::gen::arbitrary<bool>(), rc::gen::element(1e4, 5e5, 1e6), gen::rope_layout());
  const auto shape =
      rc::gen::element(LogitShape::unit, LogitShape::rising, LogitShape::spike_past_edge, LogitShape::spike_last_key);
  const auto shaped = rc::gen::apply(
      [](AttentionSpec s, std::pair<int, int> bn, LogitShape sh, std::int64_t start, std::uint32_t data) {
        const auto [b, n] = bn;
        AttentionCase c{.spec = s, .data = data, .tile = b, .shape = sh};
        for (int i = 0; i < n; ++i) c.positions.push_back(start + i);
        return c;
      },
      spec, tile_and_keys(), shape, gen::position_below(tol::kMaxPosition - 800), gen::data_seed());
  return with_scales(rc::gen::mapcat(shaped, [](AttentionCase c) {
    return rc::gen::map(query_rows(static_cast<int>(c.n())), [c](int q) {
      AttentionCase w = c;
      w.spec.queries = q;
      return w;
    });
  }));
}

}  // namespace
}  // namespace attention_tile_edges_detail

Property attention_tile_edges() {
  using namespace attention_tile_edges_detail;
  return make_property<AttentionCase>(
      {.id = "attention.tile_edges",
       .statement =
           "Attention is one softmax over all its keys however they are tiled: with n at and across the key "
           "tiles kernels use (16 to 256, whole and ragged) and the row maximum in a later tile, the output is "
           "within the derived bound of the exact one.",
       .family = Family::attention,
       .op = Op::attention,
       .pinnable = true},
      cases, agreement_with_exact);
}

}  // namespace pecheck::props
