// The one tolerance table. Every bound a property compares with is computed here, each from the
// derivation in docs/error-model.md; none was tuned until green.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "spec/dtype.hpp"

namespace pecheck::tol {

/// Position contract E: a sinusoidal entry within E u of exact, a RoPE pair within E u |x_p|
/// (normwise). 2u = the final rounding (0.5u absolute for |pe| < 1, 1u relative for a pair)
/// plus at least 1u for the angle and sin/cos: met by angles formed in double precision from a
/// frequency good to ~16 double ulps, for every position below 2^24.
inline constexpr double kPositionContract = 2.0;
/// double's unit roundoff: what a sum or product formed in double (the laws' own dot products) errs by.
inline constexpr double kU64 = 0x1p-53;

/// Largest position the position contract covers.
inline constexpr std::int64_t kMaxPosition = (std::int64_t{1} << 24) - 1;

double sinusoidal_entry(DType);                            ///< |pe - pe_ref| / u
double sinusoidal_shift(DType);                            ///< |w(p+k) conj w(p) - w(q+k) conj w(q)| / u
double sinusoidal_gram(DType, int d_model);                ///< |PE(p).PE(q) - PE(p+t).PE(q+t)| / u
double sinusoidal_norm(DType, int d_model);                ///< ||PE(p)|^2 - d/2| / u
double sinusoidal_distance(DType, int d_model);            ///< (delta_L - min |PE(p) - PE(q)|)+ / u
double sinusoidal_distance_in_double(DType, int d_model);  ///< its share for the distance formed in double
double rope_pair(DType);                                   ///< per pair, / (u max(|x_p|, min_normal))

/// Accuracy contracts beside the exact one: what the arithmetic real kernels use guarantees. Two
/// govern position encodings (a RoPE pair, a table entry, in their metrics: docs/error-model.md,
/// rope.pair.dtype_trig and rope.pair.fp32_angles), exact the strongest, fp32 angles the weakest;
/// one governs attention's softmax probabilities (rounded_p: P rounded to the storage dtype before
/// P.V, attention.output.rounded_p), and attention takes the other two for its RoPE on top of it.
/// A position encoding's bound reads rounded_p as exact (harness/contract_ladder.hpp says which
/// governs which operation).
enum class Contract { exact, dtype_trig, fp32_angles, rounded_p };
std::string_view contract_name(Contract);  ///< "exact", "dtype-trig", "fp32-angles", "rounded-p"
/// cos and sin stored in the dtype and the rotation computed in it (HF's bf16/f16 caches).
double rope_pair_dtype_trig(DType);
/// The fp32-angles contract's angle error, in u32 radians: the frequency base^(-2p/d) formed in
/// fp32 (its exponent from up to two roundings, the power from up to two more of the same size, as
/// exp(e ln b) is: 4 `exponent` u32; pow's or exp's own, a reciprocal, a scaling rule: 4 u32), then
/// the product with the position (u32). `turned` = |pos w_p| in radians, `exponent` = |(2p/d) ln b|.
double fp32_angle_error(double turned, double exponent);
/// Frequencies formed, multiplied by the position and turned into cos/sin in fp32, then as
/// dtype_trig: dtype_trig + fp32_angle_error u32/u. Grows with the position.
double rope_pair_fp32_angles(DType, double turned, double exponent);
/// The bound of `c` for a pair at those values (exact and dtype_trig ignore them).
double rope_pair_contract(Contract c, DType, double turned, double exponent);
/// The largest position (a power of two, at most kMaxPosition + 1) below which the relational laws
/// (rope.relative, rope.composition, rope.offset_invariance) are judged under contract c: there
/// the four calls' bounds on the fastest pair (frequency 1) stay within 1/u, so that every drawn
/// case has a bound some output could exceed. 0: the contract's bounds do not grow with the
/// position (exact, dtype-trig), every position is judged.
std::int64_t rope_law_ceiling(Contract c, DType);
/// The largest position (a power of two) below which attention cases are drawn under contract c:
/// where the fastest pair's fp32 angle may be off by at most kAttentionAngleMargin radians, so that
/// the logits' error, a few times that times scale |q||k|, leaves most cases a bound some output
/// could exceed (docs/error-model.md, attention.output.rope_contract). 0: no ceiling (every
/// contract but fp32_angles).
std::int64_t attention_rope_ceiling(Contract c);
inline constexpr double kAttentionAngleMargin = 0x1p-10;
/// The same contracts for a sinusoid table entry, in the sinusoidal.entry metric: sin and cos from
/// fp32 stored in the dtype (dtype_trig), and an angle formed in fp32 as RoPE's (fp32_angles;
/// `angle` = |pos w_i|, `exponent` = |(2i/w) ln(base)|). docs/error-model.md sinusoidal.entry.*.
double sinusoidal_entry_contract(Contract c, DType, double angle, double exponent);
double rope_relative(DType, int head_dim);  ///< score difference / (u |q| |k|)
double rope_composition(DType);             ///< per pair, / (u max(|x_p|, min_normal))
/// |R_-m(R_m x) - x|_p / (u max(|x_p|, min_normal)), each rotation within E u |x_p| (the position
/// contract, or a weaker contract's bound: docs/properties/rope.inverse.md)
double rope_inverse(DType, double E = kPositionContract);
double two_results(DType);               ///< two results each within E of one exact value: 2E
double rope_base_law(DType);             ///< two RoPE results, one at a base rounded to double
double rope_base_rounding(DType);        ///< rope_base_law's share for that rounding (any contract)
double rope_angle(DType);                ///< |angle(R_P e) - allowed| / u, e a unit pair
double learned_add(DType);               ///< / (u max(|y_ref|, min_normal))
double alibi_bias(DType);                ///< / (u max(|b_ref|, min_normal))
double shaw_score(DType, int head_dim);  ///< / (u sum_c |q_c| (|k_c| + |r_c|))

/// T5 buckets: where the exact log coordinate of a distance lies within this of an integer, an
/// implementation that takes the log in fp32 (HF, Mesh TensorFlow) may land in the neighbouring
/// bucket; both are accepted there and nowhere else. fp32 log, division and product err by 4-5 u32
/// relative, so |dt| <= ~2^-15 for the bucket counts models use; the window is 6-8x that
/// (docs/error-model.md, t5.bucket).
inline constexpr double kT5TieWindow = 0x1p-12;

/// What the attention bound needs to know about one case: the magnitudes measured on its exact
/// transformed inputs (the case itself is properties/attention/attention_cases.hpp's AttentionCase).
struct AttentionMagnitudes {
  DType dtype = DType::f32;
  int n = 1;           ///< sequence length
  int dot_length = 1;  ///< head_dim, or 2 head_dim with Shaw's q.r term
  int head_dim = 1;
  double scale = 1;          ///< softmax scale
  double max_weighted = 0;   ///< max over unmasked (i,j) of scale-free |q_i||k_j| (+ |q_i||r_ij|)
  double max_transform = 0;  ///< max over (i,j) of dQ_i |k_j| + |q_i| dK_j, in u32 (PE on Q/K)
  double max_bias = 0;       ///< max |ALiBi bias|
  double max_v = 1;          ///< max |V'| over the tensor (the metric's scale)
  double v_transform = 0;    ///< max per-component error of V' (PE added to V), in u32
};

/// |o - o_ref|_inf / (u max|V'|) for one attention case: the exact contract, which requires the
/// softmax probabilities P in fp32 (or wider) where they meet V.
double attention_output(const AttentionMagnitudes&);
/// The same for a kernel that rounds P to `p_dtype` before P.V (FlashAttention-2's bf16 path):
/// the rounded-P contract, attention_output + u_P/u (docs/error-model.md, attention.output.rounded_p).
double attention_output_rounded_p(const AttentionMagnitudes&, DType p_dtype);

/// The double oracle: |o_f64 - o_ref|_inf / (u64 max|V'|) for pecheck's reference run in double
/// (ref::attention<double>, two-pass softmax) on inputs exact in double, the case's max_transform
/// and v_transform then in u64 (docs/error-model.md, attention.oracle_f64). Long cases compare
/// with it instead of the 50-digit reference: the check's bound is attention_output plus this,
/// converted to u.
double attention_oracle_f64(const AttentionMagnitudes&);

/// One row of the table, for docs and `pecheck list`.
struct Entry {
  std::string_view id, metric, formula, reason;
};
const std::vector<Entry>& table();

}  // namespace pecheck::tol
