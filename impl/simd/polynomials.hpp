// The constants of the vector kernels' sin/cos (double) and exp (float) (impl/simd/math.hpp):
// every width evaluates the same polynomials in the same order, so their results are the same bit
// for bit (tests/avx512_agreement_test.cpp relies on it). Data only: no code.
#pragma once

namespace pecheck::simd::poly {

/// Reduction by k pi/2: 2/pi, and pi/2 split as 29 bits (k P1 exact for |k| < 2^24) + the rest.
inline constexpr double kTwoOverPi = 0x1.45f306dc9c883p-1, kHalfPi1 = 0x1.921fb54p+0, kHalfPi2 = 0x1.10b4611a62633p-30;
/// sin r = r + r^3 (Horner in r^2 over these, highest first: r^13 / 13! .. -1/3!).
inline constexpr double kSin[] = {1.0 / 6227020800.0, -1.0 / 39916800.0, 1.0 / 362880.0,
                                  -1.0 / 5040.0,      1.0 / 120.0,       -1.0 / 6.0};
/// cos r (Horner in r^2 over these, highest first: r^14 / 14! .. 1).
inline constexpr double kCos[] = {
    -1.0 / 87178291200.0, 1.0 / 479001600.0, -1.0 / 3628800.0, 1.0 / 40320.0, -1.0 / 720.0, 1.0 / 24.0, -0.5, 1.0};

/// e^x = 2^k e^r: log2 e, and ln 2 split as 16 bits (k ln2_1 exact) + the rest.
inline constexpr float kLog2e = 0x1.715476p+0f, kLn2_1 = 0x1.62e4p-1f, kLn2_2 = 0x1.7f7d1cp-20f;
/// e^r (Horner in r over these, highest first: 1/7! .. 1).
inline constexpr float kExp[] = {1.0f / 5040, 1.0f / 720, 1.0f / 120, 1.0f / 24, 1.0f / 6, 0.5f, 1.0f, 1.0f};

}  // namespace pecheck::simd::poly
