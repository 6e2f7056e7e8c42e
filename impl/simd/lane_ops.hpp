// The one-line lane operations every width trait has, written once over an intrinsic prefix
// (_mm256, _mm512) and a lane suffix (ps, pd): a width's trait (impl/avx2/simd.hpp,
// impl/avx512/simd.hpp) spells out only the operations whose instructions differ in more than
// their width. No intrinsics here: the macro expands inside a unit built for the width.
#pragma once

/// A vector type's names: W lanes in the register R, its bits as the integer register I, and a lane
/// mask M (a compare's result: a register or an opmask). A macro, not a base template: GCC drops
/// the vector types' alignment attributes from template arguments (-Wignored-attributes).
#define PECHECK_SIMD_LANE_TYPES(Lanes, Register, Integers, Mask) \
  static constexpr std::size_t W = Lanes;                        \
  using R = Register;                                            \
  using I = Integers;                                            \
  using M = Mask;

/// Vector R of E lanes: unaligned load and store, broadcast, zero, arithmetic, fused
/// multiply-adds (one rounding), min and max (the second operand when either is NaN), bitwise xor.
#define PECHECK_SIMD_LANE_OPS(R, E, P, S)                            \
  static R load(const E* p) { return P##_loadu_##S(p); }             \
  static void store(E* p, R v) { P##_storeu_##S(p, v); }             \
  static R set1(E x) { return P##_set1_##S(x); }                     \
  static R zero() { return P##_setzero_##S(); }                      \
  static R add(R a, R b) { return P##_add_##S(a, b); }               \
  static R sub(R a, R b) { return P##_sub_##S(a, b); }               \
  static R mul(R a, R b) { return P##_mul_##S(a, b); }               \
  static R div(R a, R b) { return P##_div_##S(a, b); }               \
  static R fmadd(R a, R b, R c) { return P##_fmadd_##S(a, b, c); }   \
  static R fmsub(R a, R b, R c) { return P##_fmsub_##S(a, b, c); }   \
  static R fnmadd(R a, R b, R c) { return P##_fnmadd_##S(a, b, c); } \
  static R min(R a, R b) { return P##_min_##S(a, b); }               \
  static R max(R a, R b) { return P##_max_##S(a, b); }               \
  static R xor_(R a, R b) { return P##_xor_##S(a, b); }

/// Float vectors R of a B-bit register besides: the sign bit of every lane (a function, not a
/// namespace-scope constant: a static initializer would run the width's instructions at program
/// start, on CPUs without them too), each lane's pair partner (x1 x0 x3 x2 ...), and 2^k for
/// integral k in [-126, 127], built in the exponent field.
#define PECHECK_SIMD_FLOAT_OPS(R, P, B)                                                                    \
  static R sign_bits() { return P##_set1_ps(-0.0f); }                                                      \
  static R swap_pairs(R x) { return P##_permute_ps(x, 0b10110001); }                                       \
  static R pow2(R k) {                                                                                     \
    return P##_castsi##B##_ps(P##_slli_epi32(P##_add_epi32(P##_cvtps_epi32(k), P##_set1_epi32(127)), 23)); \
  }
