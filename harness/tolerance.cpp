#include "harness/tolerance.hpp"

#include <cmath>

namespace pecheck::tol {

namespace {
constexpr double kU32 = 0x1p-24;
/// u32 / u: fp32 arithmetic error expressed in units of the storage dtype.
double fp32_in(DType t) { return kU32 / unit_roundoff(t); }
}  // namespace

double sinusoidal_entry(DType) { return kPositionContract; }

double sinusoidal_shift(DType t) {
  const double E = kPositionContract, u = unit_roundoff(t);
  return 4 * std::sqrt(2.0) * E + 4 * E * E * u;
}

double sinusoidal_gram(DType t, int d) {
  const double E = kPositionContract, u = unit_roundoff(t);
  return 2 * std::sqrt(2.0) * E * d + 2 * E * E * u * d + 2 * d * kU64 / u;
}

double sinusoidal_norm(DType t, int d) {
  const double E = kPositionContract, u = unit_roundoff(t);
  return std::sqrt(2.0) * E * d + E * E * u * d + d * kU64 / u;
}

double sinusoidal_distance_in_double(DType t, int d) { return d * std::sqrt(2.0 * d) * kU64 / unit_roundoff(t); }

double sinusoidal_distance(DType t, int d) {
  // Each entry within E u, so a difference of two rows within 2 E u per entry, 2 E u sqrt(d) in
  // norm; the distance formed in double errs by at most (d/2 + 2) sqrt(2d) u64 (a recursive sum of
  // d rounded squares, then a root; sqrt(2d) the largest distance), charged as d sqrt(2d) u64.
  return 2 * kPositionContract * std::sqrt(double(d)) + sinusoidal_distance_in_double(t, d);
}

double rope_pair(DType) { return kPositionContract; }

std::string_view contract_name(Contract c) {
  switch (c) {
    case Contract::exact:
      return "exact";
    case Contract::dtype_trig:
      return "dtype-trig";
    case Contract::fp32_angles:
      return "fp32-angles";
    case Contract::rounded_p:
      return "rounded-p";
  }
  return "?";
}

double rope_pair_dtype_trig(DType t) {
  // cos, sin rounded to the dtype (sqrt(2) u |x_p|), the two products (sqrt(2) u (1 + u) |x_p|,
  // each of a rounded factor), the sum (u |y_p|, and u of the errors before it), and cos/sin
  // themselves from fp32 (2 u32 |x_p|, through the same (1 + u)^2): the second-order terms kept,
  // about 4.2 u^2 relative, 0.017 u in bf16.
  const double u = unit_roundoff(t);
  return 1 + std::sqrt(2.0) * (2 + 3 * u + u * u) + 2 * unit_roundoff(DType::f32) / u * (1 + u) * (1 + u);
}

double fp32_angle_error(double turned, double exponent) {
  // A relative error r on the exponent e moves b^(-e) by |e ln b| r: the exponent 2p/d is one
  // division, or two roundings where a compiler multiplies by 1/d (XLA does); exp(e ln b) adds ln b's
  // and the product's roundings (XLA's pow, fairseq's exp(-i ln(b)/(h-1))). Each is u32 relative.
  return turned * (4 * exponent + 5);
}

double rope_pair_fp32_angles(DType t, double turned, double exponent) {
  // The angle within fp32_angle_error u32 radians moves the pair by that times |x_p|.
  return rope_pair_dtype_trig(t) + fp32_angle_error(turned, exponent) * unit_roundoff(DType::f32) / unit_roundoff(t);
}

double rope_pair_contract(Contract c, DType t, double turned, double exponent) {
  switch (c) {
    case Contract::exact:
    case Contract::rounded_p:  // governs attention's P, not a rotation
      return rope_pair(t);
    case Contract::dtype_trig:
      return rope_pair_dtype_trig(t);
    case Contract::fp32_angles:
      return rope_pair_fp32_angles(t, turned, exponent);
  }
  return rope_pair(t);
}

std::int64_t rope_law_ceiling(Contract c, DType t) {
  if (c != Contract::fp32_angles) return 0;
  std::int64_t p = kMaxPosition + 1;
  while (p > 1 && 4 * rope_pair_fp32_angles(t, static_cast<double>(p), 0) > 1 / unit_roundoff(t)) p /= 2;
  return p;
}

std::int64_t attention_rope_ceiling(Contract c) {
  if (c != Contract::fp32_angles) return 0;
  // rope.pair.fp32_angles' angle term at the fastest pair (frequency 1, exponent 0).
  std::int64_t p = kMaxPosition + 1;
  while (p > 1 && fp32_angle_error(static_cast<double>(p), 0) * unit_roundoff(DType::f32) > kAttentionAngleMargin)
    p /= 2;
  return p;
}

double sinusoidal_entry_contract(Contract c, DType t, double angle, double exponent) {
  // dtype_trig: sin/cos from fp32 (2 u32 absolute, entries within [-1, 1]) on top of E; fp32 angles:
  // the angle within fp32_angle_error u32 radians (as rope.pair.fp32_angles), |sin'| <= 1.
  const double u32 = unit_roundoff(DType::f32) / unit_roundoff(t);
  switch (c) {
    case Contract::exact:
    case Contract::rounded_p:  // governs attention's P, not a table
      return sinusoidal_entry(t);
    case Contract::dtype_trig:
      return sinusoidal_entry(t) + 2 * u32;
    case Contract::fp32_angles:
      return sinusoidal_entry(t) + 2 * u32 + fp32_angle_error(angle, exponent) * u32;
  }
  return sinusoidal_entry(t);
}

double rope_relative(DType t, int head_dim) {
  const double E = kPositionContract, u = unit_roundoff(t);
  return 4 * E + 2 * E * E * u + 2 * head_dim * kU64 / u;
}

double rope_composition(DType t) {
  const double E = kPositionContract;
  return 3 * E + E * E * unit_roundoff(t);
}

double rope_inverse(DType t, double E) { return 2 * E + E * E * unit_roundoff(t); }

double two_results(DType) { return 2 * kPositionContract; }

double rope_base_rounding(DType t) {
  // The equivalent base b' reaches the encoder rounded to double (|db'/b'| <= 2 u64 with the
  // long-double product); the angle P b'^(-2p/d) then moves by at most P * 2 u64 < 2^24 * 2 u64.
  return double(kMaxPosition + 1) * 2 * kU64 / unit_roundoff(t);
}

double rope_base_law(DType t) { return 2 * kPositionContract + rope_base_rounding(t); }

double rope_angle(DType t) {
  // A unit pair rotated within E u (normwise) has its angle within asin(E u) <= E u (1 + (E u)^2);
  // the allowed interval is computed in long double (negligible).
  const double eu = kPositionContract * unit_roundoff(t);
  return kPositionContract * (1 + eu * eu);
}

/// One rounding (1u relative) after an intermediate rounding: fp32 for bf16/f16 storage, double
/// (u64 = 2^-29 u32) for f32 storage.
double learned_add(DType t) { return 1 + (t == DType::f32 ? kU64 / kU32 : fp32_in(t)); }

double alibi_bias(DType t) { return 1 + 3 * fp32_in(t); }

double shaw_score(DType t, int head_dim) { return 1 + (2 * head_dim + 1) * fp32_in(t); }

double attention_output(const AttentionMagnitudes& c) {
  const double rho = unit_roundoff(c.dtype) / kU32;
  // Logit error in u32: dot products of length L in fp32 plus the scale multiply, the error of
  // the position transform of Q and K, and the ALiBi bias (slope 2u, product u, add u). The add
  // rounds relative to |scale S + b| <= scale W + B: the scale W part is charged where a bias is.
  const double add = c.max_bias > 0 ? c.scale * c.max_weighted : 0.0;
  const double logit = c.scale * ((c.dot_length + 2) * c.max_weighted + c.max_transform) + 4 * c.max_bias + add;
  // A logit perturbation delta moves softmax weights by at most expm1(2 delta) in l1 norm.
  const double weights = std::expm1(2 * logit * kU32) / kU32;
  // Exponent arguments s_j - m rounded (relative error u|s_j - m| of each weight; since
  // sum_j p_j |s_j - m| <= n/e, the weights move by at most 2n/e u in l1), exp (2u) and division
  // (1u), the two length-n sums (n each), and up to n rescalings of an online softmax, 3 each:
  // the exp of the correction (2u on the weights seen so far, which moves o by half of that) and
  // the two multiplies of the accumulator and of the running sum by it (1u each).
  const double softmax = 2 * c.n / std::exp(1.0) + 3 + 2.0 * c.n + 3.0 * c.n;
  const double values = c.v_transform / c.max_v;
  return 1 + (weights + softmax + values) / rho;
}

double attention_output_rounded_p(const AttentionMagnitudes& c, DType p_dtype) {
  // Each weight of P.V rounded to p_dtype: a relative u_P that differs from weight to weight. It
  // moves o by sum_j p_j e_j v'_j (the running sum l, kept in fp32, is not rounded) or, if l is
  // summed from the rounded P too, by sum_j p_j e_j (v'_j - o): at most u_P max|V'| either way.
  return attention_output(c) + unit_roundoff(p_dtype) / unit_roundoff(c.dtype);
}

double attention_oracle_f64(const AttentionMagnitudes& c) {
  // As attention_output, in double arithmetic: the dot products (gamma_L), 1/sqrt(d) and its
  // multiply (3, for sqrt, the division and the product), the transform T (in u64), ALiBi's slope
  // from pow (4), its product and add (2), and the add's rounding relative to the logit.
  const double add = c.max_bias > 0 ? c.scale * c.max_weighted : 0.0;
  const double logit = c.scale * ((c.dot_length + 3) * c.max_weighted + c.max_transform) + 6 * c.max_bias + add;
  const double weights = std::expm1(2 * logit * kU64) / kU64;
  // Two-pass softmax: the rounded arguments (2n/e), exp and the division (3), the two length-n
  // sums (2n); no rescaling. The output stays in double: its one rounding is the difference the
  // check forms (1).
  const double softmax = 2 * c.n / std::exp(1.0) + 3 + 2.0 * c.n;
  return 1 + weights + softmax + c.v_transform / c.max_v;
}

const std::vector<Entry>& table() {
  static const std::vector<Entry> t = {
      {"sinusoidal.entry", "|pe - pe_ref| / u", "E = 2",
       "final rounding 0.5u + angle/sin budget 1.5u (double angles, pos < 2^24)"},
      {"sinusoidal.entry.dtype_trig", "as sinusoidal.entry (the dtype-trig contract)", "E + 2 u32/u",
       "sin and cos from fp32 (2 u32 absolute), then as sinusoidal.entry"},
      {"sinusoidal.entry.fp32_angles", "as sinusoidal.entry (the fp32-angles contract)",
       "dtype_trig + |pos w_i| (4 |2i/w ln b| + 5) u32/u",
       "frequency and angle formed in fp32 as rope.pair.fp32_angles, |d sin/d angle| <= 1"},
      {"sinusoidal.shift", "|w(p+k) w*(p) - w(q+k) w*(q)| / u", "4 sqrt(2) E + 4 E^2 u",
       "four unit complex numbers, each within sqrt(2) E u"},
      {"sinusoidal.gram", "|PE(p).PE(q) - PE(p+t).PE(q+t)| / u", "2 sqrt(2) E d + 2 E^2 u d + 2 d u64/u",
       "two dot products of d entries within E u, |PE| = sqrt(d/2)"},
      {"sinusoidal.norm", "||PE(p)|^2 - d/2| / u", "sqrt(2) E d + E^2 u d + d u64/u",
       "2 PE.dPE + |dPE|^2 with |dPE| <= E u sqrt(d)"},
      {"sinusoidal.distance", "(delta_L - min_(p!=q) |PE(p) - PE(q)|)+ / u", "2 E sqrt(d) + d sqrt(2d) u64/u",
       "a difference of two rows within 2 E u per entry"},
      {"rope.pair", "|y_p - y_ref,p| / (u max(|x_p|, min_normal))", "E = 2",
       "final rounding 1u relative + angle budget 1u (double angles, pos < 2^24)"},
      {"rope.pair.dtype_trig", "as rope.pair (the dtype-trig contract)",
       "1 + sqrt(2) (2 + 3u + u^2) + 2 (u32/u) (1 + u)^2",
       "cos/sin from fp32 rounded to the dtype, two products and a sum rounded in it"},
      {"rope.pair.fp32_angles", "as rope.pair (the fp32-angles contract)",
       "dtype_trig + |pos w_p| (4 |2p/d ln b| + 5) u32/u",
       "frequency formed in fp32 (exponent rounding, pow, reciprocal, scaling), fp32 product with the position"},
      {"rope.relative", "|<R_m q, R_n k> - <R_m+t q, R_n+t k>| / (u |q||k|)", "4 E + 2 E^2 u + 2 d u64/u",
       "each score within (2E + E^2 u) u |q||k|; scores summed in double"},
      {"rope.composition", "|R_b(R_a x) - R_a+b x|_p / (u max(|x_p|, min_normal))", "3 E + E^2 u",
       "two rotations on the left, one on the right, each within E u |x_p|"},
      {"rope.inverse", "|R_-m(R_m x) - x|_p / (u max(|x_p|, min_normal))", "2 E + E^2 u",
       "two rotations, each within E u |x_p|; x itself is exact"},
      {"layout.pair", "|a - P b| per entry or pair, in the unit of the agreement metric", "2 E",
       "two results of one exact value (two layouts, or two calls), each within E"},
      {"rope.base_law", "per pair, as rope.pair, between two encoder results", "2 E + 2^24 * 2 u64/u",
       "two results within E of R_m; the equivalent base rounded to double moves angles by <= P 2 u64"},
      {"rope.angle", "|atan2(y_b, y_a) - allowed angle| / u for a unit pair", "E (1 + (E u)^2)",
       "a pair within E u of the exact one has its angle within asin(E u)"},
      {"t5.bucket", "out[h,i,j] == table[bucket(p_j - p_i), h] bitwise", "exact; 2^-12 tie window",
       "a gather; the neighbouring bucket is accepted only where the exact log coordinate is within 2^-12 of an "
       "integer (fp32 log)"},
      {"relative_bias_2d.entry", "out[h,i,j] == table[row(offset(i, j)), h] bitwise", "exact",
       "a gather of table entries already in the storage dtype: nothing rounds"},
      {"learned.add", "|y - y_ref| / (u max(|y_ref|, min_normal))", "1 + u32/u (1 + u64/u32 for f32)",
       "one rounding (1u relative), double rounding through fp32 (or double for f32)"},
      {"alibi.bias", "|b - b_ref| / (u max(|b_ref|, min_normal))", "1 + 3 u32/u",
       "slope to 1 fp32 ulp (2u32), product (u32), rounding to storage (1u)"},
      {"shaw.score", "|s - s_ref| / (u sum |q|(|k| + |r|))", "1 + (2d + 1) u32/u",
       "a length-2d fp32 dot product (gamma_2d), rounding to storage"},
      {"attention.output", "|o - o_ref|_inf / (u max|V'|)",
       "1 + [expm1(2 delta u32)/u32 + 2n/e + 3 + 5n + dV/max|V'|] u32/u",
       "logit error delta -> softmax weights; exp/sum/division; online rescaling; see error-model"},
      {"attention.output.rounded_p", "as attention.output (P rounded to a dtype P before P.V)",
       "attention.output + u_P/u", "each weight of P.V off by u_P relative, not uniformly: o moves by <= u_P max|V'|"},
      {"attention.output.rope_contract", "as attention.output (its RoPE under dtype-trig or fp32-angles)",
       "attention.output.rounded_p, T with E_i = max(E, max_p rope.pair.<contract>(pos_i, p))",
       "each token's rotation within its pairs' largest contract bound, normwise; below position 2048 under "
       "fp32-angles"},
      {"attention.oracle_f64", "|o_f64 - o_ref|_inf / (u64 max|V'|)",
       "1 + expm1(2 delta64 u64)/u64 + 2n/e + 3 + 2n + dV64/max|V'|",
       "the reference in double for long cases: attention.output's steps in u64, two-pass; added to it as u64/u"},
  };
  return t;
}

}  // namespace pecheck::tol
