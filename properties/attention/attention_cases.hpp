// Cases, the call into the encoder and the per-case bound shared by the attention theorems.
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "harness/generators.hpp"
#include "harness/measure.hpp"
#include "harness/runner.hpp"
#include "harness/tolerance.hpp"
#include "interface/encoder.hpp"
#include "reference/t5.hpp"

namespace pecheck::props {

/// How attention.tile_edges shapes a case's logits around its key tile (AttentionCase::tile):
/// where the row maximum lies decides which tiling bug an output can show.
enum class LogitShape {
  unit,             ///< no shaping: logits of order 1, so keys a kernel adds by mistake weigh as much as real ones
  rising,           ///< each key tile's logits 1.5 above the previous tile's: the running max moves at every edge
  spike_past_edge,  ///< one key 6 above the rest, the first key of the second tile
  spike_last_key,   ///< one key 6 above the rest, the last key (in a ragged tile when n is not a multiple)
};
std::string_view logit_shape_name(LogitShape s);

struct AttentionCase {
  AttentionSpec spec;
  std::vector<std::int64_t> positions;
  std::uint32_t data = 0;
  std::uint32_t perm = 0;  ///< seed of a permutation, for the theorems that permute tokens
  double qk_scale = 1;     ///< magnitude of Q and K entries: large values give logits that overflow exp
  int prefill = 0;         ///< attention.decode_equivalence: tokens prefilled before decoding
  int step = 0;            ///< and the queries of each decode call (1: token by token)
  int tile = 0;            ///< attention.tile_edges: the key tile (keys) its logits are shaped around; 0: none
  LogitShape shape = LogitShape::unit;

  std::size_t n() const { return positions.size(); }
  /// Q's and the output's size: the query rows (spec.queries, the last tokens; all n when 0).
  std::size_t size() const { return spec.query_count(n()) * static_cast<std::size_t>(spec.width()); }
  std::size_t kv_size() const { return n() * static_cast<std::size_t>(spec.kv_width()); }
  std::size_t table_size() const {
    if (spec.pe == AttentionPE::t5) return static_cast<std::size_t>(spec.t5_buckets * spec.heads);
    return spec.pe == AttentionPE::shaw ? static_cast<std::size_t>(spec.shaw().table_rows() * spec.head_dim) : 0;
  }
  std::string describe() const {
    // Long cases are consecutive positions: their first and last, and n, say it all.
    const std::string pos = n() > 16 ? fmt::format("{}..{} (n={})", positions.front(), positions.back(), n())
                                     : fmt::format("{}", fmt::join(positions, ","));
    return fmt::format("{} base={} pos=[{}] data={} perm={}{}{}{}", spec.describe(), short_number(spec.pe_base), pos,
                       data, perm, qk_scale == 1 ? std::string() : fmt::format(" qk_scale={}", qk_scale),
                       prefill > 0 ? fmt::format(" prefill={} step={}", prefill, step) : std::string(),
                       tile > 0 ? fmt::format(" tile={} shape={}", tile, logit_shape_name(shape)) : std::string());
  }
  std::vector<std::string> tags() const {
    std::vector<std::string> t{std::string(pe_name(spec.pe)), spec.causal ? "causal" : "full",
                               gen::position_class(positions.front()), qk_scale > 1 ? "large logits" : "unit logits",
                               n() > 128 ? "n > 128" : "n <= 128"};
    if (spec.queries > 0) t.push_back("queries < keys");
    if (spec.kv_count() != spec.heads) t.push_back("grouped-query");
    if (spec.window > 0) t.push_back("window");
    if (spec.scale) t.push_back("stated scale");
    if (tile > 0) {
      t.push_back(fmt::format("tile {}", tile));
      t.push_back(std::string(logit_shape_name(shape)));
      t.push_back(n() % static_cast<std::size_t>(tile) ? "ragged last tile" : "whole tiles");
    }
    return t;
  }
};

/// The raw inputs of a case, in the storage dtype.
struct AttentionData {
  std::vector<float> q, k, v, table;
};
/// Drawn from the case's data seed; a case with a tile has its logits shaped (LogitShape) by a
/// common direction added to every query row and, scaled per key, to the key rows.
AttentionData attention_data(const AttentionCase& c, DType dt);

/// Every way a position encoding enters attention (none included).
inline std::vector<AttentionPE> all_attention_pes() {
  return {AttentionPE::none,  AttentionPE::sinusoidal, AttentionPE::rope,
          AttentionPE::alibi, AttentionPE::shaw,       AttentionPE::t5};
}

/// T5's bucketing for a case of n consecutive tokens: num_buckets 4, 8, 16 or 32 (few, so that
/// short cases reach the log-spaced buckets), either direction, max_distance above max_exact; then
/// moved up until no distance below n lies within tol::kT5TieWindow of a bucket edge, where a
/// kernel's log may round either way (reference/t5.hpp): the t5 family judges those, not
/// attention.
void draw_t5(AttentionSpec& s, int buckets, int max_distance_over, bool bidirectional, std::size_t n);
rc::Gen<std::tuple<int, int, bool>> t5_bucketing();

/// Generator: pe drawn from `pes`, causal if allowed, n in [min_n, 10], positions consecutive from
/// an offset that may be huge, Q and K sometimes scaled up (4, 16, 64) so that logits reach
/// thousands and a softmax without max subtraction overflows. Not in bf16 or f16 with RoPE or the
/// sinusoid: their Q and K rounded to the dtype after the transform move logits of thousands by
/// tens, so the bound admits any output there (admits_any_output): such a case tests nothing.
rc::Gen<AttentionCase> attention_case_gen(DType dt, std::vector<AttentionPE> pes, bool allow_causal, int min_n);

/// Generator of long cases, for agreement against the double oracle: n on either side of the
/// key-tile edges kernels use (63/64/65, 127/128/129, ... 2047/2048/2049; the shorter ones drawn
/// more often, as they cost n^2 d), head_dim 64, 128 or 256 (the sinusoid in bf16 and f16 at 64:
/// there the PE added to Q and K and rounded moves logits by more than the softmax absorbs, and at
/// 128 a doubled stated scale or a bound of 2b passes 2/u), one or two heads, unit logits, every
/// pe. Cases above kOracleMinN tokens are the ones checked against the oracle.
rc::Gen<AttentionCase> attention_long_case_gen(DType dt);

/// The same cases with grouped-query attention drawn in: each case's heads become its K/V heads
/// and the query heads a group of 1 (MHA, weight 3), 2 or 4 times as many (weight 1 each); the
/// sinusoid stays MHA (spec/conventions.hpp says why).
rc::Gen<AttentionCase> with_grouped_queries(rc::Gen<AttentionCase> cases);

/// The same cases with sliding windows drawn in for the causal ones: none (weight 3), 1 (the
/// token alone, 1), 2..n+1 (2) or 2..2n+1 (1; at n or more, plain causal).
rc::Gen<AttentionCase> with_windows(rc::Gen<AttentionCase> cases);
/// The same cases with fewer queries than keys drawn in (one in four): the last 1 (a decode
/// step; half of those) or 1..n - 1 tokens (a chunk) query all n keys, the mask aligned
/// bottom-right (spec/conventions.hpp).
rc::Gen<AttentionCase> with_queries(rc::Gen<AttentionCase> cases);

/// The same cases with a stated scale drawn in (one in three): muP's 1/head_dim, or the standard
/// 1/sqrt(head_dim) halved or doubled (Gemma's query_pre_attn_scalar, a model's own), so that a
/// kernel that ignores the stated scale, or applies the default on top of it, fails.
rc::Gen<AttentionCase> with_scales(rc::Gen<AttentionCase> cases);

/// The same cases with RoPE's own spec drawn in for the RoPE ones: rotary_dim the head (weight
/// 1) or an even part of it (2: an ignored rotary_dim shows only in partial cases), and a scaling rule from
/// gen::rope_scaling (none half the time; linear, NTK, dynamic NTK, YaRN or Llama 3), and in half of them tokens 997
/// positions apart. For short cases: their reference is the 50-digit one, whose RoPE computes every rule exactly.
rc::Gen<AttentionCase> with_rope_rules(rc::Gen<AttentionCase> cases);

/// Causal cases as inference engines run them, for the theorems that split a call
/// (decode_equivalence, batch_invariance): short ones (every PE, RoPE's own spec, grouped-query,
/// n in [2, 10]) three times in four and long ones (attention_long_case_gen's, across key tiles)
/// once, windows drawn in.
rc::Gen<AttentionCase> causal_case_gen(DType dt);

inline constexpr std::size_t kOracleMinN = 32;

/// Whether a bound, in units u max|V'|, lets every output pass: exact outputs are convex
/// combinations of V' rows, so an output bounded by max|V'| errs by at most 2 max|V'|, and a bound
/// of 2/u or more cannot fail it. A case with such a bound is trivial (Outcome::trivial).
inline bool admits_any_output(double bound_u, DType dt) { return bound_u >= 2 / unit_roundoff(dt); }

/// The encoder's output for (a possibly permuted copy of) the case's data; failure on unclean output.
std::vector<float> encoder_attention(Encoder& enc, DType dt, const AttentionCase& c, const AttentionData& x,
                                     const std::vector<std::int64_t>& positions, std::string& failure);

/// The derived bound of docs/error-model.md for this case under `contract`: exact; rounded-p, P
/// rounded to the storage dtype before P.V; dtype-trig and fp32-angles, that and the RoPE inside
/// judged by the contract's per-pair bounds at each token's position. And the metric's scale
/// max|V'|. The
/// magnitudes it needs (norms, max|V'|, biases) are computed in double: they scale a bound, and
/// their relative error of ~1e-15 is immaterial there.
struct AttentionBound {
  double bound_u = 0;
  double max_v = 1;
  /// How far the double oracle (ref::attention<double>) may be from the exact output, in the same
  /// unit (tol::attention_oracle_f64): a check against the oracle adds it to bound_u.
  double oracle_u = 0;
};
AttentionBound attention_bound(const AttentionCase& c, DType dt, const AttentionData& x, tol::Contract contract);

/// The encoder's output for a shorter call made from the case's data, as a decode step or a
/// shorter prefill makes it: the first `tokens` tokens (their positions, K and V), with `queries`
/// query rows (0: every token), which are the Q rows of tokens tokens - rows .. tokens - 1.
std::vector<float> encoder_attention_prefix(Encoder& enc, DType dt, const AttentionCase& c, const AttentionData& x,
                                            std::size_t tokens, int queries, std::string& failure);

/// T5's bucket of each distance p_j - p_i, with the neighbouring one where the distance lies on a
/// bucket edge (tol::kT5TieWindow: an fp32 log may land there), formed once per distance: the bias
/// depends on nothing else.
class T5BucketsByDistance {
 public:
  explicit T5BucketsByDistance(const T5Spec& s) : spec_(s) {}
  const ref::T5Bucket& operator()(std::int64_t rel) {
    const auto [at, fresh] = cache_.try_emplace(rel);
    if (fresh) at->second = ref::t5_bucket<double>(spec_, rel, tol::kT5TieWindow);
    return at->second;
  }

 private:
  T5Spec spec_;
  std::unordered_map<std::int64_t, ref::T5Bucket> cache_;
};

/// T5 inside attention: where a query row's keys lie at a bucket edge (T5BucketsByDistance's
/// alternative), every choice of bucket at each such distance gives a correct output. Each
/// (query row, head) whose nearest such output, to `out`, is not the exact buckets' gets that
/// output (in double) in `expected` and `err` (out less it). Rows with more than 8 edge distances
/// keep the exact buckets. Nothing changes without T5.
void accept_t5_edges(const AttentionCase& c, const AttentionData& x, const std::vector<float>& out,
                     std::vector<double>& expected, std::vector<double>& err);

/// The encoder's `out` less the exact output, in double, and the exact output in `expected`:
/// from the 50-digit reference for cases of up to kOracleMinN tokens, from the double oracle
/// (within AttentionBound::oracle_u of the exact output, which the caller charges to its bound)
/// for longer ones; with T5 inside, either bucket at an edge (accept_t5_edges).
std::vector<double> errors_from_exact(const AttentionCase& c, const AttentionData& x, const std::vector<float>& out,
                                      std::vector<double>& expected);

/// The case's output against the exact one, within the case's bound (attention_bound, plus the
/// oracle's own for a long case): attention.agrees_with_reference's check, and
/// attention.tile_edges's, whose failure line says which key tile the query reached. Under
/// params.contract.
Outcome agreement_with_exact(Encoder& enc, DType dt, const AttentionCase& c, const RunParams& params);

/// A permutation of 0..n-1 from a seed (Fisher-Yates on splitmix64: the same on every platform).
std::vector<std::size_t> permutation(std::size_t n, std::uint32_t seed);

/// Token rows of x (n, width) reordered: row i of the result is row perm[i] of x.
std::vector<float> permute_rows(const std::vector<float>& x, const std::vector<std::size_t>& perm, std::size_t width);

/// max |a - b| over all entries, divided by u * scale.
double max_abs_diff_u(const std::vector<float>& a, const std::vector<float>& b, DType dt, double scale,
                      std::string* where);

}  // namespace pecheck::props

namespace pecheck {
// The case type erased once, in properties/attention/attention_cases.cpp (see erased() in harness/runner.hpp).
extern template rc::Gen<AnyCase> erased(rc::Gen<props::AttentionCase>);
}  // namespace pecheck
